"""Every computed number the docs quote, recomputed from the core (issue #34).

    python docs/quoted_numbers.py                  # every cheap quote, checked against its doc
    python docs/quoted_numbers.py composition.md   # one doc's quotes
    python docs/quoted_numbers.py --measured       # also the Monte Carlo ones (about 10 s)

A quote is a doc, a text with format fields and a function of the core that fills them:
``text.format(**compute())`` must appear verbatim in the doc, so the doc's rounding is the
format's. Each line printed is ✓ or ✗ with the recomputed text; the exit status is 1 on a
mismatch. ``tests/test_doc_numbers.py`` runs every cheap quote. Timings and CPU figures
(docs/performance.md) are measured on a machine, not recomputed: their docs name their own
commands (``python -m benchmarks``).
"""

from __future__ import annotations

import argparse
import ast
import math
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import dpcore  # noqa: E402
from dpcore import (  # noqa: E402
    ACCOUNTANTS,
    composed_epsilon,
    design_for,
    view_noise_multipliers,
)
from dpcore.analysis.trust_models import shuffle_min_parties, trust_secagg_design  # noqa: E402
from dpcore.factorization.moments import mog_third_moment_norm  # noqa: E402

DOCS = ROOT / "docs"


@dataclass(frozen=True)
class Quote:
    """``text.format(**compute())`` appears verbatim in ``doc`` (a path under the repo)."""

    doc: str
    text: str
    compute: Callable[[], dict[str, Any]]
    measured: bool = False  # Monte Carlo over seeds: run with --measured, not by the test
    slow: bool = False  # over a second to recompute: the test leaves it to the full suite

    def rendered(self) -> str:
        return _flat(self.text.format(**self.compute()))

    def holds(self) -> bool:
        return self.rendered() in _flat((ROOT / self.doc).read_text())


def _flat(text: str) -> str:
    """Whitespace runs as one space: a quote does not depend on where the doc wraps."""
    return " ".join(text.split())


QUOTES: list[Quote] = []


def quote(doc: str, *texts: str, measured: bool = False, slow: bool = False):
    """Register ``texts`` of ``doc`` (under docs/ unless it has a slash) as filled by the
    decorated function."""

    def register(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        path = doc if "/" in doc or doc == "README.md" else f"docs/{doc}"
        QUOTES.extend(Quote(path, t, cache(fn), measured, slow) for t in texts)
        return fn

    return register


def _quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.ClassicGaussianWarning)
        return fn(*args, **kwargs)


# --- the equal-sites setting most docs use: S sites of N_s, one (ε_s, δ_s), weights 1/S -------


@cache
def _equal(sites: int, calibration: str, epsilon: float = 0.5, delta: float = 1e-3, n=1000):
    """(τ_s, Δ_s) of ``sites`` equal sites releasing a mean (Δ_s = 1/N_s)."""
    sens = dpcore.mean_sensitivity([n] * sites)
    tau = _quiet(
        dpcore.mean_noise_std, [n] * sites, epsilon=epsilon, delta=delta, calibration=calibration
    )
    return np.asarray(tau), np.asarray(sens)


@cache
def _z(sites: int, calibration: str, kind: str, view: str = "aggregator's joint view") -> float:
    tau, sens = _equal(sites, calibration)
    design = design_for(kind, tau, weights=np.full(sites, 1 / sites))
    return float(view_noise_multipliers(design, sensitivity=sens, view=view)[0])


# --- docs/composition.md -----------------------------------------------------------------------

ROWS = {  # the table's rows: (sites, calibration, design)
    "5, classic | paper's": (5, "classic", "cape"),
    "5, classic | joint-safe": (5, "classic", "joint"),
    "10, analytic | paper's": (10, "analytic", "cape"),
    "10, analytic | joint-safe": (10, "analytic", "joint"),
}


@cache
def _row(sites: int, calibration: str, kind: str) -> dict[str, Any]:
    z, delta = _z(sites, calibration, kind), 1e-3
    at50 = {a: composed_epsilon(z, releases=50, delta=delta, accountant=a) for a in ACCOUNTANTS}
    first = next(
        t
        for t in range(1, 1001)
        if composed_epsilon(z, releases=t, delta=delta, accountant="advanced")
        < composed_epsilon(z, releases=t, delta=delta, accountant="basic")
    )
    growth = dpcore.composition_growth(z, releases=50, delta=delta)
    return {"z": z, "one": growth.epsilon_one, **at50, "first": first, "growth": growth}


def _table_row(label: str) -> Callable[[], dict[str, Any]]:
    return lambda: _row(*ROWS[label])


for _label in ROWS:
    _sites_cal, _design = _label.split(" | ")
    quote(
        "composition.md",
        f"| {_sites_cal} | {_design}, joint view | {{z:#.3g}} | {{one:#.3g}} | {{exact:#.3g}} / "
        "{rdp:#.3g} / {zcdp:#.3g} / {advanced:#.3g} / {basic:#.3g} | T = {first} |",
    )(_table_row(_label))


def _spread(values: list[float], fmt: str) -> str:
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}–{hi}"


@quote(
    "composition.md",
    "50 releases cost {ratio} one release",
    "more than √50 = {sqrt50:.1f}×",
    "overstates it {basic}× at T = 50; RDP is {rdp} % and zCDP {zcdp} % above exact",
    "T* = {crossovers} for the four rows)",
)
def _composition_lesson() -> dict[str, Any]:
    rows = [_row(*r) for r in ROWS.values()]
    return {
        "ratio": _spread([r["growth"].ratio for r in rows], ".1f") + "×",
        "sqrt50": math.sqrt(50),
        "basic": _spread([r["basic"] / r["exact"] for r in rows], ".1f"),
        "rdp": _spread([100 * (r["rdp"] / r["exact"] - 1) for r in rows], ".0f"),
        "zcdp": _spread([100 * (r["zcdp"] / r["exact"] - 1) for r in rows], ".0f"),
        "crossovers": " / ".join(f"{r['growth'].crossover:,.0f}" for r in rows),
    }


@quote("composition.md", "z = 1, T = 100, δ = 10⁻⁵: {pld:.8f} vs {pld:.8f}")
def _composition_pld() -> dict[str, Any]:  # the exact side of the dp_accounting comparison
    return {"pld": composed_epsilon(1.0, releases=100, delta=1e-5)}


# --- docs/privacy.md ---------------------------------------------------------------------------


@quote("privacy.md", "≈ {s10:.2f} τ for S = 10, → {limit:.2f} τ for large S")
def _joint_factor() -> dict[str, Any]:
    tau, sens = _equal(10, "analytic")
    joint = _z(10, "analytic", "cape") * sens[0] / tau[0]  # σ_joint/τ from the core
    return {"s10": joint, "limit": math.sqrt(0.5)}


VERDICT_ROWS = {
    "classic, 0.5": ("classic", 0.5),
    "analytic, 0.5": ("analytic", 0.5),
    "classic, 2": ("classic", 2.0),
}


@cache
def _verdict(calibration: str, epsilon: float) -> dict[str, Any]:
    tau, sens = _equal(10, calibration, epsilon=epsilon)
    design = design_for("cape", tau, weights=np.full(10, 0.1))
    views = {
        v: float(view_noise_multipliers(design, sensitivity=sens, view=v)[0])
        for v in ("own release", "aggregator's joint view")
    }
    eps = {v: dpcore.gaussian_epsilon(z, sensitivity=1.0, delta=1e-3) for v, z in views.items()}
    return {
        "alone": dpcore.gaussian_epsilon(float(tau[0]), sensitivity=float(sens[0]), delta=1e-3),
        "own": eps["own release"],
        "joint": eps["aggregator's joint view"],
    }


for _label, (_cal, _eps) in VERDICT_ROWS.items():
    quote("privacy.md", f"| {_label} | {{alone:#.4g}} | {{own:#.4g}} | {{joint:#.4g}} |")(
        lambda c=_cal, e=_eps: _verdict(c, e)
    )


@quote(
    "privacy.md",
    "the same view would have with τ_s calibrated exactly (analytic): {joint:.4f} > 0.5",
)
@quote("deviations.md", "joint ε {joint:.4f} > ε_s = 0.5 with the analytic calibration at S = 10")
@quote("audit.md", "joint view σ/Δ = {z:.3g}, ε = {joint:.3g} > 0.5")
def _paper_joint() -> dict[str, Any]:
    return {"joint": _verdict("analytic", 0.5)["joint"], "z": _z(10, "analytic", "cape")}


