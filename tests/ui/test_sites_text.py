"""A weight typed in "The sites as text" is used, as a μ edit in the table is (issue 22, item 8).

Both inputs follow one rule: a μ that differs from what the field showed switches the
weighting rule to manual; an N_s edit alone keeps "∝ N_s" (which then recomputes μ).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from learning.settings import EQUAL, MANUAL, SIZE
from ui.sites_table import decode, typed_weights

ROOT = Path(__file__).resolve().parents[2]
SIZED = "1000,0.5,0.001,0.2;2000,0.5,0.001,0.4;2000,0.5,0.001,0.4"  # μ ∝ N_s, as shown


def _rows(text: str) -> pd.DataFrame:
    return decode(text)


@pytest.mark.parametrize(
    ("typed", "rule", "expected"),
    [
        ("1000,0.5,0.001,0.5;2000,0.5,0.001,0.4;2000,0.5,0.001,0.4", SIZE, True),  # a μ typed
        ("3000,0.5,0.001,0.2;2000,0.5,0.001,0.4;2000,0.5,0.001,0.4", SIZE, False),  # N_s only
        (SIZED, SIZE, False),  # nothing changed
        # Back/Forward to another table whose weights the rule gives anyway: no switch
        ("1000,0.5,0.001,0.5;1000,0.5,0.001,0.5", SIZE, False),
        ("1000,0.5,0.001,0.5;2000,0.5,0.001,0.4;2000,0.5,0.001,0.4", MANUAL, False),  # already
        ("1000,0.5,0.001,0.2;2000,0.5,0.001,0.4;2000,0.5,0.001,0.4;9,1,0.1,0.3", EQUAL, True),
    ],
)
def test_a_typed_weight_is_recognised(typed, rule, expected):
    assert typed_weights(_rows(typed), _rows(SIZED), rule) is expected


def test_without_the_previous_text_the_rule_decides():
    sized = _rows(SIZED)
    assert not typed_weights(sized, None, SIZE)  # μ = N_s/N exactly
    assert typed_weights(sized, None, EQUAL)  # 0.2, 0.4, 0.4 is not 1/3 each


def _editor_weights(at: AppTest) -> list[float]:
    table = next(d.value for d in at.dataframe if "μ_s" in d.value.columns)
    return [round(float(w), 6) for w in table["μ_s"]]


@pytest.mark.app
def test_text_and_table_edits_of_a_weight_both_switch_the_rule_to_manual():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at = at.switch_page("app_pages/averaging.py").run()
    at.radio(key="avg_weights").set_value("∝ N_s").run()
    field = at.text_input(key="avg_sites")
    # the case: typed 0.5 under ∝ N_s was used as 0.600 (N_s/N) without a word
    text = "1000,0.5,0.001,0.5;1000,0.5,0.001,0.25;1000,0.5,0.001,0.25"
    field.set_value(text).run()
    assert not at.exception and not at.error
    assert at.radio(key="avg_weights").value == MANUAL
    assert _editor_weights(at) == [0.5, 0.25, 0.25]  # what was typed is what is used
    assert at.query_params["avg_weights"] in (MANUAL, [MANUAL])


@pytest.mark.app
def test_an_n_s_typed_as_text_keeps_the_size_rule():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at = at.switch_page("app_pages/averaging.py").run()
    at.radio(key="avg_weights").set_value("∝ N_s").run()
    field = at.text_input(key="avg_sites")
    rows = field.value.split(";")  # five equal sites, μ = 0.2 each
    rows[0] = "5000" + rows[0][rows[0].index(",") :]  # N_s only, its old μ left as it was
    field.set_value(";".join(rows)).run()
    assert at.radio(key="avg_weights").value == SIZE
    assert _editor_weights(at) == [round(5000 / 9000, 6)] + [round(1000 / 9000, 6)] * 4
