"""Shared frames as Streamlit sends them: their Arrow table, converted once (issue #36 item 4).

``st.dataframe(frame)`` and ``st.table(frame)`` convert a pandas frame to an Arrow table on
every rerun (about 1–4 ms a table here, ~8 % of a cached move on the sites-table pages,
docs/performance.md). Given the Arrow table, Streamlit only serialises it. A frame that
every session shares and nobody changes — one :func:`figures.memo.built` returned, or a
cached core call's result (:mod:`ui.cached.memo`) — is converted once::

    st.dataframe(arrow(built(views_table, parties, key=view_key)), width="stretch")

The table is the one Streamlit would have made of the frame (its own conversion, index and
column types included), so the screen and the exported bytes are the same. Only frames that
are never changed may pass: the table is found by the frame's identity.

``st.table`` given an Arrow table converts it back to pandas on every call, only to see
whether its index is a plain range to hide (~1 ms a table here); :func:`table` decides that on
the frame and says so (``hide_index``), as ``st.table(frame)`` would.
"""

from __future__ import annotations

import weakref
from typing import Any

import pandas as pd
import streamlit as st
from streamlit import dataframe_util

from figures.memo import MISSING, Shelf

# id(frame) -> (weak reference to the frame, its table): a table never keeps its frame alive,
# and a frame that is gone (its id taken by another) never matches; its table ages out
_TABLES = Shelf(max_entries=256)


def arrow(frame: pd.DataFrame) -> Any:
    """``frame``'s Arrow table as ``st.dataframe`` / ``st.table`` would build it, built once
    per frame object (any other data passes through unchanged)."""
    if type(frame) is not pd.DataFrame:
        return frame
    key = id(frame)
    hit = _TABLES.peek(key)
    if hit is not MISSING and hit[0]() is frame:
        return hit[1]
    table = dataframe_util.convert_pandas_df_to_arrow_table(frame)
    _TABLES.put(key, (weakref.ref(frame), table))
    return table


def table(frame: pd.DataFrame, container: Any = None) -> None:
    """``st.table(frame)`` in ``container`` (default: the page) for a shared, never changed
    frame: its :func:`arrow` table, the index hidden when it is a plain range (as Streamlit
    decides it for a frame) without converting the table back to pandas."""
    (container or st).table(arrow(frame), hide_index=dataframe_util.has_range_index(frame))
