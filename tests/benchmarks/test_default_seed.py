"""The default seed gives a typical first picture (issue 22, item 11).

One synthetic pool is drawn per seed, so the numbers above the PCA and tensor charts at the
pages' defaults carry one pool's luck. benchmarks/default_seed.py ranks seeds 0–49 by their
worst robust z-score over those numbers; these tests check that the app's default seed is
within the stated band and that the benchmark reproduces what the pages show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.default_seed import PCA_DEFAULTS, default_view, robust_z, seed_table
from learning.settings import DEFAULT_SEED

ROOT = Path(__file__).resolve().parents[2]
# Every default-view number within one robust σ of its median over 50 seeds (about 68 % of
# seeds meet this per number for normal spread, so all nine together are rare: 2 of the 50
# seeds meet it with the pages' calibration). Seed 30 does (worst |z| 0.85), the most typical
# since the pages open on the exact σ (issue #51); 36, the seed before, sits at 1.83 there
# (tensor CAPE). Seed 0 does not: its tensor local-AGN error sits 1.10 σ from the median.
BAND = 1.0


@pytest.mark.slow
def test_default_seed_numbers_sit_within_one_robust_sigma_of_the_median():
    table = seed_table()  # seeds 0–49, ~0.4 s each
    z = robust_z(table)
    worst = z.loc[DEFAULT_SEED].abs()
    assert (worst <= BAND).all(), worst[worst > BAND].to_dict()
    # and the band is no formality: most seeds, seed 0 among them, have a number outside it
    outside = z.abs().max(axis=1) > BAND
    assert outside.loc[0] and outside.mean() > 0.5, outside.mean()


@pytest.mark.app
@pytest.mark.slow
@pytest.mark.parametrize("name", ["pca.py", "tensor.py"])
def test_pages_open_on_the_default_seed_with_the_benchmarks_numbers(name):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at = at.switch_page(f"app_pages/{name}").run()
    assert not at.exception
    prefix = "pca" if name == "pca.py" else "td"
    assert at.number_input(key=f"{prefix}_seed").value == DEFAULT_SEED
    shown = {m.label: m.value for m in at.metric}
    numbers = default_view(DEFAULT_SEED)
    if name == "pca.py":  # shown as a percentage with one decimal
        assert shown["CAPE"] == f"{numbers['pca cape']:.1%}"
        assert shown["Conventional"] == f"{numbers['pca conv']:.1%}"
        assert len(PCA_DEFAULTS["algorithms"]) == len(shown)
    else:  # shown with three decimals (app_pages/tensor.py)
        assert shown["CAPE"] == f"{numbers['tensor cape']:.3f}"
        assert shown["Conventional"] == f"{numbers['tensor conv']:.3f}"
