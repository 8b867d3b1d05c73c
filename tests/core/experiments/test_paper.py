"""The paper's figures as data: panel configurations, computed claims and the CLI."""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.experiments import paper
from paper.__main__ import main

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")


def test_every_figure_has_the_papers_layout():
    assert [len(paper.FIGURES[f]["panels"]) for f in "2345"] == [9, 8, 8, 8]
    fig2 = paper.FIGURES["2"]["panels"]
    assert [p.axis for p in fig2] == ["epsilon"] * 3 + ["n_per_site"] * 3 + ["delta"] * 3
    assert [p.data for p in fig2[:3]] == ["synthetic", "mnist", "covtype"]
    for p in paper.PANELS.values():
        assert isinstance(p.params[p.axis], tuple) and p.claims
        sites = p.params["sites"]
        assert sites == (10 if p.task == "pca" else 5)


@pytest.mark.slow
def test_synthetic_vs_epsilon_panel_supports_the_papers_claims():
    # Done-when of issue #5: capePCA between conv and non-private at every ε ≥ 0.1 and
    # ≥ 98% of the optimum at ε = 10, with the paper's configuration (10 runs).
    # Strict checks (issue #14): at ε ≤ 0.01 every method sits at the noise floor, so
    # "outperforms at every ε" is a tie there — reported as a tie, not as support.
    panel = paper.get_panel("2a")
    results = {r.claim: r for r in paper.check_claims(panel, paper.run_panel(panel, runs=10))}
    outperforms = results.pop("capePCA outperforms conv, DPdisPCA and local at every ε")
    assert outperforms.verdict == "tie" and "within noise at 0.001" in outperforms.evidence
    assert all(r.holds for r in results.values()), [(r.claim, r.evidence) for r in results.values()]
    assert any("98%" in c for c in results)


@pytest.mark.slow
def test_claim_checks_can_fail():
    # Swap capePCA and conventional: the "outperforms" and "between" claims must fail.
    panel = paper.get_panel("2a")
    df = paper.run_panel(panel, runs=3, seed=1)
    swapped = df.replace({"algorithm": {"cape": "conv", "conv": "cape"}})
    verdicts = {r.claim: r.holds for r in paper.check_claims(panel, swapped)}
    assert not verdicts["capePCA outperforms conv, DPdisPCA and local at every ε"]
    assert not verdicts["capePCA lies between conv and non-private at every ε ≥ 0.1"]


@pytest.mark.slow
def test_tensor_panel_claims_hold():
    panel = paper.get_panel("3a")
    results = {r.claim: r for r in paper.check_claims(panel, paper.run_panel(panel, runs=10))}
    # capeAGN vs conv is within noise at some ε (both at the floor at ε = 0.001): a tie
    assert results.pop("capeAGN outperforms conv and local at every ε").verdict == "tie"
    assert all(r.holds for r in results.values()), [(r.claim, r.evidence) for r in results.values()]


def test_cli_writes_csv_html_and_claims(tmp_path, capsys):
    assert main(["--figure", "4a", "--runs", "2", "--out", str(tmp_path)]) == 0
    df = pd.read_csv(tmp_path / "fig4a.csv")
    assert set(df.algorithm) >= {"cape", "conv", "nonprivate"} and len(df) == 6 * 9 * 2
    html = (tmp_path / "fig4a.html").read_text()
    assert "plotly" in html and "STM D=10" in html
    claims = pd.read_csv(tmp_path / "claims.csv")
    assert (claims.panel == "4a").all() and {"holds", "evidence"} <= set(claims.columns)
    out = capsys.readouterr().out
    assert "4a: STM D=10" in out and ("✓" in out or "✗" in out)


