"""The algorithm registry: a baseline registered at runtime reaches every consumer, and an
unknown name is a ValueError from every entry point."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpcore
from dpcore.experiments.limits import estimate_otd, estimate_pca
from dpcore.factorization import registry
from dpcore.factorization.registry import Algorithm, CostShape, PartyCost, PcaInputs, PcaMethod
from figures.theme import description, label, style

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.ClassicGaussianWarning")
ROOT = Path(__file__).resolve().parents[3]
SMALL = {"dim": 8, "k": 2, "sites": 3, "n_per_site": 40, "runs": 2, "pool_size": 600}


def _toy_run(x: PcaInputs, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random K-dimensional subspace: what knowing nothing gives."""
    q, _ = np.linalg.qr(rng.standard_normal((x.moments.shape[1], x.k)))
    return q


def _toy_cost(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * c.dim * c.k)


def _toy_eighs(sites: int) -> int:
    return 0  # a QR of a D×K matrix, no eigendecomposition


TOY = Algorithm(
    name="toy",
    label="Toy (random basis)",
    color="#123456",
    description="a random subspace, registered by a test",
    pca=PcaMethod(run=_toy_run, cost=_toy_cost, eighs=_toy_eighs),
    featured=True,
)


@pytest.fixture
def toy():
    registry.register(TOY)
    try:
        yield TOY
    finally:
        registry.unregister(TOY.name)


def test_builtin_names_and_order():
    # The order is the pickers' and the frames' row order; it fixes no random stream (those
    # are keyed by name: test_streams_are_keyed_by_name_alone).
    assert registry.names("pca") == (
        "nonprivate",
        "cape",
        "conv",
        "local",
        "dpdis",
        "cape_joint",
        "secagg",
        "npm",
        "npm_distributed",
        "npm_cape",
        "npm_cape_joint",
        "fedpower",
        "fedpca",
        "central_gauss",  # issue #39: the central peers
        "central_laplace",
        "dp_pca",  # issue #52: DP-PCA (Liu et al. 2022)
    )
    assert registry.names("otd")[:7] == (
        "nonprivate",
        "cape",
        "conv",
        "local_agn",
        "local_avn",
        "random",
        "cape_joint",
    )
    assert dpcore.PCA_ALGORITHMS == registry.names("pca")


def test_a_registered_baseline_joins_the_sweep_without_changing_the_others(toy):
    with_toy = dpcore.pca_sweep(**SMALL, epsilon=[0.5, 5.0], rng=1)
    assert "toy" in set(with_toy.algorithm)
    toy_rows = with_toy[with_toy.algorithm == "toy"]
    # a random K-subspace of R^D captures on average K/D of tr(A) ≤ the optimum; never more
    assert (toy_rows.captured_energy_ratio <= 1 + 1e-12).all()
    # every other algorithm keeps its stream: its numbers are those of a sweep without the toy
    others = [a for a in registry.defaults("pca") if a != "toy"]
    without = dpcore.pca_sweep(**SMALL, epsilon=[0.5, 5.0], rng=1, algorithms=others)
    np.testing.assert_array_equal(
        with_toy[with_toy.algorithm != "toy"].captured_energy.to_numpy(),
        without.captured_energy.to_numpy(),
    )


def test_a_registered_baseline_has_a_cost_label_and_colour(toy):
    cost = dpcore.communication_cost("toy", problem="pca", dim=10, k=3, sites=4)
    assert cost == {"noise generator": 0, "aggregator": 0, "sites": 120, "total": 120}
    assert label("toy") == "Toy (random basis)"
    assert style("toy").color == "#123456"
    assert description("toy") == TOY.description
    assert (
        estimate_pca(
            dim=10, sites=4, n_max=10, pool=100, points=1, runs=1, algorithms=["toy"]
        ).seconds
        > 0
    )


@pytest.mark.app
def test_a_registered_baseline_appears_in_the_pca_page(toy):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at = at.switch_page("app_pages/pca.py").run()
    assert not at.exception and not at.error
    picker = at.multiselect(key="pca_algs")
    assert "toy" in picker.options or "Toy (random basis)" in picker.options
    assert "toy" in picker.value  # featured: selected by default
    assert "Toy (random basis)" in {m.label for m in at.metric}
    costs = next(df.value for df in at.dataframe if "total" in df.value.columns)
    assert "Toy (random basis)" in set(costs["algorithm"])


