"""A frame as JSON, shared by the frame references (tests/core/experiments/test_frame_hashes.py)
and the on-screen numbers' reference (tests/test_numbers_unchanged.py)."""

from __future__ import annotations

import pandas as pd


def frame_record(df: pd.DataFrame) -> dict:
    """A frame as JSON: columns, dtypes and values (floats written exactly by ``repr``)."""
    columns = {}
    for name in df.columns:
        values = df[name].to_numpy()
        if values.dtype == object:
            columns[name] = [str(v) for v in values]
        else:
            columns[name] = values.tolist()
    return {
        "shape": list(df.shape),
        "dtypes": {str(name): str(df[name].dtype) for name in df.columns},
        "columns": columns,
    }
