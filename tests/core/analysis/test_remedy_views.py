"""The dropout remedy against a lying aggregator (issue #48): what it may hold, each site's ε.

The oracle below builds the aggregator's observations explicitly — every held release
a_s + E_s + G_s and every correction c_j = Σ_D μ_d (E_d + H_d^(j)) as a linear map of
independent standard normals — and reads σ_joint from the Fisher information of a shift of
one site's value, 1/σ² = vᵀ Σ_obs⁻¹ v. It shares no code with dpcore's conditioning.
"""

import itertools
import math

import numpy as np
import pytest

from dpcore import remedy_view_std, remedy_worst_case
from dpcore.analysis.views import REMEDY_VIEWS, coalition_view, dropout_analysis
from dpcore.mechanisms.calibration import gaussian_sigmas, mean_sensitivity
from dpcore.protocol.cape import cape_design
from dpcore.protocol.joint_safe import design_for, joint_safe_design


def oracle_std(design, dropped, *, late, answers):
    """σ_joint of every site from the explicit observation model (∞ where nothing is held)."""
    s = design.n_sites
    remaining = [t for t in range(s) if t not in dropped]
    held = list(range(s)) if late else remaining
    tau_g = np.sqrt(design.var_g)
    # noise coordinates: z_E (S), g (S), then |D| per answer; all independent N(0, 1)
    width = 2 * s + len(dropped) * answers
    rows = []
    for h in held:
        row = np.zeros(width)
        row[:s] = design.e_mixing[h]
        row[s + h] = tau_g[h]
        rows.append(row)
    for j in range(answers):
        row = np.zeros(width)
        for i, d in enumerate(dropped):
            row[:s] += design.weights[d] * design.e_mixing[d]
            row[2 * s + j * len(dropped) + i] = design.weights[d] * tau_g[d]
        rows.append(row)
    a = np.array(rows)
    cov = a @ a.T
    out = np.full(s, math.inf)
    for i, h in enumerate(held):
        v = np.zeros(len(rows))
        v[i] = 1.0  # a shift of a_h moves only its own release: c carries no data
        out[h] = 1.0 / math.sqrt(v @ np.linalg.lstsq(cov, v, rcond=None)[0])
    return out


UNEQUAL = cape_design([0.5, 1.0, 2.0, 0.8, 1.3], weights=[0.1, 0.3, 0.2, 0.25, 0.15])
SAFE = joint_safe_design([0.5, 1.0, 2.0, 0.8, 1.3], weights=[0.1, 0.3, 0.2, 0.25, 0.15])


@pytest.mark.parametrize("design", [UNEQUAL, SAFE], ids=["paper-general", "joint-safe"])
@pytest.mark.parametrize("dropped", [(0,), (2,), (1, 3)])
@pytest.mark.parametrize("late", [False, True])
@pytest.mark.parametrize("answers", [1, 2, 5])
def test_the_views_equal_an_explicit_observation_model(design, dropped, late, answers):
    got = remedy_view_std(design, dropped, late=late, answers=answers)
    want = oracle_std(design, list(dropped), late=late, answers=answers)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9)


@pytest.mark.parametrize("design", [UNEQUAL, SAFE], ids=["paper-general", "joint-safe"])
def test_any_number_of_answers_pins_the_dropped_e_and_leaves_only_g(design):
    # With Σ_D μ_d E_d known exactly and one site dropped, E_d is known: its late release
    # a_d + E_d + G_d leaves only G_d (the other releases' noise is independent of G_d).
    for d in range(design.n_sites):
        std = remedy_view_std(design, [d], late=True, answers=math.inf)
        assert std[d] == pytest.approx(math.sqrt(design.var_g[d]), rel=1e-9)
        # and many answers approach it from above
        many = remedy_view_std(design, [d], late=True, answers=10**6)
        assert std[d] <= many[d] <= std[d] * (1 + 1e-5)


def random_design(rng, kind):
    s = int(rng.integers(3, 9))
    tau = rng.uniform(0.05, 2.0, s)
    weights = rng.dirichlet(np.ones(s))
    return (
        joint_safe_design(tau, weights=weights)
        if kind == "joint"
        else cape_design(tau, weights=weights)
    )