def test_registering_a_taken_name_or_a_bad_record_fails():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get("cape"))
    with pytest.raises(ValueError, match="color"):
        Algorithm(name="x", label="X", color="red", description="d", pca=TOY.pca)
    with pytest.raises(ValueError, match="must belong to a sweep"):
        Algorithm(name="x", label="X", color="#000000", description="d")
    with pytest.raises(ValueError, match="built in"):
        registry.unregister("cape")


@pytest.mark.parametrize(
    "call",
    [
        lambda: dpcore.pca_sweep(**SMALL, epsilon=1.0, algorithms=["nope"]),
        lambda: dpcore.pca_sweep(**SMALL, epsilon=1.0, algorithms=["local_agn"]),  # tensor only
        lambda: dpcore.otd_sweep(dim=4, k=2, epsilon=1.0, algorithms=["dpdis"]),  # PCA only
        lambda: dpcore.otd_sweep(dim=4, k=2, epsilon=1.0, algorithms=["nope"]),
        lambda: dpcore.otd_example(dim=4, k=2, epsilon=1.0, algorithms=["nope"]),
        lambda: dpcore.communication_cost("nope", problem="pca", dim=4, k=2, sites=2),
        lambda: dpcore.communication_cost("dpdis", problem="otd", dim=4, k=2, sites=2),
        lambda: estimate_pca(
            dim=4, sites=2, n_max=5, pool=10, points=1, runs=1, algorithms=["nope"]
        ),
        lambda: estimate_otd(
            dim=4,
            k=2,
            sites=2,
            n_total=10,
            draws=1,
            points=1,
            runs=1,
            faithful=False,
            algorithms=["dpdis"],
        ),
        lambda: registry.get("nope"),
        lambda: registry.names("svd"),
        lambda: label("nope"),
        lambda: style("nope"),
    ],
    ids=[
        "pca_sweep",
        "pca_sweep-tensor-name",
        "otd_sweep-pca-name",
        "otd_sweep",
        "otd_example",
        "communication_cost",
        "communication_cost-wrong-family",
        "estimate_pca",
        "estimate_otd",
        "registry.get",
        "registry.names",
        "theme.label",
        "theme.style",
    ],
)
def test_unknown_algorithm_is_a_value_error_everywhere(call):
    with pytest.raises(ValueError, match="must be one of"):
        call()


def test_references_are_found_by_role_not_by_name():
    assert registry.reference("pca", "upper") == "nonprivate"
    assert registry.reference("otd", "upper") == "nonprivate"
    assert registry.reference("otd", "lower") == "random"
    assert registry.reference("pca", "lower") is None  # PCA has no "knows nothing" baseline
    assert registry.references("otd") == ("nonprivate", "random")
    assert all(registry.get(n).role == "private" for n in registry.names("pca")[1:])
    with pytest.raises(ValueError, match="role must be one of"):
        registry.reference("pca", "private")
    with pytest.raises(ValueError, match="family must be one of"):
        registry.reference("svd", "upper")


def _toy(**changes):
    fields = {
        "name": "toy2",
        "label": "Toy 2",
        "color": "#654321",
        "description": "another toy",
        "pca": TOY.pca,
        **changes,
    }
    return Algorithm(**fields)


def test_records_are_strict():
    with pytest.raises(TypeError):
        Algorithm("x", "X", "#000001", "d", pca=TOY.pca)  # type: ignore[misc]  # keyword-only
    with pytest.raises(TypeError, match="cost"):
        PcaMethod(run=_toy_run, eighs=_toy_eighs)  # type: ignore[call-arg]  # no silent 0 cost
    with pytest.raises(TypeError, match="eighs"):
        PcaMethod(run=_toy_run, cost=_toy_cost)  # type: ignore[call-arg]  # no silent work
    with pytest.raises(TypeError, match="decomposes"):
        registry.OtdMethod(run=_toy_run, cost=_toy_cost)  # type: ignore[call-arg, arg-type]
    assert _toy().featured is False and _toy().role == "private"  # a new baseline opts in
    with pytest.raises(ValueError, match="role must be one of"):
        _toy(role="best")
    with pytest.raises(ValueError, match="label must be a non-empty string"):
        _toy(label="")