@quote(
    "privacy.md",
    "τ_s is now {tau_analytic:.3g} instead of classic's {tau_classic:.3g}",
    "joint view ε = {joint_analytic:.3g} > 0.5 for every\nsite (classic: {joint_classic:.3g} ≤ 0.5",
    "(joint-view ε = {joint_safe:.3g}, for\nan aggregate std {p:.2f} × τ_pool)",
)
def _page_defaults() -> dict[str, Any]:
    """The Privacy explorer's and the Attack audit's default sites (5 × N_s = 1000, ε_s = 0.5,
    δ_s = 10⁻³, weights 1/5) under each calibration: τ_s and the aggregator's joint-view ε."""
    out: dict[str, Any] = {}
    for calibration in ("analytic", "classic"):
        tau, _ = _equal(5, calibration)
        out[f"tau_{calibration}"] = float(tau[0])
        out[f"joint_{calibration}"] = dpcore.gaussian_epsilon(
            _z(5, calibration, "cape"), sensitivity=1.0, delta=1e-3
        )
    out["joint_safe"] = dpcore.gaussian_epsilon(
        _z(5, "analytic", "joint"), sensitivity=1.0, delta=1e-3
    )
    designs = dpcore.mean_release_designs([1000] * 5, epsilon=0.5, delta=1e-3)
    out["p"] = designs.joint.tau_agg / designs.cape.tau_pool
    return out


@quote("privacy.md", "σ/Δ = {classic:.3f} vs {analytic:.3f}", "({analytic:.3f} vs {classic:.3f})")
def _calibration_at_10() -> dict[str, Any]:
    row = dpcore.calibration_comparison([10.0], delta=1e-3).iloc[0]
    return {"classic": row.classic, "analytic": row.analytic}


@quote(
    "privacy.md",
    "{ratio:.2f} at ε = 0.5, δ = 10⁻³ ({saving:.0f}% less noise std)",
    "{ratio10:.2f} at ε = 10, δ = 10⁻³",
)
def _calibration_ratio() -> dict[str, Any]:
    frame = dpcore.calibration_comparison([0.5, 10.0], delta=1e-3)
    ratio = frame.analytic / frame.classic
    return {"ratio": ratio[0], "saving": 100 * frame.saving[0], "ratio10": ratio[1]}


@quote("privacy.md", "above 1\nfrom ε ≈ {lo:.1f} (δ = 10⁻²) to {hi:.1f} (δ = 10⁻⁸)")
def _calibration_crossing() -> dict[str, Any]:
    from scipy.optimize import brentq

    def crossing(delta: float) -> float:
        def f(e: float) -> float:
            row = dpcore.calibration_comparison([e], delta=delta).iloc[0]
            return float(row.analytic / row.classic - 1.0)

        return brentq(f, 1.0, 30.0, xtol=1e-6)

    return {"lo": crossing(1e-2), "hi": crossing(1e-8)}


@quote(
    "privacy.md",
    "worst\njoint-view ε with 0, 1, 2, 5, 9 colluders is {safe}\n(paper's design:\n{paper})",
)
def _colluders() -> dict[str, Any]:
    tau, sens = _equal(10, "analytic")
    out = {}
    for kind in ("joint", "cape"):
        design = design_for(kind, tau, weights=np.full(10, 0.1))
        curve = dpcore.collusion_curve(design, sensitivity=sens, epsilon=0.5, delta=1e-3)
        joint = curve[curve.view == "all releases"].set_index("colluding").epsilon
        out["safe" if kind == "joint" else "paper"] = ", ".join(
            f"{joint[n]:.2f}" for n in (0, 1, 2, 5, 9)
        )
    return out


@cache
def _safe_row(sites: int) -> dict[str, Any]:
    """Equal sites, τ_s = 1: both designs' aggregate std over pooled, τ_e and τ_g."""
    tau, w = np.ones(sites), np.full(sites, 1 / sites)
    safe, paper = dpcore.joint_safe_design(tau, weights=w), dpcore.cape_design(tau, weights=w)

    def aggregate(design: Any) -> float:  # std of Σ μ_s g_s over τ_pool = 1/S
        return math.sqrt(float(np.sum(w**2 * design.var_g))) * sites

    return {
        "paper": aggregate(paper),
        "safe": aggregate(safe),
        "te": math.sqrt(safe.var_e[0]),
        "te_paper": math.sqrt(paper.var_e[0]),
        "tg": math.sqrt(safe.var_g[0]),
        "tg_paper": math.sqrt(paper.var_g[0]),
        "conv": math.sqrt(sites),
    }


for _s in (2, 5, 10, 50):
    quote(
        "privacy.md",
        f"| {_s} | {{paper:.3g}} | {{safe:.2f}} | {{te:.2f}} ({{te_paper:.2f}}) | "
        "{tg:.2f} ({tg_paper:.2f}) | {conv:.2f} |",
    )(lambda s=_s: _safe_row(s))


@quote("privacy.md", "which tends to p²/(p² − 1) τ_s² ≈ {limit:.1f} τ_s² for p = 1.05")
def _safe_limit() -> dict[str, Any]:
    return {"limit": 1.05**2 / (1.05**2 - 1)}


@quote(
    "privacy.md",
    "(std {none:.3f} instead of {cape:.3f} per unit τ)",
    "({naive:.3f} < {cape:.3f} above)",
    "drops to {s3:.2f} τ_s (S = 3), {s5:.2f} τ_s (S = 5), {s10:.3f} τ_s (S = 10)",
)
def _dropouts() -> dict[str, Any]:
    def one(sites: int) -> Any:
        design = dpcore.cape_design(np.ones(sites), weights=np.full(sites, 1 / sites))
        return dpcore.dropout_analysis(design, [0])

    ten = one(10)
    return {
        **ten.std,
        "s3": one(3).release_std["cape"],
        "s5": one(5).release_std["cape"],
        "s10": ten.release_std["cape"],
    }


# --- docs/audit.md -----------------------------------------------------------------------------


@quote("audit.md", "Planning: ≈ {trials:,} trials for the median\naudit to show ε > 0.5")
def _audit_planning() -> dict[str, Any]:
    trials = dpcore.audit_trials_needed(_z(10, "analytic", "cape"), delta=1e-3, target=0.5)
    return {"trials": round(trials, -3)}


AUDIT_ROWS = {  # the table's rows: (design label, attacker label) -> (design, view)
    ("paper's", "own release"): ("cape", "release"),
    ("paper's", "all releases"): ("cape", "joint"),
    ("joint-view-safe", "own release"): ("joint", "release"),
    ("joint-view-safe", "all releases"): ("joint", "joint"),
}


@cache
def _audit(kind: str, view: str) -> dict[str, Any]:
    """The seeded audit of tests/core/analysis/test_audit.py's headline: 400,000 trials, seed
    2026."""
    tau, sens = _equal(10, "analytic")
    design = design_for(kind, tau, weights=np.full(10, 0.1))
    audit = dpcore.audit_protocol(
        design, sensitivity=sens, site=0, view=view, delta=1e-3, trials=400_000, rng=2026
    ).audit
    bound = f"{audit.epsilon_lower:.3f}"
    return {
        "theory": audit.epsilon,
        "bound": f"**{bound} > 0.5**" if audit.epsilon_lower > 0.5 else bound,
        "fpr": audit.fpr,
        "fnr": audit.fnr,
    }


for (_design, _attacker), _args in AUDIT_ROWS.items():
    quote(
        "audit.md",
        f"| {_design} | {_attacker} | {{theory:.3f}} | {{bound}} | {{fpr:#.3g}} | {{fnr:#.3g}} |",
    )(lambda a=_args: _audit(*a))


# --- docs/cape-design.md, docs/deviations.md: the gains ---------------------------------------


@quote("cape-design.md", "{best:.3g}\nfor sizes [100, 100, 100, 1000], where G(n) = {g:.3g}")
@quote(
    "deviations.md",
    "{g:.3g} for sizes [100, 100, 100, 1000], where like for like it is "
    "{same:.3g} and against inverse-variance weights {best:.3g}",
)
def _gains() -> dict[str, Any]:
    sizes = [100, 100, 100, 1000]
    tau = dpcore.mean_noise_std(sizes, epsilon=1.0, delta=1e-5, calibration="analytic")
    design = dpcore.cape_design(tau, weights=np.asarray(sizes) / sum(sizes))
    return {
        "g": dpcore.cape_gain(sizes),
        "best": dpcore.best_conventional_gain(sizes),
        "same": design.gain_same_weights,
    }


