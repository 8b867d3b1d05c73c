"""Cached wrappers for the Learn section: the lessons' and the protocol stepper's numbers."""

from __future__ import annotations

import streamlit as st

from dpcore.protocol_demo import ProtocolDemo, protocol_demo


@st.cache_data(show_spinner=False, max_entries=256)
def protocol_run(sites: int, kind: str, epsilon: float, seed: int) -> ProtocolDemo:
    """:func:`dpcore.protocol_demo.protocol_demo` (δ = 0.01, N_s = 50, analytic), cached."""
    return protocol_demo(sites=sites, kind=kind, epsilon=epsilon, seed=seed)
