"""The capacity benchmark (issue #26) runs end to end: a short class of two simulated
students on the real server's websocket protocol, and its report has the promised shape."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_two_students_for_a_few_seconds_report_latencies_cpu_and_memory():
    from benchmarks.capacity import measure

    report = measure(students=2, seconds=12, ramp=1, timeout=120)
    assert report["errors"] == 0, report["error details"]
    assert report["students"] == 2
    # each student acts every 3–8 s: in 12 s at least one action each after opening the link
    assert report["interactions"] >= 2
    assert report["interactions"] == report["moves"] + report["page switches"]
    for part in ("interaction", "open the link"):
        row = report[part]
        assert 0 < row["p50 s"] <= row["p95 s"] <= row["max s"]
    assert report["server CPU s"] > 0 and report["server CPU per interaction ms"] > 0
    memory = report["server MiB over time (s, MiB)"]
    assert len(memory) >= 2 and all(mib > 50 for _, mib in memory)
    assert report["machine"] and report["streamlit"]


@pytest.mark.slow
def test_per_page_mode_moves_a_widget_on_every_page():
    from benchmarks.capacity import measure

    report = measure(per_page=True, repeats=2, timeout=120)
    assert report["errors"] == 0, report["error details"]
    rows = report["pages"]
    assert {"pca", "tensor", "privacy"} <= {row["page"] for row in rows}
    for row in rows:
        if row["widget"] is not None:
            assert row["server CPU per cached move ms"] >= 0
