"""The protocol stepper: one real CAPE run, its numbers checked against dpcore."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import protocol_demo
from learning.protocol_steps import holdings, ledger, protocol_steps

ROOT = Path(__file__).resolve().parents[2]


def test_steps_follow_algorithm_1_and_parties_hold_what_they_were_sent():
    d = protocol_demo(sites=3, seed=0)
    steps = protocol_steps(d)
    assert len(steps) == 3 * 3 + 5
    names = [s.message[2] for s in steps if s.message]
    assert names == ["E_1", "E_2", "E_3", "F_1", "F_2", "F_3", "Â_1", "Â_2", "Â_3"]
    table = holdings(d, steps[-1]).set_index("party")
    assert table.loc["site 2", "received"] == "E_2, F_2"
    assert table.loc["noise generator", "received"] == "—"  # it only sends
    assert table.loc["aggregator", "received"].count("Â_") == 3
    first = ledger(d, steps[0])
    assert first["E_s"].isna().all() and first["a_s"].notna().all()  # nothing drawn yet


@pytest.mark.app
@pytest.mark.parametrize("kind", ["scalar", "2x2"])
def test_page_shows_the_draw_of_its_seed(kind):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).switch_page(
        "app_pages/protocol.py"
    )
    at.query_params.update({"pr_S": "5", "pr_seed": "7", "pr_kind": kind, "pr_step": "20"})
    at.run()
    assert not at.exception and not at.error
    assert any(m.value.startswith("## 20/20") for m in at.markdown)
    shown = next(d.value for d in at.dataframe if "E_s" in d.value.columns)
    sites = shown[shown["site"] != "Σ μ_s ·"]
    # The E's of the displayed draw sum to zero to rounding (equal weights 1/S).
    key = ["entry"] if kind == "2x2" else []
    e_sums = sites.groupby(key)["E_s"].sum() if key else [sites["E_s"].sum()]
    assert np.max(np.abs(e_sums)) <= 1e-12
    # The final aggregate equals the protocol's estimate for that seed.
    truth = protocol_demo(sites=5, kind=kind, epsilon=0.5, seed=7).run.estimate
    total = shown[shown["site"] == "Σ μ_s ·"]["Â_s − F_s"].to_numpy()
    expected = [truth] if kind == "scalar" else [truth[0, 0], truth[0, 1], truth[1, 1]]
    np.testing.assert_allclose(total, expected, rtol=0, atol=1e-15)
    # back, then a new draw: the seed moves on and the numbers change
    at.button(key="step_back").click().run()
    assert any(m.value.startswith("## 19/20") for m in at.markdown)
    at.button(key="pr_seed_bump").click().run()
    assert at.query_params["pr_seed"] in ("8", ["8"])
    again = next(d.value for d in at.dataframe if "E_s" in d.value.columns)
    assert not np.allclose(again["a_s"].to_numpy(), shown["a_s"].to_numpy()[: len(again)])