# --- docs/tensor.md, docs/deviations.md: the MOG third-moment sensitivity ---------------------


@quote(
    "tensor.md", "that bound is {triangle:.3f}/N against the\nexact {exact:.3f}/N — {excess:.0f}%"
)
@quote("deviations.md", "is {triangle:.3f}/N vs exact {exact:.3f}/N at D = 10")
def _mog_sensitivity() -> dict[str, Any]:
    dim = 10
    sigma2 = 0.05 / (1 + math.sqrt(0.05 * _chi2(dim))) ** 2  # the public scaling B
    triangle = 1 + 3 * math.sqrt(dim) * sigma2
    exact = mog_third_moment_norm(dim, sigma2)
    return {"triangle": triangle, "exact": exact, "excess": 100 * (triangle / exact - 1)}


def _chi2(dim: int) -> float:
    from scipy.stats import chi2

    return float(chi2.ppf(0.999, dim))


# --- docs/trust-models.md -----------------------------------------------------------------------


@quote(
    "trust-models.md",
    "({bits:,} for D = 200, b = 32: {share} of the float64 matrix ({matrix:,} bits) CAPE's "
    "sites send)",
)
def _secagg_bits() -> dict[str, Any]:
    dim = 200
    cost = dpcore.secagg_cost(sites=10, coordinates=dim * (dim + 1) // 2, bits=32)
    matrix = dim * dim * 64
    share = cost.input_bits / matrix
    words = {0.25: "a quarter", 0.5: "half"}
    return {
        "bits": cost.input_bits,
        "matrix": matrix,
        "share": next(w for f, w in words.items() if abs(share - f) < 0.01),
    }


@quote(
    "trust-models.md",
    "preset (ε_s = 0.1, 0.5, 1, 2; KLS accountant) site 1's drop leaves ε = {first:.4f} (site 2, "
    "promised\n{first_promised:g}), but site 2's leaves site 1 at {second:.4f} > 0.1",
)
def _worst_dropout() -> dict[str, Any]:
    # issue #52: the trust table's dropout column, every dropped site against the one it names
    from dpcore import secagg_dropouts

    design = trust_secagg_design(
        [1000] * 4, epsilon=[0.1, 0.5, 1.0, 2.0], delta=[1e-4, 1e-3, 1e-3, 1e-2], dim=20
    )
    rows = [secagg_dropouts(design, dropped=(d,)).iloc[0] for d in (0, 1)]
    return {
        "first": float(rows[0]["epsilon"]),
        "first_promised": float(rows[0]["promised_epsilon"]),
        "second": float(rows[1]["epsilon"]),
    }


@quote(
    "trust-models.md", "classic calibration raised `OverflowError` there (the exact ε is {e:.2f})"
)
def _overflow_case() -> dict[str, Any]:
    # issue #52: Trust models at every ε_s = 100 (5 sites), classic, "same as the others":
    # a survivor's exact ε of the one-coordinate move when one site drops (σ = 3.98 per
    # share, 4 shares left, v = ⌊Δ̃⌋ = 233, δ_s − β_s = 9e-4)
    from dpcore import ddg_exact_epsilon

    return {"e": ddg_exact_epsilon(3.9778688922419776, shares=4, shift=233, delta=9e-4)}


@quote("trust-models.md", "(`shuffle_min_parties`: {n} at ε₀ = 0.5, δ = 10⁻³)")
def _shuffle() -> dict[str, Any]:
    return {"n": shuffle_min_parties(0.5, delta=1e-3)}


@quote(
    "trust-models.md",
    "noise std ÷ central — CAPE {cape:.3f}, joint-view-safe\n{joint:.3f}, secure aggregation "
    "{secagg:.3f}, conventional and shuffle {conv:.3f}, local {local:.1f}",
    "at the\ndefaults with analytic calibration {kls:.3f} against 0.5",
    "With the KLS accountant secure aggregation's std is {kls_std:.3f}× central.",
    "while the refutation ε is {exact:.3f}",
    "(one colluder does refute it: refutation ε {exact1:.3f})",
)
def _trust_table() -> dict[str, Any]:
    sites = dict(epsilon=0.5, delta=1e-3, dim=20)
    table = dpcore.trust_table(
        [1000] * 5, **sites, calibration="analytic", secagg_calibration="analytic"
    )
    ratio = table.set_index("scheme")["std_ratio"]
    design = trust_secagg_design([1000] * 5, **sites, calibration="analytic")
    kls = trust_secagg_design([1000] * 5, **sites, calibration="ddg")
    central = ratio["central"] * table.set_index("scheme")["noise_std"]["central"]
    return {
        "cape": ratio["cape"],
        "joint": ratio["cape_joint"],
        "secagg": ratio["secagg"],
        "conv": ratio["conventional"],
        "local": ratio["local"],
        "kls": float(np.max(design.epsilons())),
        "kls_std": kls.tau_agg / central,
        "exact": float(np.max(design.refutation_epsilons())),
        "exact1": float(np.max(design.refutation_epsilons(4))),
    }


@quote(
    "trust-models.md",
    "c = {c:.3f} and Δ̃ = {l2:.2f}, with one colluder (4 shares): the shift by ⌊Δ̃⌋ at "
    "δ − β gives {old:.5f}, the pure shifts by ⌊c⌋ and ⌈c⌉ at δ_s give {floor:.5f} and "
    "{ceil:.5f}, and the move the data can make gives {mix:.5f}",
    "the refutation ε is {near:.4f} (within {gap:.1f} % of 0.56) while the shift by ⌊Δ̃⌋ at "
    "δ − β gives {near_old:.4f}",
)
def _trust_refutation() -> dict[str, Any]:
    # issue #52: the default (5 × 1,000, ε = 0.5, δ = 1e-3, d = 210, analytic) with one
    # colluder, and the design whose sites 2–5 are promised 0.56 (site 1 colludes)
    from dpcore import ddg_exact_epsilon

    design = trust_secagg_design([1000] * 5, epsilon=0.5, delta=1e-3, calibration="analytic")
    c = float(design.site_l2[0])
    near = trust_secagg_design(
        [1000] * 5, epsilon=[0.5] + [0.56] * 4, delta=1e-3, calibration="analytic"
    )
    refuted = float(near.refutation_epsilons(4)[1])
    return {
        "c": c,
        "l2": float(design.rounded_l2[0]),
        "old": float(design.exact_epsilons(4)[0]),
        "floor": ddg_exact_epsilon(design.sigma, shares=4, shift=math.floor(c), delta=1e-3),
        "ceil": ddg_exact_epsilon(design.sigma, shares=4, shift=math.ceil(c), delta=1e-3),
        "mix": float(design.refutation_epsilons(4)[0]),
        "near": refuted,
        "gap": 100 * (1 - refuted / 0.56),
        "near_old": float(near.exact_epsilons(4)[1]),
    }


@quote(
    "trust-models.md",
    "the automatic γ = {auto} costs {cost:.1f}% of std; γ = 10⁻⁵ gives {g5:.2f}× central, "
    "10⁻⁴ {g4:.2f}×, 10⁻³ {g3:.1f}×",
)
def _trust_scales() -> dict[str, Any]:
    sites = dict(epsilon=0.5, delta=1e-3, dim=20, calibration="analytic")

    def ratio(scale: float | None) -> float:
        table = dpcore.trust_table(
            [1000] * 5, **sites, secagg_calibration="analytic", scale=scale
        ).set_index("scheme")
        return float(table.std_ratio["secagg"])

    auto = trust_secagg_design([1000] * 5, **sites).scale
    mantissa, exponent = f"{auto:.1e}".split("e")
    return {
        "auto": f"{mantissa}·10{_superscript(int(exponent))}",
        "cost": 100 * (ratio(None) - 1),
        "g5": ratio(1e-5),
        "g4": ratio(1e-4),
        "g3": ratio(1e-3),
    }


def _superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


KLS_ROWS = [
    (0.1, "ddg"),
    (0.1, "analytic"),
    (1.0, "ddg"),
    (1.0, "analytic"),
    (10.0, "ddg"),
    (10.0, "analytic"),
]


@cache
def _kls(epsilon: float, calibration: str) -> dict[str, Any]:
    """One row of "How close to central?" (D = 200, S = 10, N_s = 1000, δ = 0.01, b = 32)."""
    sens = dpcore.second_moment_sensitivity([1000] * 10)
    design = _quiet(
        dpcore.secagg_design,
        sens,
        epsilon=epsilon,
        delta=0.01,
        coordinates=200 * 201 // 2,
        calibration=calibration,
    )
    return {
        "sigma": design.sigma,
        "ratio": design.tau_agg / design.tau_central,
        "eps": float(np.max(design.epsilons())),
        "scale": design.scale,
        "range": design.representable,
        "inflation": 100 * (design.rounding_inflation - 1),
    }


for _e, _c in KLS_ROWS:
    quote(
        "trust-models.md",
        f"| {_e:g} | {_c} | {{sigma:.0f}} | {{ratio:.2f}} | {{eps:.3f}} |",
    )(lambda e=_e, c=_c: _kls(e, c))


@quote(
    "trust-models.md",
    "γ = {mantissa}·10⁻⁷ (auto), rounding inflates Δ by {inflation:.0f}%, the representable "
    "range is ±{range:.0f}",
)
def _kls_scale() -> dict[str, Any]:
    row = _kls(1.0, "ddg")
    return {**row, "mantissa": f"{row['scale'] * 1e7:.2f}"}


@quote("trust-models.md", "(`secagg_calibration` accepts\nonly {names})")
def _secagg_calibrations() -> dict[str, Any]:
    from dpcore.protocol.secagg import SECAGG_CALIBRATIONS

    names = [f'"{n}"' for n in SECAGG_CALIBRATIONS]
    return {"names": ", ".join(names[:-1]) + " and " + names[-1]}


# --- docs/trust-models.md: the precision question ----------------------------------------------


def _sci(x: float, digits: int = 1, *, power: bool = False) -> str:
    """A number as the docs' tables write it: ``6·10⁻¹⁶``, ``1·10⁻⁸`` or ``8·10⁴`` below 0.01 and
    from 1000 (``digits`` significant figures; ``power``: an exact power of ten as ``10⁻⁶``),
    else ``0.1``, ``5.6``."""
    if x == 0:
        return "0"
    if 0.01 <= abs(x) < 1000:
        return f"{x:.{digits}g}"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10.0**exponent, digits - 1)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    ten = f"10{_superscript(exponent)}"
    return ten if power and mantissa == 1 else f"{mantissa:.{digits - 1}f}·{ten}"


