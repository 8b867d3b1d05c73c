"""The capacity benchmark (issue #26) runs end to end: a short class of two simulated
students on the real server's websocket protocol, and its report has the promised shape."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_two_students_for_a_few_seconds_report_latencies_cpu_and_memory():
    from benchmarks.capacity import measure

    # 20 s: opening the link took up to ~9 s in a loaded full run, and with 12 s one student
    # then had no time left for an action (interactions = 1)
    report = measure(students=2, seconds=20, ramp=1, timeout=120)
    assert report["errors"] == 0, report["error details"]
    assert report["students"] == 2
    # each student acts every 3–8 s: in 20 s at least one action each after opening the link
    assert report["interactions"] >= 2
    assert report["interactions"] == report["moves"] + report["page switches"]
    for part in ("interaction", "open the link"):
        row = report[part]
        assert 0 < row["p50 s"] <= row["p95 s"] <= row["max s"]
    assert report["server CPU s"] > 0 and report["server CPU per interaction ms"] > 0
    memory = report["server MiB over time (s, MiB)"]
    assert len(memory) >= 2 and all(mib > 50 for _, mib in memory)
    assert report["machine"] and report["streamlit"]


# The per-page mode (server CPU per cached move, every page) runs on the warm server of
# tests/app/test_cpu_per_move.py, whose pages are already computed.


@pytest.mark.slow
def test_two_app_processes_behind_the_proxy_share_the_class():
    from deploy.class_server import haproxy_available

    if not haproxy_available():
        pytest.skip("needs HAProxy (apt-get install haproxy)")
    from benchmarks.capacity import measure

    report = measure(processes=2, students=2, seconds=12, ramp=1, timeout=120)
    assert report["errors"] == 0, report["error details"]
    assert report["app processes"] == 2
    # the second student arrives while the first holds a websocket: the other process
    assert report["students per process"] == {"app1": 1, "app2": 1}
    assert report["server CPU s"] > 0 and report["proxy CPU s"] >= 0
    assert all(mib > 100 for _, mib in report["server MiB over time (s, MiB)"])  # two apps


def test_the_comparison_reports_each_layout_against_the_first(monkeypatch):
    import benchmarks.capacity as capacity

    def fake(processes, **options):  # a run whose latencies halve with each process added
        scale = 1 / processes
        return {
            "app processes": processes,
            "students per process": {f"app{i + 1}": 4 // processes for i in range(processes)},
            "interactions": 40,
            "interactions per s": 2.0 * processes,
            "errors": 0,
            "error details": [],
            "interaction": {"p50 s": 0.2 * scale, "p95 s": 1.0 * scale, "max s": 2.0 * scale},
            "open the link": {"p95 s": 1.0},
            "server CPU s": 10.0,
            "server CPU per interaction ms": 50.0,
            "server MiB peak": 300.0 * processes,
            "proxy CPU s": 0.1,
        }

    monkeypatch.setattr(capacity, "measure", fake)
    report = capacity.compare_processes([1, 2], students=4, seconds=10)
    first, second = report["compare"]
    assert "speed-up" not in first
    assert second["speed-up"] == {"p50 s": 2.0, "p95 s": 2.0, "max s": 2.0}
    assert second["throughput ratio"] == 2.0
    assert report["errors"] == 0 and len(report["runs"]) == 2