def test_colours_are_unique_per_family_and_references_single():
    with pytest.raises(ValueError, match=r"color must differ.*'#d55e00', the colour of 'cape'"):
        registry.register(_toy(color="#d55e00"))  # CAPE's colour, in lower case
    with pytest.raises(ValueError, match="role 'upper' is taken"):
        registry.register(_toy(role="upper"))
    # local_agn's colour is local's: fine, they never share a chart (tensor vs PCA)
    assert registry.get("local_agn").color == registry.get("local").color
    registry.register(_toy())
    try:
        assert "toy2" in registry.names("pca") and "toy2" not in registry.featured("pca")
    finally:
        registry.unregister("toy2")


def _run_in_fresh_process(spec):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn: the child imports dpcore afresh, so its registry has only the built-ins
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(dpcore.run_pca_sweep, spec, 5).result()


@pytest.mark.slow
def test_a_registered_baseline_runs_in_another_process_from_its_spec(toy):
    # A heavy job pickles the spec to a child process (serving.worker): the spec carries the
    # records (streams are keyed by name), so a runtime-registered algorithm runs there too.
    spec = dpcore.PcaSpec.build(**SMALL, epsilon=[0.5, 5.0], algorithms=["cape", "toy"])
    here = dpcore.run_pca_sweep(spec, 5)
    there = _run_in_fresh_process(spec)
    assert set(there.algorithm) == {"cape", "toy"}
    np.testing.assert_array_equal(there.captured_energy, here.captured_energy)


def test_an_algorithms_inputs_are_keyword_only():
    # issue #35: seven same-looking arrays and ints cannot be swapped by position
    from dpcore.factorization.registry import OtdInputs

    arr = np.ones(3)
    with pytest.raises(TypeError, match="positional"):
        PcaInputs(np.ones((3, 2, 2)), 1, arr, arr, 2, False)  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        OtdInputs(None, 1, arr, None, False, None)  # type: ignore[misc]
    x = PcaInputs(moments=np.ones((3, 2, 2)), k=1, tau=arr, weights=arr, rank=2, faithful=False)
    assert x.privacy is None and x.rank == 2


def test_streams_are_keyed_by_name_alone():
    # issue #51: a stream is a function of the run's stream and the name, never of a position
    run = np.random.default_rng(11).spawn(3)[2]
    first = registry.stream("cape", run).random(4)
    run.spawn(5)  # spawning from the run does not move a named stream
    np.testing.assert_array_equal(registry.stream("cape", run).random(4), first)
    assert set(registry.streams(["conv", "cape"], run)) == {"conv", "cape"}
    np.testing.assert_array_equal(registry.streams(["conv", "cape"], run)["cape"].random(4), first)
    # the key: the run's spawn key, the tag, the name's word; no spawned child has the tag
    seq = registry.stream("cape", run).bit_generator.seed_seq
    assert seq.spawn_key == (2, registry.NAME_KEY, registry.name_word("cape"))
    assert seq.entropy == 11 and registry.NAME_KEY >= 2**31  # spawn counts up from 0
    children = [c.bit_generator.seed_seq.spawn_key for c in run.spawn(8)]
    assert all(len(c) == 2 and c[-1] < 64 for c in children)
    # the word is SHA-256's first 4 bytes: stable across processes (Python's hash is salted)
    assert registry.name_word("cape") == 248707621
    assert len({registry.name_word(n) for n in registry.names()}) == len(registry.names())


def test_a_name_whose_stream_word_is_taken_is_refused(monkeypatch):
    monkeypatch.setattr(registry, "name_word", lambda name: 7)
    with pytest.raises(ValueError, match="stream word"):
        registry.register(_toy())
    with pytest.raises(ValueError, match="stream words"):
        registry.streams(["cape", "conv"], np.random.default_rng(0))
    assert "toy2" not in registry.names()


