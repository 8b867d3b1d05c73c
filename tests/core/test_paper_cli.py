"""The paper CLI in the package (issue #39, item 3): `python -m dpcore paper`, without the app's
figure code; `python -m paper` in a checkout adds the HTML figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpcore import paper_cli

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_cli_says_why_it_draws_no_html(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "plotly" else real(name)
    )
    assert paper_cli.no_html() == (
        None,
        "HTML figures skipped: they need plotly: pip install 'cape-lab[app]'",
    )
    monkeypatch.setattr(importlib.util, "find_spec", real)
    if real("plotly") is not None:  # plotly, but no figures/ in the package
        maker, why = paper_cli.no_html()
        assert maker is None and "python -m paper, a checkout" in why


@pytest.mark.slow
def test_python_m_dpcore_paper_is_the_paper_cli(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "dpcore", "paper", "--figure", "nope"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "nope" in done.stderr  # the paper CLI's own refusal


@pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
def test_the_checkout_cli_passes_its_figure_maker(monkeypatch, tmp_path):
    import paper.__main__ as checkout

    seen = []
    monkeypatch.setattr(paper_cli, "main", lambda argv, html: seen.append(html) or 0)
    monkeypatch.setattr(checkout, "_main", paper_cli.main)
    assert checkout.main(["--figure", "3a"]) == 0 and seen == [checkout.html_maker]