@cache
def _precision() -> Any:
    """``cancellation_table`` as the page measured it: 2000 coordinates, seed 0."""
    return dpcore.cancellation_table(coordinates=2000, rng=0).set_index(
        ["dtype", "sites", "tau_site"]
    )


PRECISION_ROWS = [
    ("float64", 10, 1e-6),
    ("float64", 100, 1e-6),
    ("float32", 10, 1.0),
    ("float32", 10, 1e-3),
    ("float32", 10, 1e-6),
    ("float32", 100, 1e-6),
]


def _precision_row(dtype: str, sites: int, tau: float) -> dict[str, Any]:
    row = _precision().loc[(dtype, sites, tau)]
    return {
        "tau": _sci(tau, power=True),
        "agg": _sci(row.tau_agg, power=True),
        "zero": _sci(row.zero_sum_ratio),
        "est": _sci(row.estimate_ratio, 2 if row.estimate_ratio >= 0.01 else 1),
        "masks": int(row.mask_residual),
    }


for _row_key in PRECISION_ROWS:
    quote(
        "trust-models.md",
        f"| {_row_key[0]} | {_row_key[1]} | {{tau}} | {{agg}} | {{zero}} | {{est}} | {{masks}} |",
    )(lambda k=_row_key: _precision_row(*k))


@quote(
    "trust-models.md",
    "the error is about {f64} of the remaining noise even\nat S = 100 and τ_agg = 10⁻⁸",
    "falls below about {threshold} times the data's magnitude** (1% of the noise)",
    "(ulp(1) ≈ {ulp} per site)",
    "at S = 100 {s100:.1f} times larger",
    "the E's still cancel to within {zero} of the noise",
    "that is N ≳ {samples} samples at ε = 10, δ = 10⁻³ (analytic\ncalibration)",
)
def _precision_prose() -> dict[str, Any]:
    table = _precision()
    threshold = table.loc[("float32", 10, 1e-6)].estimate_error / 0.01  # τ_agg: error = 1 %
    z = dpcore.gaussian_sigma(1.0, epsilon=10.0, delta=1e-3, calibration="analytic")  # τ_agg·N
    return {
        "f64": _sci(table.loc["float64"].estimate_ratio.max()),
        "threshold": _sci(threshold),
        "ulp": _sci(float(np.finfo(np.float32).eps), 2),
        "s100": table.loc[("float32", 100, 1e-6)].estimate_ratio,
        "zero": _sci(table.loc["float32"].zero_sum_ratio.max()),
        "samples": _sci(z / threshold, power=True),
    }


# --- docs/learn.md ------------------------------------------------------------------------------


@quote(
    "learn.md",
    "ε = 10 the classic calibration is *not* enough noise (its real δ is {real:.2f} > {delta}), "
    "at\nε = 0.5 it {verdict}.",
    "— {low} at ε = 0.5, {high} at ε = 5",
)
def _lesson_calibration() -> dict[str, Any]:
    from dpcore import likelihood_factor
    from learning.settings import LESSON_DELTA

    def sigma(epsilon: float, method: str) -> float:  # Δ = 1, as lesson 1's classic_check
        return _quiet(
            dpcore.gaussian_sigma, 1.0, epsilon=epsilon, delta=LESSON_DELTA, calibration=method
        )

    real = dpcore.gaussian_delta(sigma(10.0, "classic"), sensitivity=1.0, epsilon=10.0)
    enough = sigma(0.5, "classic") >= sigma(0.5, "analytic")
    return {
        "real": real,
        "delta": f"{LESSON_DELTA:g}",
        "verdict": "is" if enough else "is not",
        "low": f"{likelihood_factor(epsilon=0.5):.3g}×",
        "high": f"{likelihood_factor(epsilon=5.0):.3g}×",
    }


@quote("learn.md", "(a mean of N_s = {n} values", "into the {steps} steps of Algorithm 1")
def _stepper() -> dict[str, Any]:
    import inspect

    from dpcore import protocol_demo
    from dpcore.protocol.protocol_demo import VALUE_KINDS
    from learning.protocol_steps import protocol_steps

    def steps(sites: int, kind: str) -> int:
        return len(protocol_steps(protocol_demo(sites=sites, kind=kind, epsilon=1.0, seed=0)))

    # a + b·S for every S the stepper offers and both kinds, else the counts themselves
    counts = {(s, k): steps(s, k) for s in (3, 4, 5) for k in VALUE_KINDS}
    per_site = counts[4, VALUE_KINDS[0]] - counts[3, VALUE_KINDS[0]]
    fixed = counts[3, VALUE_KINDS[0]] - 3 * per_site
    linear = all(c == fixed + per_site * s for (s, _), c in counts.items())
    return {
        "n": inspect.signature(protocol_demo).parameters["n_per_site"].default,
        "steps": f"{per_site}S + {fixed}" if linear else str(counts),
    }


@quote(
    "learn.md",
    "{slots} slots that add up to {minutes} minutes, {slack} of them\n  slack",
    "refreshed every {refresh} s",
    "the page checks the room\n  every {refresh} s",
    "**minimum count** ({minimum} by default",
    "(its ε chosen from {eps_low}–{eps_high})",
)
def _class_kit() -> dict[str, Any]:
    from learning.plan import PLAN
    from learning.quiz_tally import DEFAULT_MINIMUM, EPSILONS, REFRESH_SECONDS

    return {
        "slots": len(PLAN),
        "minutes": sum(slot.minutes for slot in PLAN),
        "slack": sum(slot.slack for slot in PLAN),
        "refresh": REFRESH_SECONDS,
        "minimum": DEFAULT_MINIMUM,
        "eps_low": f"{EPSILONS[0]:g}",
        "eps_high": f"{EPSILONS[-1]:g}",
    }


@quote("learn.md", "All {steps} steps of the {lessons} lessons draw a computed figure")
def _notebooks() -> dict[str, Any]:
    from learning.lessons import LESSONS

    return {"steps": sum(len(lesson.steps) for lesson in LESSONS), "lessons": len(LESSONS)}


@quote("learn.md", "splits N = {total} samples over\n  S = {first} … {last} sites")
def _split() -> dict[str, Any]:
    from learning.settings import SITE_GRID, SPLIT_TOTAL

    return {
        "total": f"{SPLIT_TOTAL:,}".replace(",", " "),
        "first": SITE_GRID[0],
        "last": SITE_GRID[-1],
    }


