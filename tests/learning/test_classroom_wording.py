"""Wording a class reads (issue 22, item 12): a sum written with each sign once, "—" for a
protocol value not sent yet (not Python's None), and a sentence before Paper figures' "Below:".
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import protocol_demo
from learning.protocol_steps import NOT_SENT, fmt_sum, protocol_steps

ROOT = Path(__file__).resolve().parents[2]
LECTURER_KEY = os.environ["CAPE_LECTURER_KEY"]  # tests/conftest.py


def test_a_sum_writes_each_sign_once():
    assert fmt_sum((np.float64(0.5), False), (np.float64(0.0156), False)) == "0.5000 + 0.0156"
    assert fmt_sum((np.float64(0.5), False), (np.float64(-0.0156), False)) == "0.5000 − 0.0156"
    assert fmt_sum((np.float64(-0.5), False)) == "−0.5000"
    assert fmt_sum((np.float64(0.5), False), (np.float64(3e-17), True)) == "0.5000 + 3.0e-17"
    matrix = np.array([[0.1, -0.2], [-0.2, 0.3]])
    assert fmt_sum((matrix, False), (matrix, False)) == (
        "[[+0.100, -0.200], [-0.200, +0.300]] + [[+0.100, -0.200], [-0.200, +0.300]]"
    )


@pytest.mark.parametrize("kind", ["scalar", "2x2"])
@pytest.mark.parametrize("seed", range(6))
def test_the_cancelling_step_reads_as_arithmetic_and_adds_up(kind, seed):
    demo = protocol_demo(sites=5, kind=kind, seed=seed)
    text = next(s.text for s in protocol_steps(demo) if s.figure == "cancel")
    assert not re.search(r"[+−-] [+−-]", text), text  # "+ +0.0156" in the issue
    if kind == "scalar":  # the written terms add up to the written total (4 decimals each)
        sums = text.split("Σ μ_s G_s = ")[1].split(". ")[0]
        terms, total = sums.split(" = ")
        value = eval(terms.replace("−", "-"))  # our own text: numbers, + and −
        assert value == pytest.approx(float(total.strip("*").replace("−", "-")), abs=2e-4)


def _page(name: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if name == "classroom.py":  # the lecturer's page: with the key (tests/conftest.py)
        at.query_params["lecturer"] = LECTURER_KEY
    return at.switch_page(f"app_pages/{name}")


@pytest.mark.app
def test_the_protocol_table_shows_a_dash_for_values_not_sent_yet():
    at = _page("protocol.py")
    at.query_params.update({"pr_S": "3", "pr_step": "1"})
    at.run()
    assert not at.exception
    ledger = next(d for d in at.dataframe if "E_s" in d.value.columns)
    assert ledger.value["E_s"].isna().all()  # nothing drawn at step 1 ...
    assert ledger.proto.placeholder == NOT_SENT  # ... shown as "—", not "None"
    assert not any("None" in m.value for m in at.markdown)


@pytest.mark.app
def test_paper_figures_reason_is_a_sentence_before_below():
    at = _page("paper_figures.py")
    at.query_params.update({"fig_figure": "2"})
    at.run()
    assert not at.exception
    notes = [c.value for c in at.caption if "Below:" in c.value]
    assert notes, "no panel fell back to a stand-in"
    for note in notes:
        reason = note.split(" Below:")[0]
        assert reason.endswith((".", "!", "?")), note
