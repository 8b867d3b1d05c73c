"""The per-site settings table (N_s, ε_s, δ_s, μ_s): editing, presets and URL encoding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from ui.controls import calibration_radio
from ui.core import call_core
from ui.guard import show_error

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
    message = f"{PARAM} must be rows of 4 numbers 'N,eps,delta,mu' separated by ';'"
    try:  # the message never quotes the link's text
        rows = [[float(x) for x in part.split(",")] for part in text.split(";") if part]
    except ValueError:
        raise ValueError(message) from None
    if not rows or any(len(r) != 4 for r in rows):
        raise ValueError(message)
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
            show_error(err)
            state.site_base = None
        if state.site_base is None:
            state.site_base = default_table(sites)
        state.site_version = 0
    base: pd.DataFrame = state.site_base
    if len(base) != sites:
        if sites < len(base):
            base = base.iloc[:sites].reset_index(drop=True)
        else:
            base = pd.concat([base, default_table(sites - len(base))], ignore_index=True)
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


def site_settings(side) -> tuple[pd.DataFrame, str]:
    """S and calibration in the sidebar, then the per-site table with weight presets.

    Shared by every page that works with per-site (N_s, ε_s, δ_s, μ_s); the table lives in
    the session and in the URL, so it follows the user from page to page.

    Returns
    -------
    table : pandas.DataFrame
        The edited table (weights not yet normalised).
    calibration : str
    """
    sites = side.slider(
        "Sites S",
        2,
        20,
        5,
        key="S",
        bind="query-params",
        help="Number of sites; the table below gets one row per site.",
    )
    calibration = calibration_radio(side)
    st.subheader("Sites")
    base = table_state(sites)
    left, right, _ = st.columns([1, 1, 3])
    left.button(
        "Equal weights",
        key="w_equal",
        on_click=set_weights,
        args=([1.0 / sites] * sites,),
        help="μ_s = 1/S for every site.",
    )
    right.button(
        "Weights ∝ N_s",
        key="w_prop",
        on_click=set_weights,
        args=(list(base["N_s"] / base["N_s"].sum()),),
        help="μ_s = N_s/N: the pooled mean. CAPE then matches a central curator exactly.",
    )
    return editor(base), calibration


SiteArgs = tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...], str]


def site_args(table: pd.DataFrame, calibration: str) -> SiteArgs:
    """Hashable (N_s, ε_s, δ_s, μ_s normalised, calibration) for the cached core wrappers."""
    weights = call_core(dpcore.normalise_weights, table["μ_s"].to_numpy(float))
    if not np.isclose(table["μ_s"].sum(), 1.0):
        st.caption(f"Weights sum to {table['μ_s'].sum():.4g}; they are normalised to sum to 1.")
    return (
        tuple(int(n) for n in table["N_s"]),
        tuple(float(e) for e in table["ε_s"]),
        tuple(float(d) for d in table["δ_s"]),
        tuple(float(w) for w in weights),
        calibration,
    )
