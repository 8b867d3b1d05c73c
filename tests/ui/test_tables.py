"""ui/tables.py: a shared frame's Arrow table, built once, is what Streamlit would send."""

from __future__ import annotations

import numpy as np
import pandas as pd
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from ui import tables


def _frames() -> list[pd.DataFrame]:
    rng = np.random.default_rng(5)
    return [
        pd.DataFrame({"site": [1, 2, 3], "ε": rng.random(3), "ok": ["✓", "✗", "✓"]}),
        pd.DataFrame({"x": rng.random(4)}, index=pd.Index(["a", "b", "c", "d"], name="party")),
        pd.DataFrame({"n": np.arange(5, dtype=np.int64), "mixed": [1, "a", 2.5, None, "b"]}),
    ]


def test_the_table_is_streamlits_own_conversion_and_built_once_per_frame():
    for frame in _frames():
        table = tables.arrow(frame)
        # the bytes Streamlit serialises from the table are those it makes of the frame
        assert dataframe_util.convert_arrow_table_to_arrow_bytes(
            table
        ) == dataframe_util.convert_pandas_df_to_arrow_bytes(frame)
        assert tables.arrow(frame) is table  # the same frame: no second conversion
        assert tables.arrow(frame.copy()) is not table  # an equal frame is another object
    assert tables.arrow([1, 2]) == [1, 2]  # not a frame: passed through


def test_a_frame_gone_never_lends_its_table_to_the_next_one_at_its_address():
    # CPython reuses a freed frame's address for the next one: the table is found by the
    # frame's identity, so a new frame at an old address must get its own table
    for i in range(50):
        frame = pd.DataFrame({"i": [i]})
        assert tables.arrow(frame).column("i").to_pylist() == [i]
        del frame  # its id is free for the next frame


def test_a_dataframe_element_carries_the_same_bytes_given_the_table():
    frame = _frames()[1]

    def script(use_table):
        import streamlit as st

        from tests.ui.test_tables import _frames
        from ui.tables import arrow

        data = _frames()[1]
        st.dataframe(arrow(data) if use_table else data, hide_index=False)
        st.table(arrow(data) if use_table else data)

    runs = []
    for use_table in (False, True):
        at = AppTest.from_function(script, args=(use_table,)).run()
        assert not at.exception
        runs.append((at.dataframe[0].proto, at.table[0].proto))
    (frame_plain, table_plain), (frame_given, table_given) = runs
    # the same data (index included), the same column settings, the same static table
    assert frame_plain.arrow_data.data == frame_given.arrow_data.data
    assert frame_plain.columns == frame_given.columns
    assert table_plain.SerializeToString() == table_given.SerializeToString()
    assert frame.index.name == "party"


def _table_script(frame_index, shared):
    import streamlit as st
    from streamlit import dataframe_util

    from tests.ui.test_tables import _frames
    from ui.tables import table

    data = _frames()[frame_index]
    if not shared:
        st.table(data)
        return
    back = dataframe_util.convert_anything_to_pandas_df

    def refuse(obj, *args, **kwargs):  # the Arrow table must not go back to pandas
        if not isinstance(obj, type(data)):
            raise AssertionError(f"converted back to pandas: {type(obj).__name__}")
        return back(obj, *args, **kwargs)

    dataframe_util.convert_anything_to_pandas_df = refuse
    try:
        table(data)
    finally:
        dataframe_util.convert_anything_to_pandas_df = back


def test_a_shared_table_is_st_tables_own_element_without_a_trip_back_to_pandas():
    # Issue #36 item 4: st.table(arrow(frame)) converted the Arrow table back to pandas on
    # every rerun to decide whether to hide a range index. tables.table decides it on the
    # frame: the element must be byte for byte st.table(frame)'s, index shown or hidden alike.
    for index in range(len(_frames())):  # a range index (hidden), a named one (shown), mixed
        protos = []
        for shared in (False, True):
            at = AppTest.from_function(_table_script, args=(index, shared)).run()
            assert not at.exception, at.exception
            protos.append(at.table[0].proto.SerializeToString())
        assert protos[0] == protos[1], index
