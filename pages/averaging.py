import streamlit as st

st.title("CAPE averaging")
st.info("Coming in this session.")