@pytest.mark.parametrize("kind", ["joint", "paper-general"])
def test_the_sealed_view_is_never_worse_than_a_normal_run(kind):
    # c = Σ_D μ_d (E_d + H_d) is distributed as Σ_D μ_d (â_d − F_d − a_d) of a normal run,
    # so the sealed view (remaining releases and one c) is a function of the normal run's
    # view with the dropped data known: no remaining site's σ_joint may fall below its
    # normal-run σ_joint. 40 random designs, every dropped set of size 1 and 2.
    rng = np.random.default_rng(48)
    for _ in range(40):
        design = random_design(rng, kind)
        normal = coalition_view(design).joint_std
        for size in (1, 2):
            for dropped in itertools.combinations(range(design.n_sites), size):
                std = remedy_view_std(design, dropped)
                keep = [t for t in range(design.n_sites) if t not in dropped]
                assert np.all(std[keep] >= normal[keep] * (1 - 1e-9)), (dropped, std, normal)
                assert np.all(np.isinf(std[list(dropped)]))
                if kind == "joint":  # the joint-safe design: τ_s in the normal run already
                    assert np.all(std[keep] >= design.tau_site[keep] * (1 - 1e-9))


def test_the_sealed_view_is_the_dropout_analysis_remedy_view():
    for dropped in [(0,), (4,), (1, 3)]:
        keep = [t for t in range(5) if t not in dropped]
        std = remedy_view_std(UNEQUAL, dropped)
        ratio = np.min(std[keep] / UNEQUAL.tau_site[keep])
        assert ratio == pytest.approx(
            dropout_analysis(UNEQUAL, dropped).joint_std["cape"], rel=1e-9
        )


def demo(sites, design="joint"):
    """The federated command's demo sites (N_s = 150 + 100 s, ε = 1, δ = 1e-5), as
    federated.protocol.make_design makes their design."""
    n = np.array([150 + 100 * (s + 1) for s in range(sites)])
    tau = gaussian_sigmas(mean_sensitivity(n), epsilon=1.0, delta=1e-5, calibration="analytic")
    return design_for(design, tau, weights=n / n.sum()), n


@pytest.mark.parametrize("sites", [3, 10, 20])
def test_the_open_remedy_breaks_the_promise_and_the_sealed_one_keeps_it(sites):
    # The finding, in the exact joint view: with the open remedy a late release breaks
    # ε = 1 (and more with repeated answers); the sealed remedy keeps every site at ≤ 1.
    made, n = demo(sites)
    worst = {v: 0.0 for v in REMEDY_VIEWS}
    for d in range(sites):
        case = remedy_worst_case(made, [d], sensitivity=1 / n, epsilon=1.0, delta=1e-5)
        assert case.meets["sealed"] and not case.meets["late"] and not case.meets["late, repeated"]
        assert case.epsilon["sealed"][d] == 0.0  # nothing of the dropped site is held
        for v in REMEDY_VIEWS:
            worst[v] = max(worst[v], float(case.epsilon[v].max()))
    assert worst["sealed"] <= 1.0 + 1e-7
    # the issue measured 1.18 / 2.31 / 3.42 from (Â_d − F_d) − c/μ_d alone (√2 τ_gd); the
    # joint view, which also uses Â_d itself, is worse still
    assert 1.0 < {3: 1.18, 10: 2.31, 20: 3.42}[sites] < worst["late"] < worst["late, repeated"]


def test_the_worst_case_table_names_the_worst_site():
    made, n = demo(3)
    case = remedy_worst_case(made, [1], sensitivity=1 / n, epsilon=1.0, delta=1e-5)
    table = case.table().set_index("view")
    assert table.loc["late", "worst site"] == 2  # the dropped site itself
    assert table.loc["late", "epsilon"] == case.epsilon["late"][1]
    assert not table.loc["late", "meets"] and table.loc["sealed", "meets"]


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match=r"answers must be in \[1, ∞\]; got 0"):
        remedy_view_std(SAFE, [0], answers=0)
    with pytest.raises(TypeError, match="answers must be a number"):
        remedy_view_std(SAFE, [0], answers="2")
    with pytest.raises(ValueError, match="dropped must leave at least one site"):
        remedy_view_std(SAFE, range(5))
    with pytest.raises(ValueError, match="dropped"):
        remedy_view_std(SAFE, [7])
    with pytest.raises(ValueError, match="dropped must name at least one site"):
        remedy_view_std(SAFE, [])
    with pytest.raises(ValueError, match="epsilon"):
        remedy_worst_case(SAFE, [0], sensitivity=0.1, epsilon=-1.0, delta=1e-5)
