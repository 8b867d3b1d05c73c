"""'What am I looking at?' texts of the app's charts, one paragraph each (see ui.explain).

Each says what the axes, lines, bands and markers are, and the one thing to notice.
"""

from __future__ import annotations

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

GAIN_CURVES = (
    "Each line is one way to state CAPE's advantage — conventional averaging's aggregate "
    "variance over CAPE's (log y-axis) — as the largest site's share of all N samples grows "
    "(x-axis; the other sites share the rest equally): with the **same weights** (exactly S), "
    "the paper's **G(n)** (conventional with equal weights 1/S, Proposition 1) and against "
    "the **best conventional weights** (N²/ΣN_s²). Diamonds mark your sites. **The one thing "
    "to notice:** only G(n) grows without bound — it also counts the gain of weighting by "
    "size, which conventional averaging could have had; the fair advantage falls towards 1 "
    "as one site dominates."
)

COLLUSION = (
    "The effective ε of the most exposed honest site (y) as more sites collude with the "
    "aggregator (x), computed from everything the coalition sees: from the site's own release "
    "only (solid, the paper's argument) and from all releases together (dashed). The "
    "horizontal line is the site's promised ε, the vertical one the ⌈S/3⌉ − 1 collusion "
    "bound of the CAPE paper; large markers show the coalition picked above. **The one thing "
    "to notice:** every colluder raises ε, and the joint view is above the promise even "
    "with no colluder (docs/privacy.md)."
)

CALIBRATION = (
    "The noise σ, in units of the sensitivity Δ, that the Gaussian mechanism adds at each ε "
    "(both axes log): the paper's classic formula √(2 ln(1.25/δ))/ε (dashed) and the exact "
    "analytic calibration of Balle & Wang (solid), the least noise that is (ε, δ)-private. "
    "The grey region is ε ≥ 1, where the classic formula is no proof; dotted lines are the "
    "sites' ε. **The one thing to notice:** at small ε classic adds more noise than needed, "
    "at large ε less than privacy requires."
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
