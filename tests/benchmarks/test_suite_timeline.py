"""benchmarks/suite_timeline.py: the idle core-seconds it reports are the planted ones, and
its plugin records a real run's tests."""

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks import suite_timeline

ROOT = Path(__file__).resolve().parents[2]


def _stat(busy: int, idle: int) -> str:  # a /proc/stat first line with these tick counts
    return f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\n"


def test_the_report_counts_the_planted_idle_time(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    # 2 cores sampled every 2 s: half busy for 4 s, then all busy for 6 s
    ticks = [(0, 0), (200, 200), (400, 400), (800, 400), (1200, 400), (1600, 400)]
    (tmp_path / "cpu.log").write_text(
        "".join(f"{100 + 2 * i} {_stat(b, i_)}" for i, (b, i_) in enumerate(ticks))
    )
    for worker, test, a, b in (("gw0", "t::a", 100, 104), ("gw1", "t::b", 104, 110)):
        (tmp_path / f"worker-{worker}.jsonl").write_text(
            json.dumps({"ev": "start", "t": a, "id": test}) + "\n"
            + json.dumps({"ev": "end", "t": b, "id": test}) + "\n"
        )  # fmt: skip
    text = suite_timeline.report(tmp_path)
    # span 10 s on 2 cores = 20 core-s; idle 0.5 × 2 × 4 = 4 of them, all while t::a ran
    assert "span 10 s, 2 tests; busy 16 core-s, idle 4 core-s (80% of 2 cores busy)" in text
    assert "workers end at: gw0 4 s, gw1 10 s" in text
    assert "busy by minute: 0:0.80" in text
    rows = text.splitlines()[-2:]
    assert rows[0].split()[:4] == ["2.0", "4.0", "0", "gw0"], rows  # t::a: 4 idle core-s / 2
    assert rows[1].split()[:4] == ["0.0", "6.0", "4", "gw1"], rows


def test_the_plugin_records_each_test_and_samples_the_machine(tmp_path):
    planted = "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
    (tmp_path / "test_planted.py").write_text(planted)
    out = tmp_path / "timeline"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "benchmarks.suite_timeline",
         "-p", "no:cacheprovider", "test_planted.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "CAPE_TIMELINE": str(out), "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    events = [json.loads(line) for line in (out / "worker-main.jsonl").read_text().splitlines()]
    assert [(e["ev"], e["id"].split("::")[1]) for e in events] == [
        ("start", "test_one"), ("end", "test_one"), ("start", "test_two"), ("end", "test_two"),
    ]  # fmt: skip
    assert (out / "cpu.log").read_text().split()[1] == "cpu"  # at least the first sample
