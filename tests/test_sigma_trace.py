"""From a page's controls to its Gaussian σ: how many times, and along how many paths (#51).

A render of a page is traced at the two functions every σ of the core goes through
(``dpcore.mechanisms.calibration._classic_sigma`` and ``_analytic_unit_sigma``, wrapped here;
the analytic one is an lru_cache whose misses alone cost a root finding, but every call is a σ
asked for, so every call is counted). Each call is recorded with its call chain inside the
repository (``module.function`` frames from the page to the mechanism). The test fails when a
render asks for more σ's than the page's sites or grid points need, or reaches the mechanism
along more chains than the page has mechanisms: a second path, or a σ recomputed.

Measured before issue #51 on Repeated releases: 6 chains of 7–10 hops, 30 σ's (6 × 5 sites).
``docs/architecture.md`` quotes the counts this test measures (``-s`` prints them), and the test
fails when the doc's bold counts ("**5 σ along 1 chain of 8 hops**") are not the ones measured.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dpcore.mechanisms import calibration

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.app, pytest.mark.slow]  # a cold render of a page, several seconds


def _chain() -> tuple[str, ...]:
    """The repository's frames from the page's module down, as module.function (the script
    runner, app.py's navigation, Streamlit's cache and the tests left out): the hops."""
    out: list[str] = []
    for frame in traceback.extract_stack()[:-2]:  # drop this helper and the wrapper
        path = Path(frame.filename)
        if ROOT not in path.parents:
            continue
        parts = path.relative_to(ROOT).parts
        if parts[0] in ("tests", ".venv", "node_modules") or parts == ("app.py",):
            continue
        out.append(f"{path.stem}.{frame.name}")
    return tuple(out)


def trace(page: str, monkeypatch) -> tuple[AppTest, list[tuple[str, ...]]]:
    """Render ``page`` cold (no cached result) and record the chain of every σ asked for."""
    calls: list[tuple[str, ...]] = []

    def counted(fn):
        def wrapped(*args):
            calls.append(_chain())
            return fn(*args)

        return wrapped

    monkeypatch.setattr(calibration, "_classic_sigma", counted(calibration._classic_sigma))
    monkeypatch.setattr(
        calibration, "_analytic_unit_sigma", counted(calibration._analytic_unit_sigma)
    )
    st.cache_data.clear()  # and with it the memo (ui/cached/memo.py)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at, calls


def _report(name: str, calls: list[tuple[str, ...]]) -> str:
    chains = sorted(set(calls))
    hops = sorted({len(c) - 1 for c in chains})
    lines = [f"{name}: {len(calls)} σ along {len(chains)} chain(s) of {hops} hops"]
    lines += ["  " + " → ".join(c) for c in chains]
    return "\n".join(lines)


# The doc's bold counts, in its order: Repeated releases, then the PCA page
QUOTED = re.compile(r"\*\*(\d+) σ (?:\([^)]*\) )?along (\d+) chains? of (\d+) hops\*\*")


def _quoted(which: int) -> tuple[int, int, int]:
    """(σ's, chains, hops) of the ``which``-th bold count in docs/architecture.md."""
    text = " ".join((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split())
    found = QUOTED.findall(text)
    assert len(found) == 2, f"docs/architecture.md's bold σ counts: {found}"
    return tuple(int(x) for x in found[which])  # type: ignore[return-value]


def _measured(calls: list[tuple[str, ...]]) -> tuple[int, int, int]:
    chains = set(calls)
    (hops,) = {len(c) - 1 for c in chains}  # one chain, so one length
    return len(calls), len(chains), hops


def test_repeated_releases_computes_each_sites_sigma_once(monkeypatch):
    # the default sites: 5 sites, one τ_s each, through the one Sites record
    _, calls = trace("app_pages/composition.py", monkeypatch)
    print(_report("Repeated releases", calls))
    chains = set(calls)
    assert len(calls) <= 5, _report("Repeated releases", calls)
    assert len(chains) == 1, _report("Repeated releases", calls)
    assert "sites.taus" in next(iter(chains)), chains  # the record's σ, computed once
    assert _quoted(0) == _measured(calls), _report("Repeated releases", calls)


def test_pca_page_computes_each_sigma_once_on_one_path(monkeypatch):
    # the default PCA page sweeps ε over the paper's 9 points with 10 sites: 90 σ, each once,
    # all through the sweep's one per-site τ (its baselines that calibrate their own noise,
    # off by default, would add one chain each)
    _, calls = trace("app_pages/pca.py", monkeypatch)
    print(_report("PCA", calls))
    assert len(set(calls)) == 1, _report("PCA", calls)
    assert len(calls) <= 9 * 10, _report("PCA", calls)
    assert _quoted(1) == _measured(calls), _report("PCA", calls)
