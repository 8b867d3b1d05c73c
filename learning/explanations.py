"""'What am I looking at?' texts of the app's charts, one paragraph each (see ui.explain).

Each says what the axes, lines, bands and markers are, and the one thing to notice.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

PCA_SWEEP = (
    "One line per algorithm: the mean, over the runs, of the **captured energy** of its K "
    "directions — how much of the data's variance they hold, as a fraction of the best possible "
    "K directions (or in absolute units with the toggle on) — against the parameter on the "
    "x-axis (log scale for ε, δ and N_s). Non-private PCA on the pooled data (dashed) is the "
    "ceiling. Bands are ±1 standard deviation over the runs; the dotted vertical line is the "
    "sidebar's value, the dotted horizontal line the target of the question under the chart. "
    "**The one thing to notice:** CAPE's line reaches any level at a smaller ε than "
    "conventional averaging, because its aggregate carries S times less noise variance "
    "(Sec. 4, Algorithm 1)."
)

TENSOR_SWEEP = (
    "One line per algorithm: the mean, over the runs, of the **component error** — the "
    "average distance from each recovered component to the nearest true one (lower is "
    "better; Sec. 6.2) — against the parameter on the x-axis (log scale for ε, δ and N_s). "
    "Non-private decomposition of the pooled moments (dashed) is the floor, random vectors "
    "(dotted) what knowing nothing gives. Bands are ±1 standard deviation over the runs; the "
    "dotted vertical line is the sidebar's value, the dotted horizontal line the question's "
    "target. **The one thing to notice:** capeAGN's error falls to the non-private floor at "
    "a smaller ε than conventional averaging (Algorithm 2)."
)

NOISE_HISTOGRAM = (
    "Histograms of the noise left in the aggregate over many independent runs of each "
    "protocol on the same sites (x: the error of the released average, y: density), with the "
    "Gaussian density the noise design predicts drawn over each. Orange: CAPE, whose error is "
    "only Σ μ_s G_s; blue: conventional averaging, where every site's full noise stays. "
    "**The one thing to notice:** CAPE's histogram is narrower — for equal sites √S times — "
    "while every site's own release is as private as before (eq. (2))."
)


# What each accountant of the Repeated-releases page does, in plain words (issue #40, item 7):
# shown next to its equation and in the ledger's help, where the method is cited.
ACCOUNTANTS_IN_WORDS = {
    "exact": "Gaussian DP measures privacy by how hard it is to tell, from what is released, "
    "whether one person's record was used — as hard as telling apart two bell curves μ apart. "
    "Gaussian noise composes exactly in it: releases with μ₁, μ₂, … are together one "
    "release with μ = √(μ₁² + μ₂² + …), so nothing is wasted.",
    "rdp": "Rényi DP compares what is released with and without one person's record through a "
    "family of divergences, one per order α. These simply add up over releases; turning the "
    "total back into an (ε, δ) at the end loses a little.",
    "zcdp": "Zero-concentrated DP keeps one number ρ per release (ρ = 1/(2z²) for Gaussian "
    "noise with multiplier z); the ρ's add up, and one formula turns the total into (ε, δ) — "
    "simpler than Rényi DP and a little looser.",
    "advanced": "Advanced composition knows only each release's (ε, δ), not its noise: T "
    "releases of ε each cost about ε·√(2T·log(1/δ)) instead of T·ε, paid for with a little "
    "extra δ.",
    "basic": "Basic composition adds up the ε's (and the δ's): always true, and the loosest.",
}


def gain_curves(
    labels: dict[str, str],
    current: dict[str, float],
    *,
    share: float,
    formula: float,
    differs: Sequence[str],
) -> str:
    """The gain chart's paragraph, from the gains its diamonds show (issue #22, item 10).

    ``current``: gain key → the diamond's value (these sites); ``formula``: the paper's G(n)
    for their sizes; ``differs``: why G(n) is not their equal-weights gain (empty: it is).
    """
    diamonds = "; ".join(f"{labels[k]} {v:.3g}×" for k, v in current.items())
    equal, same = current["paper_g"], current["same_weights"]
    if differs:
        paper = (
            f"The paper's G(n) = (N²/S²)Σ1/N_s² = {formula:.3g}× for these sizes is not your "
            f"sites' gain: it assumes one common (ε, δ) and μ_s = N_s/N, and "
            f"{' and '.join(differs)}."
        )
        notice = (
            f"the paper's formula would say {formula:.3g}×, but on your sites the comparison it "
            f"stands for gives {equal:.3g}×"
            + (" — CAPE is the noisier" if equal < 1 else "")
            + f"; like for like (same weights) CAPE gains {same:.3g}×."
        )
    else:
        paper = (
            f"With one common (ε, δ) and μ_s = N_s/N the equal-weights diamond is the paper's "
            f"G(n) = {formula:.3g}×."
        )
        notice = (
            f"only the equal-weights line (the paper's G(n), {formula:.3g}× here) grows without "
            "bound — it also counts the gain of weighting by size, which conventional averaging "
            f"could have had; like for like CAPE gains {same:.3g}×, and against the best "
            f"conventional weights {current['best_conventional']:.3g}×, which falls towards 1 "
            "as one site dominates."
        )
    return (
        "Each line is one way to state CAPE's advantage — conventional averaging's aggregate "
        "variance over CAPE's (log y-axis) — as the largest site's share of all N samples grows "
        "(x-axis; the other sites share the rest equally, one common (ε, δ), CAPE weights "
        "N_s/N). Diamonds are the same comparisons on **your sites** (their N_s, ε_s, δ_s and "
        f"μ_s; largest share {share:.0%}): {diamonds}. {paper} **The one thing to notice:** "
        f"{notice}"
    )


def _meets(value) -> bool | None:
    """A ``meets`` cell of :func:`dpcore.collusion_curve`: None for <NA> (unknown)."""
    return None if pd.isna(value) else bool(value)


def _verdict(row) -> str:
    """'0.376 ≤ 0.5 ✓', '0.678 > 0.5 ✗' or '≥ 0.81 (a lower bound: no verdict)'."""
    ok = _meets(row.meets)
    if ok is None:  # a lower bound that found no break
        return f"≥ {row.epsilon:.3g} (a lower bound: no verdict)"
    return f"{row.epsilon:.3g} {'≤' if ok else '>'} {row.promised_epsilon:.3g} {'✓' if ok else '✗'}"


def collusion(
    curve, *, bound: int, noise_generator: bool, chosen: tuple[int, float, float] | None
) -> str:
    """The collusion chart's paragraph, from the curve it draws (issue #22, item 10)."""
    sites = int(curve["colluding"].max()) + 1
    exact = curve.drop_duplicates("colluding").set_index("colluding")["exact"]
    if noise_generator:
        search = (
            "Every point is exact: with the noise generator colluding only the G's are left, "
            "whoever else colludes."
        )
    elif exact.all():
        search = (
            f"Every point is exact: all {2**sites - 1:,} coalitions of 0 to {sites - 1} sites "
            "were tried."
        )
    else:
        lower = exact.index[~exact.to_numpy(bool)]
        search = (
            f"Filled markers are exact worst cases (every coalition tried); open markers, "
            f"n = {lower.min()}–{lower.max()}, are **lower bounds**: too many coalitions to try "
            "them all, a greedy search per site found these, and a worse coalition may exist — "
            "so they get no ✓."
        )
    promised = curve["promised_epsilon"]
    line = (
        f"The dotted horizontal line is the promised ε_s = {promised.iloc[0]:.3g}"
        if promised.nunique() == 1
        else "Thin dotted lines give the promised ε_s of the site each point refers to"
    )
    mine = (
        f" Diamonds: the coalition chosen above ({chosen[0] or 'no'} colluding "
        f"site{'' if chosen[0] == 1 else 's'}; largest ε {chosen[1]:.3g} own release, "
        f"{chosen[2]:.3g} all releases)."
        if chosen is not None
        else ""
    )
    facts = []
    for view, name in (("own release", "own-release view"), ("all releases", "joint view")):
        part = curve[curve["view"] == view].set_index("colluding")
        first = part.loc[0]
        if _meets(first.meets) is not True:
            facts.append(f"the {name} breaks the promise even with no colluder ({_verdict(first)})")
            continue
        fact = f"with no colluder the {name} keeps the promise ({_verdict(first)})"
        broken = part.index[part["meets"].eq(False).fillna(False).to_numpy(bool)]
        if len(broken):
            n = int(broken.min())
            fact += f" and first breaks it with {n} colluding site{'s' if n > 1 else ''}"
            fact += f" ({_verdict(part.loc[n])})"
        elif part["meets"].isna().any():
            fact += "; no coalition found breaks it, but the lower-bound sizes cannot promise it"
        else:
            fact += " against every coalition of every size"
        facts.append(fact)
    at_bound = curve[(curve["view"] == "own release") & (curve["colluding"] == bound)]
    tail = (
        f" At the follow-up paper's bound, {bound} colluding site{'s' if bound != 1 else ''}, "
        f"the own-release view gives {_verdict(at_bound.iloc[0])}."
        if len(at_bound)
        else ""
    )
    return (
        "Each point is the **worst coalition of its size**: for n sites colluding with the "
        "aggregator (x)"
        + (", the noise generator included" if noise_generator else "")
        + ", the largest effective ε of any honest site over the coalitions of n sites (y), "
        "computed from the site's own release only (solid, the paper's argument) and from all "
        f"honest releases together (dashed). {search} {line}; the dotted vertical line is the "
        f"⌈S/3⌉ − 1 = {bound} collusion bound of the follow-up CAPE paper (arXiv:1904.10059)."
        f"{mine} **The one thing to notice:** {facts[0]}; {facts[1]}.{tail}"
    )


