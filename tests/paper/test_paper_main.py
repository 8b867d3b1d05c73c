"""``python -m paper`` (paper/__main__.py): the core's paper CLI with the app's HTML figures,
which it skips with one line when plotly is missing (its CSV and claims need none). The
CLI's own checks, a scheduler it cannot reach included, are the core's:
tests/core/test_cli.py and tests/core/test_paper_cli.py."""

import hashlib
import json
import sys

import dpcore


def test_paper_cli_writes_csv_and_claims_without_plotly(tmp_path, capsys, monkeypatch):
    from paper.__main__ import main

    monkeypatch.setitem(sys.modules, "plotly", None)
    assert main(["--figure", "3a", "--runs", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "plotly" in line]
    assert lines == ["HTML figures skipped: they need plotly: pip install 'cape-lab[app]'"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.csv", "fig3a.csv", "run.json"]
    record = json.loads((tmp_path / "run.json").read_text())
    assert (record["seed"], record["runs"], record["calibration"]) == (0, 1, "classic")
    assert record["version"] == dpcore.__version__ and record["commit"]
    assert (
        record["files"]["fig3a.csv"]
        == hashlib.sha256((tmp_path / "fig3a.csv").read_bytes()).hexdigest()
    )