@cache
def _lesson5() -> dict[str, Any]:
    """Lesson 5's reveals, from the scenes the lesson draws (ui/lesson_scenes.py), and the
    tensor sweeps it used before through the same helpers: 3 runs at seed 0 (issue #22) and
    8 runs at the pages' seed (issue #51)."""
    import logging
    from dataclasses import replace

    from streamlit.runtime.caching import cache_data_api

    # the cached wrappers run without an app: Streamlit would say so for each of them
    logging.getLogger(cache_data_api.__name__).setLevel(logging.ERROR)
    from learning.settings import OTD_SETTINGS
    from ui import lesson_scenes as lessons
    from ui.cached import otd_frame
    from ui.specs import otd_spec

    pca = lessons.pca_scene(0.5).numbers
    split = lessons.pca_sites_scene(0.5).numbers
    otd = lessons.tensor_scene(0.5).numbers

    def duel(runs: int, seed: int) -> dict[str, Any]:
        then = replace(OTD_SETTINGS, epsilon=0.5, runs=runs, seed=seed)
        return lessons._duel(
            lessons._stats(otd_frame(otd_spec(then), then.seed), "component_error", 0.5),
            higher_is_better=False,
            winner="capeAGN",
        )

    eight = duel(8, OTD_SETTINGS.seed)  # the runs before streams were keyed by name
    low = lessons.tensor_scene(0.01).numbers
    return {
        "pca_z": pca["z"],
        "pca_cape": 100 * pca["cape"],
        "pca_conv": 100 * pca["conv"],
        "split_z": split["z"],
        "otd": otd,
        "eight": eight,
        "low": low,
        "estimate": dpcore.estimate_work(otd_spec(OTD_SETTINGS)).seconds,
        "heavy": dpcore.HEAVY_SECONDS,
        "pca_runs": pca["runs"],
        "otd_runs": otd["runs"],
    }


@quote(
    "learn.md",
    "capePCA against conventional at ε = 0.5 (S = 10, N_s = 1000, {pca_runs} runs) by {pca_z:.1f}"
    "\nstandard errors; the gap after splitting the data over 50 sites instead of 2 grows by "
    "{split_z:.1f}.",
    "the same 8 runs now give {eight[cape]:.3f} ± {eight[cape_se]:.3f} against "
    "{eight[conv]:.3f} ± {eight[conv_se]:.3f}, {eight[z]:.1f} standard errors",
    "It now uses {otd_runs} runs ({otd[cape]:.3f} ± {otd[cape_se]:.3f} against {otd[conv]:.3f} "
    "± {otd[conv_se]:.3f}: {otd[z]:.1f} standard errors)",
    "an estimated {estimate:.2f} s of work, under the {heavy:g} s from which the tensor page "
    "queues a job",
    "At ε = 0.01 the {otd_runs} runs separate them too ({low[cape]:.3f} against "
    "{low[conv]:.3f}: {low[z]:.1f} standard errors)",
    "the lesson's {pca_cape:.1f} % / {pca_conv:.1f} %",
    slow=True,  # four lesson scenes and two tensor sweeps: ~3 s
)
def _lesson5_quotes() -> dict[str, Any]:
    return _lesson5()


# --- README.md ----------------------------------------------------------------------------------


@quote(
    "README.md",
    "the joint-view-safe design's price ({price:.0f}% aggregate std)",
    "(ε and δ panels: N_s = {n} = {pool:,}/S instead of {paper:,}; the N_s panel: the paper's "
    "grid\n× {pool:,}/{largest:,}, {lo}…{hi})",
    '"within {se:g} s.e." (tie)',
)
def _readme() -> dict[str, Any]:
    from dpcore.experiments import paper
    from dpcore.protocol.joint_safe import DEFAULT_PRICE

    panels = {p.axis: p for p in paper._pca_panels() if p.data == "mnist"}
    subset = {axis: paper.standin(p, "mnist_5k") for axis, p in panels.items()}
    grid = subset["n_per_site"].params["n_per_site"]
    return {
        "price": 100 * (DEFAULT_PRICE - 1),
        "n": " / ".join(
            sorted({f"{subset[a].params['n_per_site']:,}" for a in ("epsilon", "delta")})
        ),
        "pool": paper.BUNDLED_POOL["mnist_5k"],
        "paper": panels["epsilon"].params["n_per_site"],
        "largest": max(paper.PCA_N_TOTAL),
        "lo": grid[0],
        "hi": grid[-1],
        "se": paper.NOISE_SE,
    }


# --- docs/reliability.md, docs/scale-out.md: limits quoted from their constants ------------------


def _gib(n: float) -> str:
    return f"{n / 2**30:g} GiB"


