import streamlit as st

st.title("Tensor decomposition")
st.info("Coming in this session.")
