"""The per-site settings table (N_s, ε_s, δ_s, μ_s): editing, presets and URL encoding."""

from __future__ import annotations

import pandas as pd
import streamlit as st

COLUMNS = ["N_s", "ε_s", "δ_s", "μ_s"]
PARAM = "sites_table"


def default_table(
    sites: int, n: int = 1000, epsilon: float = 0.5, delta: float = 1e-3
) -> pd.DataFrame:
    """S equal sites with equal weights."""
    return pd.DataFrame(
        {
            "N_s": [n] * sites,
            "ε_s": [epsilon] * sites,
            "δ_s": [delta] * sites,
            "μ_s": [1.0 / sites] * sites,
        }
    )


def encode(table: pd.DataFrame) -> str:
    """Rows as 'N,eps,delta,mu' joined by ';' (for the URL)."""
    return ";".join(",".join(f"{v:g}" for v in row) for row in table[COLUMNS].to_numpy())


def decode(text: str) -> pd.DataFrame:
    """Inverse of :func:`encode`; raises ValueError on a malformed string."""
    rows = [[float(x) for x in part.split(",")] for part in text.split(";") if part]
    if not rows or any(len(r) != 4 for r in rows):
        raise ValueError(f"{PARAM} must be rows of 4 numbers 'N,eps,delta,mu' separated by ';'")
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["N_s"] = table["N_s"].round().astype(int)
    return table


def table_state(sites: int) -> pd.DataFrame:
    """The current base table: from the URL on first load, resized to S sites."""
    state = st.session_state
    if "site_base" not in state:
        try:
            state.site_base = decode(st.query_params[PARAM]) if PARAM in st.query_params else None
        except ValueError as err:
            st.error(str(err))
            state.site_base = None
        if state.site_base is None:
            state.site_base = default_table(sites)
        state.site_version = 0
    base: pd.DataFrame = state.site_base
    if len(base) != sites:
        extra = default_table(max(sites - len(base), 0))
        base = pd.concat([base.iloc[:sites], extra], ignore_index=True)
        state.site_base = base
        state.site_version += 1
    return base


def set_weights(weights) -> None:
    """Replace the μ column (a preset) and reset the editor."""
    base = st.session_state.site_base.copy()
    base["μ_s"] = list(weights)
    st.session_state.site_base = base
    st.session_state.site_version += 1


def editor(base: pd.DataFrame) -> pd.DataFrame:
    """The editable table; returns the edited copy and writes it to the URL."""
    edited = st.data_editor(
        base,
        key=f"site_editor_{st.session_state.site_version}",
        num_rows="fixed",
        hide_index=True,
        column_config={
            "N_s": st.column_config.NumberColumn(
                "N_s",
                min_value=1,
                step=1,
                format="%d",
                help="Samples at the site: noise std ∝ 1/N_s.",
            ),
            "ε_s": st.column_config.NumberColumn(
                "ε_s",
                min_value=0.0001,
                max_value=100.0,
                format="%.4g",
                help="The site's privacy ε: noise std ∝ 1/ε_s.",
            ),
            "δ_s": st.column_config.NumberColumn(
                "δ_s", min_value=1e-12, max_value=0.5, format="%.2e", help="The site's privacy δ."
            ),
            "μ_s": st.column_config.NumberColumn(
                "μ_s",
                min_value=0.0,
                format="%.3f",
                help="Aggregator's weight (normalised to sum 1).",
            ),
        },
        width="stretch",
    )
    st.query_params[PARAM] = encode(edited)
    return edited