@quote(
    "reliability.md",
    "| estimated wall time of one sweep | {minutes:g} minutes | `dpcore/experiments/limits.py` "
    "(`MAX_SECONDS`) |",
    "| estimated memory of one sweep | {memory} | `dpcore/experiments/limits.py` (`MAX_MEMORY`) |",
    "| grid points × runs | {tasks:,} | `dpcore/experiments/limits.py` (`MAX_TASKS`) |",
    "| tensor dimension D | {tensor} (D³ doubles per site and message) | `otd_sweep` |",
    "| {sites:,} (each S×S matrix at most {matrix:g} MiB, a {share}th of `MAX_MEMORY`) |",
    "| at least {min_delta:g} (δ/{beta:g} bounds the rounding's failure",
    "| real data: columns D | {dim:,} | `dpcore/experiments/realdata.py` (`MAX_DIM`) |",
    "| real data: rows | at least {rows_lo:,}, at most {rows_hi:,} | "
    "`dpcore/experiments/realdata.py` |",
    "| local file read (MNIST, Covertype) | {file_mib:g} MiB,",
    "| CSV upload | {upload:g} MB | `.streamlit/config.toml` (`server.maxUploadSize`) |",
    "longest line {line:g} KiB, ≤ {dim:,} columns in the first lines, rows × columns ≤ {cells:,} "
    "cells",
    "| run log upload (protocol stepper) | {log_lines:,} lines, counted before any parse; text "
    "fields of at most {log_text:,} characters (a refusal's party and reason {log_reason:,}); "
    "read once per content (SHA-256), the {log_kept} last replays kept |",
    "| {job_mem} of address space, {job_min:g} minutes (loads: {load_min:g} minutes), nice {nice},",
    "| {browser_mb} MB per browser, all its tabs together",
    "{server_mb} MB per server (`CAPE_UPLOAD_SERVER_MB`), and no browser more than {half} the "
    "server's bound",
    "a closed tab's files freed {free:g} s after it disconnects",
    "waited for {connect:g} s (`CONNECT_SECONDS`)",
    "each remote call waited for {factor:g}× its work estimate, at least {floor:g} s "
    "(`remote_seconds`;",
    "the failure remembered {memory_s:g} s",
    "(an estimated {heavy_s:g} s or more of work, or a real data set;",
    "an eigendecomposition costs ≈ {eigh:g} ms·(D/200)³, the third-moment sums\n≈ N·D³/10{flops} s",
    "the heaviest, MNIST against N_s, is estimated at about {heaviest:.0f} minutes.",
    "at most {restarts} restarts per process in {window:g} s (`MAX_RESTARTS`, `RESTART_WINDOW`)",
    "`split_sizes` S ≤ {split_sites:,} and N_s ≤ 10{split_n}, `synthetic_dataset` D ≤ {synth:,}",
    "`collusion_curve` S ≤ {collusion} (exhaustive up to S = {exact},",
    "anyone else has used the app in the last {active} minutes",
)
def _reliability() -> dict[str, Any]:
    import tomllib

    from deploy import class_server
    from dpcore import HEAVY_SECONDS, cluster, estimate_pca, resources
    from dpcore.analysis import views
    from dpcore.experiments import realdata
    from dpcore.factorization import datasets
    from dpcore.protocol import secagg
    from learning import run_replay
    from serving import jobs, uploads
    from ui.cached import replay as cached_replay

    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    heavy, loads = jobs.HEAVY.limits, jobs.LOADS.limits
    # MNIST against N_s (tests/core/experiments/test_limits.py: the heaviest)
    mnist = dpcore.PAPER_PANELS["2e"]
    grid = mnist.params["n_per_site"]
    estimate = estimate_pca(
        dim=784,
        sites=mnist.params["sites"],
        n_max=max(grid),
        pool=60_000,
        points=len(grid),
        runs=10,
        algorithms=list(mnist.algorithms),
    )
    flops = math.log10(resources.FLOPS)
    return {
        "minutes": dpcore.MAX_SECONDS / 60,
        "memory": _gib(dpcore.MAX_MEMORY),
        "tasks": resources.MAX_TASKS,
        "tensor": resources.MAX_DIM_TENSOR,
        "sites": resources.MAX_DESIGN_SITES,
        "matrix": resources.MAX_DESIGN_SITES**2 * 8 / 2**20,
        "share": dpcore.MAX_MEMORY // (resources.MAX_DESIGN_SITES**2 * 8),
        "min_delta": secagg.MIN_DELTA,
        "beta": 1 / secagg.BETA_FRACTION,
        "dim": dpcore.MAX_DATA_DIM,
        "rows_lo": realdata.MIN_ROWS,
        "rows_hi": realdata.MAX_ROWS,
        "file_mib": realdata.MAX_FILE_BYTES / 2**20,
        "upload": config["server"]["maxUploadSize"],
        "line": realdata.MAX_LINE_BYTES / 1024,
        "cells": dpcore.MAX_UPLOAD_CELLS,
        "log_lines": run_replay.MAX_LINES,
        "log_text": run_replay.MAX_TEXT,
        "log_reason": run_replay.MAX_REASON,
        "log_kept": cached_replay.MAX_LOGS,
        "job_mem": _gib(heavy.memory_bytes),
        "job_min": heavy.seconds / 60,
        "load_min": loads.seconds / 60,
        "nice": heavy.nice,
        "browser_mb": uploads.DEFAULT_BROWSER_MB,
        "server_mb": uploads.DEFAULT_SERVER_MB,
        "half": {0.5: "half"}.get(uploads.MAX_SHARE, f"{uploads.MAX_SHARE:g}"),
        "free": uploads.FREE_AFTER_SECONDS,
        "connect": cluster.CONNECT_SECONDS,
        "factor": cluster.REMOTE_FACTOR,
        "floor": cluster.REMOTE_FLOOR_SECONDS,
        "memory_s": cluster.FAILURE_MEMORY_SECONDS,
        "heavy_s": HEAVY_SECONDS,
        "eigh": 1000 * resources.EIGH_200,
        "flops": _superscript(round(flops)) if flops == round(flops) else f"^{flops}",
        "heaviest": estimate.seconds / 60,
        "split_sites": datasets.MAX_SITES,
        "split_n": _superscript(round(math.log10(datasets.MAX_SAMPLES_PER_SITE))),
        "synth": datasets.MAX_SYNTHETIC_DIM,
        "collusion": views.MAX_COLLUSION_SITES,
        "exact": max(
            s for s in range(2, 100) if math.comb(s, s // 2) <= views.MAX_EXACT_COALITIONS
        ),
        "active": {120.0: "two"}.get(jobs.ACTIVE_SECONDS, f"{jobs.ACTIVE_SECONDS / 60:g}"),
        "restarts": class_server.MAX_RESTARTS,
        "window": class_server.RESTART_WINDOW,
    }


@quote(
    "reliability.md",
    "every second with {check:g} s to answer (`timeout check {check:g}s`, `inter {inter:g}s`, "
    "`fall {fall}`)",
    "after {unhealthy:g} s without an answer (`UNHEALTHY_SECONDS`)",
    "with {silent:g} s to answer (`LOOP_SILENT_SECONDS`)",
)
def _class_server_health() -> dict[str, Any]:
    from deploy import app_process, class_server

    config = class_server.TEMPLATE.read_text()

    def number(pattern: str) -> float:
        found = re.search(pattern, config)
        assert found is not None, pattern
        return float(found[1])

    return {
        "check": number(r"timeout check (\d+)s"),
        "inter": number(r"default-server inter (\d+)s"),
        "fall": int(number(r"default-server .*\bfall (\d+)")),
        "unhealthy": class_server.UNHEALTHY_SECONDS,
        "silent": app_process.LOOP_SILENT_SECONDS,
    }


@quote(
    "scale-out.md",
    "If the scheduler cannot be reached (after\n{cli:g} s)",
    "each server keeps its last {kept} results alive on the cluster",
    "bounded by `CONNECT_SECONDS` ({connect:g} s) plus one",
    "waited for `remote_seconds`: {factor:g}× the work estimate of its sweep\n  spec "
    "(`dpcore.experiments.limits`), at least {floor:g} s; a call with nothing to estimate "
    "(a paper panel by\n"
    "  key) {factor:g} × {unknown:g} s, {ceiling} on one request.",
    "computing here for the next {memory_s:g} s`; the failure is\n  remembered for {memory_s:g} s "
    "(`FAILURE_MEMORY_SECONDS`",
    "Once a run has taken {progress:g} s\nit prints a progress line on stderr at least every "
    "{progress:g} s",
    "in chunks of about {chunk:g} s of a worker's time",
    "a block at a time ({per_worker} tasks a worker, at least {block})",
)
def _scale_out() -> dict[str, Any]:
    from dpcore import cli, cluster
    from dpcore.experiments.sweeps import otd

    same = cluster.UNKNOWN_WORK_SECONDS == dpcore.MAX_SECONDS
    return {
        "ceiling": "the core's ceiling" if same else f"not MAX_SECONDS ({dpcore.MAX_SECONDS:g})",
        "cli": cli.CONNECT_SECONDS,
        "kept": cluster.KEPT_RESULTS,
        "connect": cluster.CONNECT_SECONDS,
        "factor": cluster.REMOTE_FACTOR,
        "floor": cluster.REMOTE_FLOOR_SECONDS,
        "unknown": cluster.UNKNOWN_WORK_SECONDS,
        "memory_s": cluster.FAILURE_MEMORY_SECONDS,
        "progress": cli.PROGRESS_SECONDS,
        "chunk": dpcore.parallel.CHUNK_SECONDS,
        "per_worker": otd.BLOCK_TASKS_PER_WORKER,
        "block": otd.BLOCK_TASKS,
    }


# --- measured: Monte Carlo over seeds (run with --measured) ------------------------------------

SWEEP = {"dim": 20, "k": 3, "sites": 5, "n_per_site": 400, "pool_size": 5000, "epsilon": 3.0}
SEEDS = range(10)


@cache
def _bit_sweep() -> dict[str, Any]:
    bits, scales = {}, {}
    for seed in SEEDS:
        common = dict(**SWEEP, runs=20, algorithms=["secagg"], rng=seed)
        df = dpcore.pca_sweep(**common, secagg_bits=[8, 12, 16, 20, 32])
        for b, v in df.groupby("secagg_bits").captured_energy_ratio.mean().items():
            bits.setdefault(b, []).append(v)
        df = dpcore.pca_sweep(**common, secagg_scale=[1e-5, 1e-4, 1e-3])
        for g, v in df.groupby("secagg_scale").captured_energy_ratio.mean().items():
            scales.setdefault(g, []).append(v)

    return {
        "b32": _spread(bits[16] + bits[20] + bits[32], ".2f"),
        "b12": _median(bits[12], ".2f"),
        "b8": _median(bits[8], ".2f"),
        "g5": _spread(scales[1e-5], ".2f"),
        "g4": _median(scales[1e-4], ".2f"),
        "g3": _median(scales[1e-3], ".2f"),
    }


quote(
    "trust-models.md",
    "the captured energy ratio was {b32} at b = 16, 20 and 32, a median of\n{b12} at b = 12 "
    "and {b8} at b = 8",
    "along γ it was {g5} at γ = 10⁻⁵, {g4} at 10⁻⁴ and {g3} at 10⁻³",
    measured=True,
)(lambda: _quiet(_bit_sweep))


@cache
def _trust_pca() -> dict[str, Any]:
    """The Trust-models page's measured energies, wrap-arounds and scales over seeds 0–9."""
    sites = dict(epsilon=0.5, delta=1e-3, dim=20, calibration="analytic")
    sites["secagg_calibration"] = "analytic"
    energy: dict[str, list[float]] = {}
    bits: dict[int, list[float]] = {}
    wraps: dict[int, list[float]] = {}
    scales: dict[float, list[float]] = {}
    for seed in SEEDS:
        df = dpcore.trust_pca([1000] * 5, **sites, runs=20, rng=seed)
        for scheme, v in df.groupby("scheme").captured_energy_ratio.mean().items():
            energy.setdefault(scheme, []).append(v)
        for b in (8, 12, 16, 20, 32):
            sec = dpcore.trust_pca([1000] * 5, **sites, runs=10, rng=seed, bits=b)
            sec = sec[sec.scheme == "secagg"]
            bits.setdefault(b, []).append(sec.captured_energy_ratio.mean())
            wraps.setdefault(b, []).append(sec.wraparounds.mean())
        for g in (1e-5, 1e-4, 1e-3):
            sec = dpcore.trust_pca([1000] * 5, **sites, runs=10, rng=seed, scale=g)
            scales.setdefault(g, []).append(
                sec[sec.scheme == "secagg"].captured_energy_ratio.mean()
            )
    out = {name: _median(v, ".3f") for name, v in energy.items()}
    out |= {f"b{b}": _median(v, ".2f") for b, v in bits.items() if b < 20}
    out["b32"] = _median(bits[20] + bits[32], ".3f")
    out |= {f"w{b}": _median(v, ".1f") for b, v in wraps.items()}
    out["g5"], out["g4"], out["g3"] = (
        _median(scales[1e-5], ".3f"),
        _median(scales[1e-4], ".2f"),
        _median(scales[1e-3], ".2f"),
    )
    wide = max(wraps[20] + wraps[32])
    out["nowrap"] = "no wrap-around" if wide == 0 else f"up to {wide:.1f} wrap-arounds"
    return out


def _median(values: list[float], fmt: str) -> str:
    return f"{np.median(values):{fmt}} ({_spread(values, fmt)})"


quote(
    "trust-models.md",
    "captured energy (20 runs per seed) — central {central}, CAPE {cape}, secure aggregation "
    "{secagg}, joint-view-safe {cape_joint}, conventional {conventional}, shuffle {shuffle}, "
    "local {local}.",
    "b = 20 and 32 give {nowrap} ({b32}); b = 16 wraps {w16} of 210 coordinates per round "
    "({b16}), b = 12 wraps {w12} ({b12}), b = 8 wraps {w8} ({b8}).",
    "seed): {g5} at γ = 10⁻⁵, {g4} at 10⁻⁴, {g3} at 10⁻³.",
    measured=True,
)(_trust_pca)


# --- docs/privacy.md: the remedy against a lying aggregator (issue #48) --------------------------


def _remedy_row(sites: int) -> dict[str, Any]:
    """Worst ε over which site drops, demo sites (federated command), each view."""
    n = np.array([150 + 100 * (s + 1) for s in range(sites)])
    tau = dpcore.gaussian_sigmas(
        dpcore.mean_sensitivity(n), epsilon=1.0, delta=1e-5, calibration="analytic"
    )
    out: dict[str, Any] = {"s": sites}
    for kind in ("joint", "cape"):
        made = design_for(kind, tau, weights=n / n.sum())
        cases = [
            dpcore.remedy_worst_case(made, [d], sensitivity=1 / n, epsilon=1.0, delta=1e-5)
            for d in range(sites)
        ]
        for view, key in (("sealed", "sealed"), ("late", "late"), ("late, repeated", "many")):
            out[f"{key}_{kind}"] = max(float(c.epsilon[view].max()) for c in cases)
    return out


for _s in (3, 10, 20):
    quote(
        "privacy.md",
        f"| {_s} | {{sealed_joint:.3f}} | {{late_joint:.3f}} | {{many_joint:.3f}} | "
        "{sealed_cape:.3f} |",
    )(lambda s=_s: _remedy_row(s))


def _remedy_measured() -> dict[str, Any]:
    from benchmarks.remedy_views import demo_design, estimate_errors

    out = {}
    for sites in (3, 10, 20):
        design, _ = demo_design(sites)
        d = sites // 2
        err = estimate_errors(design, d, True, 1, d, 400, sites)
        out[f"s{sites}"] = float(np.std(err)) / design.tau_site[d]
    return out


quote(
    "privacy.md",
    "the dropped site's estimate has {s3:.2f} / {s10:.2f} / {s20:.2f} τ_d",
    measured=True,
)(_remedy_measured)


# --- docs/trust-models.md: CAPE across real sites (issue #48) ------------------------------------


def _federation_rows() -> dict[str, Any]:
    from dpcore import federation_trust

    table = federation_trust([1000] * 5, epsilon=0.5, delta=1e-3)
    lines = []
    for r in table.to_dict("records"):
        cells = []
        for kind in ("cape", "joint"):
            if r[f"{kind} site"] == 0:
                cells.append("nothing released")
            else:
                mark = "✓" if r[f"{kind} meets"] else "✗"
                cells.append(f"{r[f'{kind} epsilon']:.3f} {mark}")
        lines.append(f"| {r['case']} | {r['trusted']} | {r['holds']} | {' / '.join(cells)} |")
    return {"rows": "\n".join(lines)}


quote("trust-models.md", "{rows}")(_federation_rows)


# --- docs/peers.md: dpcore's rows of the peers table (issue #52) ---------------------------------


@cache
def _peer_rows() -> dict[str, Any]:
    """dpcore's rows of `python -m benchmarks.peers` (seeded; the peer libraries' rows are the
    command's own output: OpenDP draws from OS entropy)."""
    from benchmarks import peers

    args = peers.parse([])
    data = peers.draws(args.data, args.draws, args.sites, args.seed)
    rows = [peers.ours(n, data, args, e) for e in args.epsilon for n in peers.OURS]
    lines = peers.markdown(rows, args).splitlines()[2:]
    out = {f"r{i}": " | ".join(line.split(" | ")[:4]) for i, line in enumerate(lines)}
    return out | {"random": peers.random_level(data, args.k)}


def _peer_count() -> int:
    from benchmarks import peers

    return len(peers.OURS) * len(peers.parse([]).epsilon)


for _i in range(_peer_count()):  # dpcore's entries × the default ε grid
    quote("peers.md", f"{{r{_i}}} |", measured=True, slow=True)(_peer_rows)
quote("peers.md", "subspace: {random} of the optimum", measured=True, slow=True)(_peer_rows)


# --- docs/baselines.md: the Grammenos comparison as tail probabilities (issue #52) ---------------


@cache
def _grammenos_tails() -> dict[str, Any]:
    """`python -m dpcore.experiments.grammenos --tail 0.5 1 --draws 200` (seed 300)."""
    from dpcore.experiments import grammenos as g

    curves = {a: g.per_data_set(a, draws=200, seed=300) for a in (0.5, 1.0)}
    tails = {a: g.tail_probabilities(curves[a], g.PUBLISHED_B[a]) for a in (0.5, 1.0)}
    pct = lambda t: f"{100 * t:.1f} %"  # noqa: E731
    p = lambda a, label: f"{g.curve_p_value(curves[a], g.PUBLISHED_B[label]):.3f}"  # noqa: E731
    return {
        "t05_1": pct(tails[0.5]["tail"][1]),
        "sd05_1": f"{tails[0.5]['sd'][1]:.3f}",
        "t05_05": pct(tails[0.5]["tail"][0]),
        "t1_1": pct(tails[1.0]["tail"][1]),
        "p05_05": p(0.5, 0.5),
        "p1_05": p(1.0, 0.5),
        "p1_1": p(1.0, 1.0),
        "p05_1": p(0.5, 1.0),
        "pmin": max(p(a, label) for a in (0.5, 1.0) for label in (0.01, 0.1)),
    }


quote(
    "baselines.md",
    "value at ε = 1 (0.41) is reached by {t05_1} of the α = 0.5 data sets (sd {sd05_1} over "
    "data sets, not 0.022), the one at ε = 0.5 by {t05_05}; the published α = 1 value at ε = 1 "
    "(0.29) by {t1_1} of the α = 1 data sets.",
    "the curve published as α = 0.5 has p = {p05_05} among α = 0.5 data sets and p = {p1_05} "
    "among α = 1 data sets; the curve published as α = 1 has p = {p1_1} among α = 1 data sets "
    "and p = {p05_1} among α = 0.5 data sets. (The curves published as α = 0.01 and 0.1 give "
    "p = {pmin} at both,",
    measured=True,
    slow=True,
)(_grammenos_tails)


def _block_rows() -> dict[str, Any]:
    """`python -m dpcore.experiments.block_size` (docs/baselines.md, issue #52)."""
    from dpcore.experiments.block_size import block_table

    lines = [
        f"| `{r.algorithm}` | {r.rounds} | {r._3:.3f} | {r._4:.3f} | {r.gain:.3f} "
        f"[{r._6:.3f}, {r._7:.3f}] |"
        for r in block_table().itertuples()
    ]
    return {"rows": "\n".join(lines)}


quote("baselines.md", "{rows}", measured=True, slow=True)(_block_rows)


@cache
def _rounds_draws() -> dict[str, Any]:
    """One-shot levels of the rounds experiment's setting over data draws (seeds 0–4)."""
    from dpcore import optimal_energy

    setting = dict(dim=200, k=50, sites=10, n_per_site=1000, delta=0.01, calibration="classic")
    levels: dict[tuple[str, float], list[float]] = {}
    for seed in range(5):
        frame = _quiet(
            dpcore.pca_sweep, **setting, epsilon=[0.1, 1.0, 10.0], runs=5,
            algorithms=["cape", "conv"], rng=seed,
        )  # fmt: skip
        for key, v in frame.groupby(["algorithm", "epsilon"]).captured_energy_ratio.mean().items():
            levels.setdefault(key, []).append(float(v))
    rand = []
    for seed in range(3):
        a = dpcore.synthetic_dataset(dim=200, k=50, n_samples=60_000, rng=seed).reference
        rand.append(50 * float(np.trace(a)) / 200 / optimal_energy(a, 50))
    cell = lambda v: f"{np.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"  # noqa: E731
    r = float(np.median(rand))
    return {
        "rand": f"{r:.3f} ({min(rand):.3f}–{max(rand):.3f})",
        "cape_above": f"{(0.3372 / r - 1):.0%}",
        "conv_above": f"{(0.3011 / r - 1):.0%}",
        "cape01": cell(levels["cape", 0.1]),
        "cape1": cell(levels["cape", 1.0]),
        "cape10": cell(levels["cape", 10.0]),
        "conv1": cell(levels["conv", 1.0]),
        "width": f"{max(levels['cape', 1.0]) - min(levels['cape', 1.0]):.3f}",
    }


quote(
    "baselines.md",
    "(K/D)·tr(A)/Σ_{{k≤K}} λ_k = {rand} (over three synthetic pools): `npm` 0.2905, "
    "`npm_distributed` 0.2872; one-shot capePCA (0.3372) is {cape_above} above it and `conv` "
    "(0.3011) {conv_above}.",
    "one-shot capePCA's level is {cape01} at ε = 0.1, {cape1} at ε = 1 and {cape10} at ε = 10 "
    "(median [min, max] over the draws), `conv`'s {conv1} at ε = 1: the data draw moves a "
    "level at ε = 1 by up to {width},",
    measured=True,
    slow=True,
)(_rounds_draws)


# --- docs/performance.md: the Baselines estimate (issue #50) ------------------------------------
# The estimate column of the table (on the 2 workers of the machine that measured it); the CPU
# columns are measured (python -m benchmarks.baselines_estimate), not recomputed.

_BASELINE_ROWS = {
    "page default (D = 50, K = 10, S = 10, N_s = 1000, 5 runs)": "page default",
    "1 run": "1 run",
    "20 runs": "20 runs",
    "D = 20, K = 5": "D = 20, K = 5",
    "D = 100": "D = 100",
    "D = 200, K = 50, 2 runs": "D = 200, K = 50, 2 runs",
    "S = 2": "S = 2",
    "S = 50, N_s = 200": "S = 50, N_s = 200",
}


def _baselines_estimates() -> dict[str, Any]:
    from benchmarks.baselines_estimate import SETTINGS, spec_of

    return {
        f"e{i}": spec_of(**SETTINGS[name]).estimate(workers=2).seconds
        for i, name in enumerate(_BASELINE_ROWS.values())
    }


quote(
    "performance.md",
    *(f"| {row} | {{e{i}:.2f}} |" for i, row in enumerate(_BASELINE_ROWS)),
    "is estimated at {e0:.2f} s: just under the 1-s line",
)(_baselines_estimates)


@cache
def _rounds_over_draws() -> dict[str, Any]:
    """The rounds sweep's data-draw axis at the experiment's setting, ε = 1 (issue #52)."""
    from dpcore.experiments.sweeps.rounds import draws_summary, rounds_sweep

    frame = _quiet(
        rounds_sweep, rounds=[1, 4, 11], rng=0, draws=5, dim=200, k=50, sites=10,
        n_per_site=1000, delta=0.01, calibration="classic", epsilon=1.0, runs=5,
        algorithms=["cape", "npm", "npm_distributed", "npm_cape", "fedpower"],
    )  # fmt: skip
    table = draws_summary(frame).set_index(["algorithm", "rounds"])
    cell = lambda a, t: (  # noqa: E731
        f"{table.loc[(a, t), 'median']:.3f} "
        f"[{table.loc[(a, t), 'min']:.3f}, {table.loc[(a, t), 'max']:.3f}]"
    )
    means = frame.groupby(["algorithm", "rounds", "draw"]).captured_energy_ratio.mean()
    best = means.loc["npm_cape"].groupby("draw").max()  # npm_cape at its best T, per draw
    gap = means.loc["cape", 1] - best
    return {
        "npm1": cell("npm", 1),
        "npmd1": cell("npm_distributed", 1),
        "npmc1": cell("npm_cape", 1),
        "npmc11": cell("npm_cape", 11),
        "fp1": cell("fedpower", 1),
        "cape1": cell("cape", 1),
        "gmin": f"{gap.min():.3f}",
        "gmax": f"{gap.max():.3f}",
    }


quote(
    "baselines.md",
    "at ε = 1 the iterative methods' levels at T = 1 are `npm` {npm1}, `npm_distributed` "
    "{npmd1}, `npm_cape` {npmc1} and `fedpower` {fp1} (median [min, max] over the five "
    "draws), `npm_cape`'s at T = 11 {npmc11}, one-shot capePCA's {cape1}; capePCA is ahead of "
    "`npm_cape` at its best T in every draw, by {gmin} to {gmax}.",
    measured=True,
    slow=True,
)(_rounds_over_draws)


# --- docs/architecture.md: the floors' modules, the old paths (issue #51) -------------------------


def _names(modules: list[str], folder: Path) -> str:
    """`a`, `b/` …: the modules of ``folder`` as the table writes them (a subpackage with a /)."""
    return ", ".join(f"`{m}/`" if (folder / m).is_dir() else f"`{m}`" for m in modules)


FLOOR_ROWS = ("mechanisms", "protocol", "factorization", "analysis", "experiments")


@quote(
    "architecture.md",
    "| base: {base} |",
    *(f"| `{floor}/`: {{{floor}}} |" for floor in FLOOR_ROWS),
    "| runtime: {runtime} |",
    "(`dpcore.calibration`,\n`dpcore.privacy`, `dpcore.sweeps.spec`, … {moved} in all,",
    "and the mean-release designs over {sets} random site sets for each calibration",
    "secure aggregation's share\nover {table_sets} of them",
)
def _floors() -> dict[str, Any]:
    """Each floor's modules: a subpackage's ``__all__`` (tests/test_floors.py checks it lists
    the folder), the base and the runtime as tests/test_floors.py's FLOORS names them (those
    in git: ``_build_info`` is a wheel build's output, in a checkout only after one)."""
    import importlib

    from dpcore import _compat

    tree = ast.parse((ROOT / "tests" / "test_floors.py").read_text(encoding="utf-8"))
    floors = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "FLOORS"
    )
    named = {  # not _build_info: a build writes it into the checkout (the suite's own do)
        name: [m for m in modules if m != "_build_info" and (ROOT / "dpcore" / f"{m}.py").exists()]
        for name, modules in floors
    }
    out = {name: _names(named[name], ROOT / "dpcore") for name in ("base", "runtime")}
    for floor in FLOOR_ROWS:
        modules = list(importlib.import_module(f"dpcore.{floor}").__all__)
        out[floor] = _names(modules, ROOT / "dpcore" / floor)
    paths = _constants(ROOT / "tests" / "core" / "test_sigma_paths.py")
    sets = {"sets": paths["SETS"], "table_sets": paths["TABLE_SETS"]}
    return out | {"moved": len(_compat.MOVED)} | sets


def _constants(path: Path) -> dict[str, Any]:
    """The literal module-level constants of a file (a test's sample sizes), read, not run."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return found


# --- the command --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", nargs="*", help="doc file names (default: every doc)")
    parser.add_argument("--measured", action="store_true", help="also the Monte Carlo quotes")
    args = parser.parse_args(argv)
    failed = 0
    for q in QUOTES:
        if args.docs and Path(q.doc).name not in args.docs:
            continue
        if q.measured and not args.measured:
            continue
        text = q.rendered()
        ok = q.holds()
        failed += not ok
        print(f"{'✓' if ok else '✗'} {q.doc}: {text!r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