@pytest.mark.slow
def test_cli_real_data_panel_from_a_local_file_and_skip_without(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CAPE_COVTYPE", raising=False)
    main(["--figure", "2c", "--runs", "1", "--out", str(tmp_path)])
    assert "skipped" in capsys.readouterr().out
    rng = np.random.default_rng(0)
    table = np.hstack([rng.normal(size=(6000, 54)) * np.arange(1, 55), np.ones((6000, 1))])
    text = "\n".join(",".join(f"{v:.3f}" for v in row) for row in table)
    (tmp_path / "covtype.data.gz").write_bytes(gzip.compress(text.encode()))
    assert (
        main(
            [
                "--figure",
                "2c",
                "--runs",
                "1",
                "--out",
                str(tmp_path),
                "--covtype",
                str(tmp_path / "covtype.data.gz"),
            ]
        )
        == 0
    )
    df = pd.read_csv(tmp_path / "fig2c.csv")
    assert len(df) == 5 * 9 and df.captured_energy_ratio.between(0, 1.0001).all()


def test_unknown_panel_is_a_clear_error():
    with pytest.raises(ValueError, match="panel must be one of"):
        paper.get_panel("9z")
    with pytest.raises(ValueError, match="needs the MNIST data set"):
        paper.run_panel(paper.get_panel("2b"), runs=1)


def _frame(means: dict[str, list[float]], grid, noise: float, runs: int = 10, seed: int = 0):
    """A tidy frame with the given per-grid-point means and i.i.d. N(0, noise²) run scatter
    (centred exactly, so the means are exact and the s.e. is noise/sqrt(runs)·~1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for alg, ms in means.items():
        for p, m in zip(grid, ms, strict=True):
            z = rng.standard_normal(runs)
            z = (z - z.mean()) / z.std(ddof=1)
            rows += [{"algorithm": alg, "epsilon": p, "q": m + noise * v} for v in z]
    return pd.DataFrame(rows)


GRID = [0.001, 0.01, 0.1, 1.0]


def test_outperforms_needs_a_margin_beyond_noise_and_reports_a_tie():
    # issue #14, item 5: s.e. of each mean = 0.1/sqrt(10) ≈ 0.032, of a difference 0.045;
    # a lead of 0.05 everywhere is within 2 s.e. (0.089): a tie, not "outperforms".
    check = paper._better("cape", ("conv",), higher=True)
    claim = paper.Claim("cape outperforms conv", check)
    close = _frame({"cape": [0.55, 0.65, 0.75, 0.85], "conv": [0.5, 0.6, 0.7, 0.8]}, GRID, 0.1)
    assert claim.evaluate(close, "epsilon", "q").verdict == "tie"
    clear = _frame({"cape": [0.8, 0.9, 0.95, 0.99], "conv": [0.5, 0.6, 0.7, 0.8]}, GRID, 0.1)
    assert claim.evaluate(clear, "epsilon", "q").verdict == "holds"
    floor = _frame({"cape": [0.5, 0.9, 0.95, 0.99], "conv": [0.5, 0.6, 0.7, 0.8]}, GRID, 0.1)
    result = claim.evaluate(floor, "epsilon", "q")  # every method at the noise floor at 0.001
    assert result.verdict == "tie" and "0.001" in result.evidence and not result.holds
    worse = _frame({"cape": [0.8, 0.9, 0.5, 0.99], "conv": [0.5, 0.6, 0.7, 0.8]}, GRID, 0.1)
    assert claim.evaluate(worse, "epsilon", "q").verdict == "fails"


def test_increases_is_checked_at_every_grid_step():
    # Endpoints alone (0.5 → 0.9) would pass; a dip of 0.3 mid-grid (s.e. of a step ≈ 0.045)
    # is beyond noise and fails the claim. A flat curve is a tie.
    claim = paper.Claim("increases with ε", paper._improves("cape", lower_is_better=False))
    dip = _frame({"cape": [0.5, 0.8, 0.5, 0.9]}, GRID, 0.1)
    result = claim.evaluate(dip, "epsilon", "q")
    assert result.verdict == "fails" and "from 0.01 to 0.1" in result.evidence
    wobble = _frame({"cape": [0.5, 0.8, 0.78, 0.9]}, GRID, 0.1)  # a dip within noise
    assert claim.evaluate(wobble, "epsilon", "q").verdict == "holds"
    flat = _frame({"cape": [0.5, 0.52, 0.51, 0.53]}, GRID, 0.1)
    assert claim.evaluate(flat, "epsilon", "q").verdict == "tie"


@pytest.mark.slow
def test_fig_2a_default_pool_is_unlucky_and_the_spread_says_so():
    # issue #14, item 6: one synthetic pool is drawn per seed; seed 0's Fig. 2(a) pool puts
    # capePCA below every other of 8 pools at ε = 0.5, ~5% under their mean (0.580 vs 0.612;
    # 2 runs per pool — the pools differ by more than the runs' noise, s.e. ≈ 0.005).
    spread = paper.pool_spread("2a")
    at = spread[spread.epsilon == 0.5].set_index("seed").captured_energy_ratio
    assert len(at) == len(paper.POOL_SEEDS) and at.idxmin() == 0
    assert at.loc[0] < 0.97 * at.mean()
    # the Paper figures page states these numbers for the shipped (seed 0) panel
    others = at.drop(index=0)
    assert (round(at.loc[0], 3), round(others.min(), 3), round(others.max(), 3)) == (
        0.580,
        0.601,
        0.623,
    )
    page = (Path(__file__).resolve().parents[3] / "app_pages" / "paper_figures.py").read_text()
    assert "0.580 of the optimum at ε = 0.5" in page and "0.601–0.623" in page
    with pytest.raises(ValueError, match="real data"):
        paper.pool_spread("2b")


@pytest.mark.slow
def test_standins_keep_the_panel_and_fit_the_bundled_pool():
    from dpcore.experiments import paper, realdata

    for name, pool in paper.BUNDLED_POOL.items():
        assert realdata.load_bundled(name).n_samples == pool
    for panel in paper.PANELS.values():
        if panel.data not in paper.STANDINS:
            continue
        made = paper.standin(panel)
        assert made.key == f"{panel.key}~{made.data}" and not made.heavy
        assert paper.panel_by_key(made.key) == made
        assert made.axis == panel.axis and made.params["epsilon"] == panel.params["epsilon"]
        n = made.params["n_per_site"]
        assert max(n if isinstance(n, tuple) else (n,)) * made.params["sites"] <= (
            paper.BUNDLED_POOL[made.data]
        )
        assert "stand-in for" in made.title


def test_precomputed_file_round_trips(tmp_path):
    import pandas as pd

    from dpcore.experiments import paper

    a = pd.DataFrame({"algorithm": ["cape"], "epsilon": [0.5], "run": [0], "q": [0.25]})
    b = pd.DataFrame({"algorithm": ["conv"], "delta": [0.01], "run": [1], "e": [1.5]})
    path = tmp_path / "p.csv.gz"
    paper.write_precomputed(path, {"2a": a, "3c": b}, {"command": "python -m paper x"})
    frames, meta = paper.read_precomputed(path)
    assert meta == {"command": "python -m paper x"}
    pd.testing.assert_frame_equal(frames["2a"], a, check_like=True)
    pd.testing.assert_frame_equal(frames["3c"], b, check_like=True)  # columns by name


SHIPPED = Path(__file__).resolve().parents[3] / "paper" / "precomputed.csv.gz"


def test_a_precomputed_file_names_the_version_and_the_commit(tmp_path, monkeypatch):
    # issue #39: the header had the commit but not the version
    import dpcore

    panel = paper.data_free_panels()[0]
    monkeypatch.setattr(paper, "data_free_panels", lambda: [panel])
    tiny = pd.DataFrame({"algorithm": ["cape"], "epsilon": [0.5], "run": [0], "q": [0.25]})
    monkeypatch.setattr(paper, "run_panel", lambda *a, **k: tiny)
    out = tmp_path / "p.csv.gz"
    assert main(["--precompute", str(out), "--runs", "1"]) == 0
    _, meta = paper.read_precomputed(out)
    assert meta["version"] == dpcore.__version__
    assert meta["commit"] == dpcore.version.source_commit()
    _, shipped = paper.read_precomputed(SHIPPED)  # the shipped file's header says both
    assert shipped["version"].endswith(f"+g{shipped['commit'][:9]}")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["2b~digits", "3a", "4c"])
def test_shipped_results_agree_with_a_fresh_reduced_run(key):
    # A fresh 3-run regeneration against the shipped 10-run means, per algorithm and grid
    # point. Both are means of the same noise distribution (the runs are independent draws,
    # the data pool is the seed's), so they differ by Monte Carlo error only:
    # |m₃ − m₁₀| ≤ 4·s·√(1/3 + 1/10) with s the shipped per-point std (4σ: ~1 in 16,000 per
    # point; a floor of 1e-9 for noise-free points, where both must agree to rounding).
    from dpcore.experiments import paper

    frames, meta = paper.read_precomputed(SHIPPED)
    assert meta["command"].startswith("python -m paper --precompute") and meta["commit"]
    panel = paper.panel_by_key(key)
    shipped = frames[key]
    fresh = paper.run_panel(
        panel, runs=3, seed=int(meta["seed"]), calibration=meta["calibration"]
    )
    by = ["algorithm", panel.axis]
    a = shipped.groupby(by)[panel.metric].agg(["mean", "std"])
    b = fresh.groupby(by)[panel.metric].mean()
    assert set(a.index) == set(b.index)
    gap = (a["mean"] - b.reindex(a.index)).abs()
    allowed = 4 * a["std"].fillna(0) * (1 / 3 + 1 / 10) ** 0.5 + 1e-9
    assert (gap <= allowed).all(), gap[gap > allowed]