def calibration(sites_epsilon, ratio, *, delta: float) -> str:
    """The calibration chart's paragraph, at the sites' own ε (its dotted lines).

    ``ratio``: analytic σ / classic σ at each site's ε (``1 − saving`` of
    :func:`dpcore.calibration_comparison`).
    """
    eps = sorted({float(e) for e in sites_epsilon})
    shown = ", ".join(f"{e:g}" for e in eps)
    lo, hi = float(min(ratio)), float(max(ratio))
    span = f"{lo:.2f}×" if round(lo, 2) == round(hi, 2) else f"{lo:.2f}–{hi:.2f}×"
    grey = sum(e >= 1 for e in eps)
    if hi > 1:
        notice = (
            f"at your largest ε the classic σ is too small to give (ε, δ)-DP — the exact σ "
            f"is {hi:.2f}× the classic one"
        )
    else:
        notice = (
            f"at your sites' ε the classic formula adds more noise than privacy needs: the "
            f"exact σ is {span} the classic one"
        )
    return (
        "The noise σ, in units of the sensitivity Δ, that the Gaussian mechanism adds at each ε "
        f"(both axes log, δ = {delta:g}): the paper's classic formula √(2 ln(1.25/δ))/ε "
        "(dashed) and the exact analytic calibration of Balle & Wang (solid), the least noise "
        "that is (ε, δ)-private. The grey region is ε ≥ 1, where the classic formula is no "
        f"proof; the dotted vertical lines are your sites' ε ({shown}), "
        + (f"{grey} of them in the grey region" if grey else "none in the grey region")
        + f". **The one thing to notice:** {notice}."
    )


PAPER_PANELS = (
    "Each panel redraws one panel of the paper's Figures 2–5: a quality measure (captured "
    "energy over the optimum for PCA, higher is better; component error for tensors, lower "
    "is better) against the swept parameter, one line per algorithm in the colours of the "
    "legend above, ±1 std bands over the runs. Under each panel, the paper's claims for it "
    "are checked on the computed numbers. **The one thing to notice:** CAPE (orange) sits "
    "with the non-private line wherever the paper says it does — and the checks say where "
    "it does not."
)

PROTOCOL = (
    "The network of Algorithm 1: the noise generator (top, green), the sites (middle, "
    "orange) and the aggregator (bottom, blue). The thick arrow is this step's message with "
    "its value in this draw; faint arrows are messages already sent. In the last step the "
    "chart becomes the aggregator's running sum: Σ μ_s a_s, then each μ_s E_s (shaded green: "
    "they return to where they started), then each μ_s G_s, ending at the estimate. **The one "
    "thing to notice:** the E's are as large as the G's, yet add up to zero."
)
