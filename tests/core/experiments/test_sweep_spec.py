"""Sweep specs: validated once, hashable cache keys; SPEC 7 randomness; metrics by name."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import OtdSpec, PcaSpec, fit_to_pool
from dpcore.experiments.sweeps import OTD_METRICS, PCA_METRICS, SweepGrid, otd_spec
from dpcore.experiments.sweeps.otd import _noise_scales, otd_sweep

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
SMALL = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 40, "runs": 2, "pool_size": 600}
TENSOR = {"dim": 4, "k": 2, "sites": 2, "n_per_site": 300, "runs": 1}


def test_equal_specs_are_equal_and_hash_alike():
    a = otd_spec(epsilon=[0.5, 1.0], sites=3, site_shares=[2, 1, 1])
    b = otd_spec(epsilon=(0.5, 1.0), sites=3, site_shares=np.array([2.0, 1.0, 1.0]))
    assert a == b and hash(a) == hash(b)
    assert a != otd_spec(epsilon=[0.5, 1.0], sites=3)
    assert {a: "cached"}[b] == "cached"  # usable as a cache key


def test_grid_finds_the_swept_axis_and_validates_every_value():
    g = SweepGrid.of(epsilon=0.5, delta=0.01, n_per_site=np.array([10, 20]), sites=3)
    assert (g.axis, g.values, g.largest("n_per_site"), g.resamples) == (
        "n_per_site",
        (10, 20),
        20,
        True,
    )
    with pytest.raises(ValueError, match="at most one"):
        SweepGrid.of(epsilon=[1.0], delta=[0.1], n_per_site=1, sites=2)
    with pytest.raises(ValueError, match="sites must be an integer in"):
        SweepGrid.of(epsilon=1.0, delta=0.1, n_per_site=1, sites=[2, 0])
    # one site is a grid value (issue #39); the algorithms decide (PcaSpec: min_sites)
    assert SweepGrid.of(epsilon=1.0, delta=0.1, n_per_site=1, sites=[2, 1]).values == (2, 1)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"k": 5, "dim": 4}, "k must be an integer in"),
        ({"site_shares": [1, 2]}, "site_shares"),  # shares fix S: S cannot be swept
        ({"budget_split": 1.0}, "budget_split"),
        # nearly no budget for M2: refused under its own name, not later as a noise std
        # past MAX_MAGNITUDE blamed on epsilon (issue #23 item 7)
        ({"budget_split": 1e-308}, r"budget_split must be a float in \[0.001, 0.999\]"),
        ({"restarts": 0}, "restarts"),
        ({"metrics": ["captured_energy"]}, "metrics must be one of"),
        ({"algorithms": []}, "at least one"),
        ({"scaling": "nope"}, "scaling"),
    ],
)
def test_bad_specs_fail_before_any_work(params, match):
    base = {**TENSOR, "epsilon": 1.0}
    if "site_shares" in params:
        base["sites"] = [2, 3]
    with pytest.raises(ValueError, match=match):
        otd_spec(**{**base, **params})


def test_sweep_front_and_spec_builder_share_their_defaults():
    front = inspect.signature(inspect.unwrap(otd_sweep)).parameters
    builder = inspect.signature(otd_spec).parameters
    assert {n: p.default for n, p in builder.items()} == {n: front[n].default for n in builder}


def test_metrics_are_the_columns_named_in_that_order():
    df = dpcore.pca_sweep(**SMALL, epsilon=1.0, metrics=["subspace_distance", "captured_energy"])
    assert list(df.columns[-2:]) == ["subspace_distance", "captured_energy"]
    full = dpcore.pca_sweep(**SMALL, epsilon=1.0)
    assert list(full.columns[6:]) == list(PCA_METRICS)
    np.testing.assert_array_equal(df.captured_energy, full.captured_energy)
    tensor = dpcore.otd_sweep(**TENSOR, epsilon=1.0, metrics=["iterations"])
    assert list(tensor.columns[6:]) == ["iterations", "private_preprocessing"]
    assert set(OTD_METRICS) >= {"component_error", "weight_error"}


@pytest.mark.parametrize(
    "sweep",
    [
        lambda **kw: dpcore.pca_sweep(**SMALL, epsilon=[0.5, 2.0], **kw),
        lambda **kw: dpcore.otd_sweep(**TENSOR, epsilon=[0.5, 2.0], **kw),
        lambda **kw: dpcore.dropout_pca(
            n_per_site=[50, 60],
            epsilon=[1.0, 1.0],
            delta=[0.01, 0.01],
            weights=[0.5, 0.5],
            dropped=[0],
            dim=6,
            k=2,
            runs=2,
            pool_size=400,
            **kw,
        ),
    ],
    ids=["pca_sweep", "otd_sweep", "dropout_pca"],
)
def test_rng_is_a_seed_or_a_generator_and_seed_still_works(sweep):
    with pytest.warns(DeprecationWarning, match="use rng"):
        by_seed = sweep(seed=7)
    pd.testing.assert_frame_equal(sweep(rng=7), by_seed)
    pd.testing.assert_frame_equal(sweep(rng=np.random.default_rng(7)), by_seed)
    assert not sweep(rng=8).equals(by_seed)
    with pytest.raises(ValueError, match="not both"), pytest.warns(DeprecationWarning):
        sweep(rng=3, seed=7)
    with pytest.raises(TypeError, match="rng must be"):
        sweep(rng="7")


def test_a_grid_validates_when_it_is_made_not_only_through_of():
    with pytest.raises(ValueError, match=r"epsilon must be a float in \(0, inf\]; got -1"):
        SweepGrid(axis="epsilon", values=(-1.0,), epsilon=-1, delta=5, n_per_site=0, sites=0)
    with pytest.raises(ValueError, match="delta must be"):
        SweepGrid(axis="epsilon", values=(1.0,), epsilon=1.0, delta=5, n_per_site=1, sites=2)
    with pytest.raises(ValueError, match="sites must be an integer in"):
        SweepGrid(axis="epsilon", values=(1.0,), epsilon=1.0, delta=0.1, n_per_site=1, sites=0)
    with pytest.raises(ValueError, match="epsilon must be the first swept value"):
        SweepGrid(axis="epsilon", values=(1.0, 2.0), epsilon=2.0, delta=0.1, n_per_site=1, sites=2)
    with pytest.raises(TypeError, match="values must be a tuple"):
        SweepGrid(axis="sites", values=[2, 3], epsilon=1.0, delta=0.1, n_per_site=1, sites=2)


@pytest.mark.parametrize(
    ("cls", "keywords"),
    [
        (PcaSpec, {"epsilon": [0.5, 1], "dim": 20, "k": 4, "site_shares": [3, 1], "sites": 2}),
        (PcaSpec, {"epsilon": 0.5, "sites": (2, 5), "rank": 6, "dim": 12, "k": 3}),
        (PcaSpec, {"epsilon": 0.5, "delta": [0.01], "algorithms": ["cape", "secagg"]}),
        (PcaSpec, {"epsilon": 1.0, "secagg_scale": [0.5, 1.0], "algorithms": ["secagg"]}),
        (OtdSpec, {"epsilon": [0.5, 1.0], "budget_split": 0.3, "restarts": 1, "max_iter": 1000}),
        (OtdSpec, {"epsilon": 2.0, "n_per_site": [100, 200], "metrics": ["iterations"]}),
    ],
)
def test_a_spec_gives_back_its_keywords_and_survives_pickling(cls, keywords):
    spec = cls.build(**keywords)
    assert cls.build(**spec.keywords()) == spec
    short = spec.keywords(defaults=False)
    assert cls.build(**short) == spec
    assert set(short) <= set(keywords) | {"epsilon"}  # nothing at its default is repeated
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec and hash(copy) == hash(spec)
    assert [r.name for r in copy.records] == list(spec.algorithms)
    # replace changes one keyword and validates again
    assert spec.replace(runs=3).runs.count == 3 and spec.replace(runs=3) != spec
    with pytest.raises(ValueError, match="runs must be an integer in"):
        spec.replace(runs=0)


def test_a_spec_on_a_dataset_hashes_the_dataset_by_identity():
    data = dpcore.synthetic_dataset(dim=6, k=2, n_samples=200, rng=0)
    spec = PcaSpec.build(data=data, epsilon=1.0, k=2, sites=2, n_per_site=50)
    assert (spec.dim, spec.pool_size) == (6, 200)
    assert PcaSpec.build(**spec.keywords(defaults=False)) == spec
    other = dpcore.Dataset(data.name, data.samples, data.reference)  # equal arrays, other object
    assert spec.replace(data=other) != spec
    synthetic = PcaSpec.build(epsilon=1.0, dim=6, k=2, pool_size=300, sites=2, n_per_site=50)
    assert synthetic.replace(data=data) == spec  # dim and pool come from the data set


def test_fields_are_resolved_and_a_stale_change_is_refused():
    spec = PcaSpec.build(epsilon=1.0, dim=10, k=3)
    assert (spec.rank, spec.algorithms, spec.metrics) == (
        6,
        dpcore.factorization.registry.defaults("pca"),
        tuple(PCA_METRICS),
    )
    # dataclasses.replace bypasses build: the records no longer match the names
    with pytest.raises(ValueError, match="records must be"):
        dataclasses.replace(spec, algorithms=("cape",))
    with pytest.raises(ValueError, match="rank must be an integer in"):
        dataclasses.replace(spec, rank=11)
    with pytest.raises(TypeError, match="site_shares must be a tuple"):
        dataclasses.replace(spec, sites=dataclasses.replace(spec.sites, shares=[1.0, 2.0]))


@pytest.mark.parametrize("split", [0.5, 0.3, 0.9])
def test_the_stage_budgets_compose_to_the_total_and_are_what_the_noise_uses(split):
    spec = OtdSpec.build(**TENSOR, epsilon=[0.5, 3.0], delta=0.02, budget_split=split)
    model = dpcore.make_model("mog", 4, 2, rng=0)
    for value in spec.grid.values:
        m2, m3 = spec.stages(value)
        # basic composition (Theorem 2): the stages add up to the total (exact up to rounding)
        assert m2.epsilon + m3.epsilon == pytest.approx(value, rel=1e-15)
        assert m2.delta + m3.delta == pytest.approx(0.02, rel=1e-15)
        assert m2.epsilon / value == pytest.approx(split, rel=1e-15)
        noise = _noise_scales(spec, model, spec.grid.point(value), 0.05)
        assert (noise.privacy2.epsilon, noise.privacy2.delta) == tuple(m2)
        assert (noise.privacy3.epsilon, noise.privacy3.delta) == tuple(m3)


def test_fit_to_pool_keeps_the_values_the_pool_holds():
    assert fit_to_pool((100, 1000, 6000), 10, 60_000) == (100, 1000, 6000)
    assert fit_to_pool((100, 1000, 6001), 10, 60_000) == (100, 1000)  # 60,010 rows > pool
    assert fit_to_pool((2, 5, 10), 1000, None) == (2, 5, 10)
    with pytest.raises(ValueError, match="values must hold one v"):
        fit_to_pool((100, 200), 10, 999)


@pytest.mark.parametrize("junk", [True, 3, 0.5, object(), "cape", np.zeros((2, 2))])
@pytest.mark.parametrize("name", ["algorithms", "metrics"])
def test_a_list_of_names_that_is_no_list_is_a_type_error_naming_it(name, junk):
    # before: "'bool' object is not iterable", naming nothing (issue #23 item 7)
    for kind in (PcaSpec, OtdSpec):
        with pytest.raises(TypeError, match=rf"^{name} must be a sequence of names"):
            kind.build(epsilon=1.0, **{name: junk})


def test_dropout_sizes_that_are_no_list_are_refused_by_name():
    three = {"epsilon": [0.5] * 3, "delta": [0.01] * 3, "weights": [1 / 3] * 3, "dropped": [0]}
    for junk, error in ((True, TypeError), (600, TypeError), ("x", TypeError), ([], ValueError)):
        with pytest.raises(error, match=r"^n_per_site must"):
            dpcore.dropout_pca(n_per_site=junk, **three, dim=4, k=2, runs=1)


def test_both_specs_share_one_keyword_only_base():
    # issue #35: one base holds the shared fields and checks, instead of two copies
    from dpcore.experiments.sweeps.spec import SweepSpec

    pca = PcaSpec.build(epsilon=[0.5, 1.0], dim=6, k=2)
    otd = OtdSpec.build(epsilon=[0.5, 1.0], dim=4, k=2)
    assert isinstance(pca, SweepSpec) and isinstance(otd, SweepSpec)
    fields = dataclasses.fields
    shared = {f.name for f in fields(SweepSpec)}
    assert shared < {f.name for f in fields(PcaSpec)} and shared < {f.name for f in fields(OtdSpec)}
    values = [getattr(pca, f.name) for f in fields(PcaSpec)]
    with pytest.raises(TypeError, match="positional"):
        PcaSpec(*values)  # type: ignore[misc]
    # a shared check refuses for either family, by name
    with pytest.raises(TypeError, match="faithful must be True or False"):
        dataclasses.replace(otd, faithful="yes")
    with pytest.raises(ValueError, match="metrics"):
        dataclasses.replace(pca, metrics=("no_such_metric",))


def test_a_pca_sweep_resumed_from_the_tasks_it_kept_is_the_same_frame():
    # issue #51: the tasks a run handed over, taken back by a resumed run, give the frame of
    # an uninterrupted run; the resumed run computes only the others
    spec = PcaSpec.build(epsilon=[0.5, 1.0, 2.0], **SMALL)  # one data draw for every task
    kept: dict[tuple[int, int], list[dict]] = {}
    whole = dpcore.run_pca_sweep(spec, 5, workers=2, on_task=kept.__setitem__)
    assert sorted(kept) == [(i, run) for i in range(3) for run in range(2)]
    half = {key: kept[key] for key in [(0, 1), (2, 0), (1, 1)]}
    again: dict[tuple[int, int], list[dict]] = {}
    resumed = dpcore.run_pca_sweep(spec, 5, workers=1, completed=half, on_task=again.__setitem__)
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    assert set(again) == set(kept) - set(half)
    drawn = spec.replace(epsilon=1.0, n_per_site=[30, 40])  # a fresh draw per run
    kept.clear()
    full = dpcore.run_pca_sweep(drawn, 2, on_task=kept.__setitem__)
    resumed = dpcore.run_pca_sweep(drawn, 2, completed={(1, 0): kept[(1, 0)]})
    pd.testing.assert_frame_equal(resumed, full, check_exact=True)
    with pytest.raises(ValueError, match=r"completed must hold keys \(i, run\).*got \(3, 0\)"):
        dpcore.run_pca_sweep(spec, 5, completed={(3, 0): []})
    with pytest.raises(TypeError, match="on_task must be callable"):
        dpcore.run_pca_sweep(spec, 5, on_task="print")


def test_a_tensor_sweep_resumed_from_the_tasks_it_kept_is_the_same_frame(monkeypatch):
    # issue #51: as a PCA sweep's; the power method runs batched a block of tasks at a time
    # (here blocks of 2 against 4 for the uninterrupted run), and a tensor's power method
    # does not depend on its batch, so the frames are equal to the bit
    from dpcore.experiments.sweeps import otd as otd_sweeps

    spec = OtdSpec.build(**{**TENSOR, "runs": 2}, epsilon=[0.5, 1.0, 2.0])  # one data draw
    kept: dict[tuple[int, int], list[dict]] = {}
    run = dpcore.run_otd_sweep(spec, 5, workers=2, on_task=kept.__setitem__)
    whole = dpcore.otd_frame(spec, run)
    assert sorted(kept) == [(i, r) for i in range(3) for r in range(2)]
    rows = [row for key in sorted(kept) for row in kept[key]]  # the frame's, in its order
    pd.testing.assert_frame_equal(
        pd.DataFrame(rows, columns=whole.columns), whole, check_exact=True
    )
    monkeypatch.setattr(otd_sweeps, "block_tasks", lambda workers: 2)
    half = {key: kept[key] for key in [(0, 1), (2, 0), (1, 1)]}
    again: dict[tuple[int, int], list[dict]] = {}
    result = dpcore.run_otd_sweep(spec, 5, workers=1, completed=half, on_task=again.__setitem__)
    assert set(again) == set(kept) - set(half) and len(result.outcomes) == 3 * len(spec.records)
    pd.testing.assert_frame_equal(dpcore.otd_frame(spec, result), whole, check_exact=True)
    drawn = spec.replace(epsilon=1.0, n_per_site=[200, 300])  # a fresh draw per run
    kept.clear()
    full = dpcore.otd_frame(drawn, dpcore.run_otd_sweep(drawn, 2, on_task=kept.__setitem__))
    resumed = dpcore.run_otd_sweep(drawn, 2, completed={(1, 0): kept[(1, 0)]})
    pd.testing.assert_frame_equal(dpcore.otd_frame(drawn, resumed), full, check_exact=True)
    with pytest.raises(ValueError, match=r"completed must hold keys \(i, run\).*got \(3, 0\)"):
        dpcore.run_otd_sweep(spec, 5, completed={(3, 0): []})
    with pytest.raises(TypeError, match="on_task must be callable"):
        dpcore.run_otd_sweep(spec, 5, on_task="print")


def test_both_families_take_their_algorithms_parameters_with_the_declared_defaults():
    # issue #51: a parameter only some algorithms read (rank, the power method's, secure
    # aggregation's) is declared once in the registry; each spec's build takes it, with
    # that default, and checks it as declared
    from dpcore.factorization import registry

    for kind in (PcaSpec, OtdSpec):
        build = inspect.signature(kind.build).parameters
        for name in registry.spec_parameters(kind.family):
            assert build[name].default == registry.SPEC_PARAMETERS[name].default, name
    otd = OtdSpec.build(**TENSOR, epsilon=1.0, restarts=3, tol=1e-6)
    assert otd.power == dpcore.PowerOptions(restarts=3, max_iter=100, tol=1e-6)
    assert otd.keywords(defaults=False) == {"epsilon": 1.0, **TENSOR, "restarts": 3, "tol": 1e-6}
    with pytest.raises(ValueError, match=r"max_iter must be an integer in \[1, inf\]; got 0"):
        dataclasses.replace(otd, power=dpcore.PowerOptions(max_iter=0))
    with pytest.raises(TypeError, match="power must be a PowerOptions"):
        dataclasses.replace(otd, power=(10, 100, 1e-8))


@pytest.mark.parametrize("kind", [PcaSpec, OtdSpec])
def test_a_swept_parameter_that_no_chosen_algorithm_reads_is_refused(kind):
    # sweeping secure aggregation's b or γ without the secagg entry gives the same rows at
    # every grid value: refused by name (the default algorithms leave secagg out)
    with pytest.raises(ValueError, match=r"^algorithms must include one that reads the swept"):
        kind.build(epsilon=1.0, secagg_scale=[0.1, 1.0])
    spec = kind.build(epsilon=1.0, secagg_bits=[8, 16], algorithms=["cape", "secagg"])
    assert spec.grid.values == (8, 16)
    assert kind.build(epsilon=1.0, secagg_bits=12).grid.axis == "epsilon"  # fixed, not swept
