"""CAPE Lab — entry point. Run with `bash run.sh` (or `streamlit run app.py`)."""

import streamlit as st

st.set_page_config(page_title="CAPE Lab", page_icon="🔐", layout="wide")

pages = {
    "Learn": [
        st.Page("pages/overview.py", title="Overview", icon="🏠", default=True),
        st.Page("pages/averaging.py", title="CAPE averaging", icon="➕"),
    ],
    "Experiments": [
        st.Page("pages/pca.py", title="PCA", icon="📈"),
        st.Page("pages/tensor.py", title="Tensor decomposition", icon="🧊"),
    ],
}
st.navigation(pages).run()
