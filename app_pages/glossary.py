"""Glossary: the terms the pages name, in plain words (content: learning/glossary.py)."""

import streamlit as st

from learning.glossary import GLOSSARY

st.title("Glossary")
st.caption(
    "The terms the pages name, in plain words, with where they appear and where they are "
    "defined. The pages link here under their titles; a link lands on its term."
)
st.markdown(" · ".join(f"[{term.name}](#{term.anchor})" for term in GLOSSARY))
for term in GLOSSARY:
    st.header(term.name, anchor=term.anchor)
    st.markdown(term.words)
    st.caption(f"Where: {term.where}. Source: {term.source}.")