def test_choosing_a_subset_of_algorithms_changes_no_algorithms_numbers():
    # each algorithm alone gives the rows it has in the sweep of all of them, to the bit
    pca = dpcore.pca_sweep(**SMALL, epsilon=[0.5, 5.0], rng=3)
    otd_small = {"dim": 4, "k": 2, "sites": 3, "n_per_site": 300, "runs": 2}
    otd = dpcore.otd_sweep(**otd_small, epsilon=[1.0, 5.0], rng=3)
    for name in ("conv", "dpdis"):
        alone = dpcore.pca_sweep(**SMALL, epsilon=[0.5, 5.0], rng=3, algorithms=[name])
        np.testing.assert_array_equal(
            alone.captured_energy, pca[pca.algorithm == name].captured_energy
        )
    for name in ("conv", "local_avn"):
        alone = dpcore.otd_sweep(**otd_small, epsilon=[1.0, 5.0], rng=3, algorithms=[name])
        mine = otd[otd.algorithm == name].reset_index(drop=True)
        pd.testing.assert_frame_equal(alone.reset_index(drop=True), mine)


def test_the_spec_parameters_an_algorithm_reads_are_on_its_record():
    # issue #51: what only some algorithms read is named by their records, not by the specs
    reads = {
        family: {n: registry.get(n).reads(family) for n in registry.names(family)}
        for family in registry.FAMILIES
    }
    secagg = registry.SECAGG_PARAMETERS
    assert {n: r for n, r in reads["pca"].items() if r} == {"dpdis": ("rank",), "secagg": secagg}
    power = registry.POWER_PARAMETERS
    for name, read in reads["otd"].items():
        method = registry.otd_method(name)
        # the sweep decomposes every whitened tensor with the power method's settings
        assert read == (power if method.decomposes else ()) + (secagg if name == "secagg" else ())
    assert reads["otd"]["random"] == ()  # draws its vectors: no power method
    # a method names only declared parameters of its own family
    with pytest.raises(ValueError, match=r"parameters must be a tuple of names from \['rank'"):
        PcaMethod(run=_toy_run, cost=_toy_cost, eighs=_toy_eighs, parameters=("restarts",))
    with pytest.raises(ValueError, match="parameters must be a tuple of names"):
        PcaMethod(run=_toy_run, cost=_toy_cost, eighs=_toy_eighs, parameters="rank")  # type: ignore[arg-type]


def test_a_spec_parameter_is_declared_with_its_default_and_check():
    rank = registry.SPEC_PARAMETERS["rank"]
    assert rank.resolve(None, {"dim": 10, "k": 3}) == 6  # min(2K, D)
    assert rank.resolve(None, {"dim": 5, "k": 3}) == 5
    with pytest.raises(ValueError, match=r"rank must be an integer in \[3, 10\]; got 2"):
        rank.resolve(2, {"dim": 10, "k": 3})
    assert registry.SPEC_PARAMETERS["secagg_scale"].resolve(None, {}) is None  # automatic γ
    with pytest.raises(ValueError, match="families must name some of"):
        registry.SpecParameter(
            name="x", families=("svd",), default=1, check=lambda v, c: v, description="x"
        )
    with pytest.raises(ValueError, match="name must be a keyword name"):
        registry.SpecParameter(
            name="a b", families=("pca",), default=1, check=lambda v, c: v, description="x"
        )
    with pytest.raises(ValueError, match="family must be one of"):
        registry.spec_parameters("svd")


def test_a_registered_baseline_that_reads_a_grid_parameter_may_be_swept_along_it():
    reader = dataclasses.replace(
        TOY, name="toy_bits", pca=dataclasses.replace(TOY.pca, parameters=("secagg_bits",))
    )
    sweep = {**SMALL, "epsilon": 1.0, "secagg_bits": [8, 16]}
    with pytest.raises(ValueError, match=r"reads the swept secagg_bits \(of \['secagg'\]\)"):
        dpcore.PcaSpec.build(**sweep, algorithms=["cape"])
    registry.register(reader)
    try:
        spec = dpcore.PcaSpec.build(**sweep, algorithms=["cape", "toy_bits"])
        assert spec.grid.axis == "secagg_bits" and spec.records[1].reads("pca") == ("secagg_bits",)
    finally:
        registry.unregister(reader.name)
