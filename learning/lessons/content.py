"""The lessons, as data: one record per step (text, scene, control, question, link).

Templates in ``text``, ``Question.reveal`` and ``Explore.params`` are filled with the scene's
numbers (``{sigma:.3g}`` …), so every number a learner reads is computed, not written here.
Paper references: Imtiaz & Sarwate, "Distributed Differentially-Private Algorithms for
Matrix and Tensor Factorization" (Sec. 2–4, Algorithm 1, eq. (2), Proposition 1).
"""

from __future__ import annotations

import dpcore
from learning import sections
from learning.lessons.model import Control, Explore, Lesson, Question, Step
from learning.settings import (
    AUDIT_DELTA,
    AUDIT_SITES,
    AUDIT_TRIALS_GRID,
    AXIS_LABELS,
    BEYOND_SITES,
    BITS_GRID,
    DELTA_GRID,
    EPS_GRID,
    EQUAL,
    JOINT_VIEW,
    LESSON_DELTA,
    LESSON_SEED,
    OTD_N,
    OTD_RUNS,
    OTD_SETTINGS,
    OTD_SITES,
    PCA_N,
    PCA_SETTINGS,
    PCA_SITES,
    RELEASES_GRID,
    SITE_GRID,
    SIZE,
    SPLIT_TOTAL,
    TRUST_DIM,
    TRUST_RUNS,
)

EPS = Control("eps", "Privacy ε", EPS_GRID, 0.5, "Smaller ε: stronger privacy, more noise.")
DELTA = Control("delta", "Privacy δ", DELTA_GRID, 0.01, "Smaller δ: stronger privacy, more noise.")
SITES = Control("S", "Sites S", tuple(range(2, 11)), 4, "How many sites share the average.")
SHARE = Control(
    "share",
    "Largest site's share of all samples",
    (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    0.5,
    "N = 10 000 samples over S = 5 sites; the other four split the rest equally.",
)
COLLUDING = Control(
    "k",
    "Sites colluding with the aggregator",
    (0, 1, 2, 3, 4),
    2,  # a lesson on colluders opens with some (issue #40): one beyond the bound ⌈S/3⌉ − 1
    "They hand the aggregator their E_j and G_j (S = 5 equal sites).",
)
WHO = Control(
    "who",
    "Who looks at site 1's release",
    ("aggregator alone", "aggregator + noise generator"),
    "aggregator alone",
    "The noise generator knows every E_s; the aggregator knows every F_s.",
    kind="segmented",
)

ATTACKER_VIEW = Control(
    "view",
    "What the attacker sees of site 1",
    ("site 1's own release", "all releases (aggregator)"),
    "all releases (aggregator)",
    "The paper's proof looks at the release alone; the aggregator holds all of them.",
    kind="segmented",
)

PRIVACY = "app_pages/privacy.py"
AUDIT = "app_pages/audit.py"
AVERAGING = "app_pages/averaging.py"
EPSILON_AXIS = AXIS_LABELS["epsilon"].split(" ")[-1]  # the sweep-axis control's URL value: "ε"


# --- links: every setting a step's numbers depend on (docs/state.md: link values win) ---------


def sites_link(
    prefix: str, sites: str, rule: str, calibration: str, *extra: tuple[str, str]
) -> tuple[tuple[str, str], ...]:
    """CAPE averaging (``avg_``) or the Privacy explorer (``prv_``) on the scene's sites:
    S, the weighting rule, the site table (``{table}``: N_s, ε_s, δ_s, μ_s) and calibration."""
    return (
        (f"{prefix}S", sites),
        (f"{prefix}weights", rule),
        (f"{prefix}sites", "{table}"),
        (f"{prefix}calib", calibration),
        *extra,
    )


def privacy_link(sites: str, calibration: str, ng: bool = False, *extra):
    """The Privacy explorer with the paper's design, as the lessons compute it."""
    flag = ("prv_ng", "true" if ng else "false")
    return sites_link("prv_", sites, EQUAL, calibration, ("prv_design", "cape"), flag, *extra)


def _algorithms(prefix: str, algorithms: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # the URL holds the labels
    return tuple((f"{prefix}algs", dpcore.get_algorithm(a).label) for a in algorithms)


def pca_link(sites: int, n_per_site: int) -> tuple[tuple[str, str], ...]:
    """The PCA page's ε sweep as :func:`ui.learn_core.lesson_pca` runs it."""
    s = PCA_SETTINGS
    return (
        ("pca_data", "synthetic"),
        ("pca_dim", str(s.dim)),
        ("pca_k", str(s.k)),
        ("pca_sites", str(sites)),
        ("pca_ns", str(n_per_site)),
        ("pca_eps", "{epsilon:g}"),
        ("pca_delta", f"{LESSON_DELTA:g}"),
        ("pca_sizes", "equal"),
        ("pca_calib", s.calibration),
        ("pca_nbr", s.neighbouring),
        ("pca_axis", EPSILON_AXIS),
        ("pca_runs", str(s.runs)),
        ("pca_seed", str(s.seed)),
        *_algorithms("pca_", s.algorithms),
        ("pca_absolute", "false"),
    )


def otd_link() -> tuple[tuple[str, str], ...]:
    """The tensor page's ε sweep as :func:`ui.learn_core.lesson_otd` runs it."""
    s = OTD_SETTINGS
    return (
        ("td_model", s.model),
        ("td_dim", str(s.dim)),
        ("td_k", str(s.k)),
        ("td_sites", str(OTD_SITES)),
        ("td_ns", str(OTD_N)),
        ("td_eps", "{epsilon:g}"),
        ("td_delta", f"{LESSON_DELTA:g}"),
        ("td_calib", s.calibration),
        ("td_sens", s.sensitivity),
        ("td_scaling", s.scaling),
        ("td_axis", EPSILON_AXIS),
        ("td_runs", str(OTD_RUNS)),
        ("td_tpm", "robust"),  # restarts 10, 100 iterations, tolerance 1e-8
        ("td_seed", str(s.seed)),
        *_algorithms("td_", s.algorithms),
        ("td_matched", "false"),
    )


NOISE = Lesson(
    "noise",
    "Noise",
    "1 · Why noise, and how much",
    "One site, the Gaussian mechanism, ε and δ, and the classic vs the analytic calibration.",
    (
        Step(
            "neighbours",
            "One person can move an average",
            "A site releases the mean of N = 100 values in [0, 1]. Change one person and the "
            "mean moves by up to 1/N = 0.01: the **sensitivity** Δ. The Gaussian mechanism "
            "adds noise N(0, σ²) so that the two worlds — with and without that change — give "
            "nearly the same distribution of releases (Sec. 2). The classic calibration is "
            "σ = Δ·√(2 ln(1.25/δ))/ε; here σ = **{sigma:.3g}** at ε = {epsilon:g}.\n\n"
            "**What ε promises one person.** Take Ana, one of the 100. Whatever mean the site "
            "releases, that outcome is at most e^ε = **{odds}×** as likely with Ana's value "
            "in the data as without it (and the other way round), apart from a slack δ "
            "(Dwork & Roth, Def. 2.4). ε = 0.5 promises Ana at most {odds_low}×: an observer "
            "can barely tell whether she took part. ε = 5 allows {odds_high}×: hardly a "
            "promise at all.",
            "neighbours",
            EPS,
            "Two curves: the distribution of the released mean when the true mean is 0.50 "
            "(blue) and when one person changed it to 0.51 (orange), with the noise σ the "
            "classic calibration gives at your ε and δ = 0.01. The x-axis is the released "
            "value, the y-axis its probability density. The one thing to notice: the more "
            "the curves overlap, the less an observer can tell which world produced a "
            "release — small ε means wide, overlapping curves.",
            Explore(
                AVERAGING,
                "This σ as τ_s of five such sites, on CAPE averaging",
                # the step is about the paper's (classic) formula: its link asks for classic
                # explicitly, the page's own default being the core's (analytic, issue #51)
                sites_link("avg_", "5", EQUAL, "classic"),
                shows=("sigma",),
                section=sections.AVERAGING_DESIGN,  # the per-site table, below the histogram
            ),
            Question(
                "Predict: if you halve ε (more privacy), what happens to the noise σ?",
                ("it halves", "it stays", "it doubles", "it quadruples"),
                "σ ∝ 1/ε in the classic formula: at ε = {epsilon:g} σ = {sigma:.4g}, at "
                "ε/2 σ = {half:.4g} — a ratio of **{ratio:.3g}**. (The exact analytic "
                "calibration, not a simple 1/ε law, gives {ratio_analytic:.3g}.)",
                claim="it doubles",  # the text's σ ∝ 1/ε
            ),
        ),
        Step(
            "delta",
            "δ: the small chance it fails",
            "δ bounds the probability that the privacy promise breaks. Publishing one "
            "random person's record breaks it with probability 1/N, so a real release takes δ "
            "well below 1/N; these lessons keep the paper's δ = 0.01, exactly 1/N for this "
            "mean of 100 values, to keep the numbers readable. Noise grows only like "
            "√(ln(1.25/δ)) as δ shrinks, so strong δ is "
            "cheap: at δ = {delta:g}, σ = **{sigma:.3g}·Δ** for ε = 0.5 — for the mean of "
            "100 values (Δ = 0.01), σ = {tau:.3g}.",
            "delta_curve",
            DELTA,
            "The line is the classic σ, in units of the sensitivity Δ, against δ (log axis) "
            "at ε = 0.5; the dotted line marks your δ. The one thing to notice: four orders "
            "of magnitude of δ change σ by less than a factor of two.",
            Explore(
                AVERAGING,
                "This σ as τ_s of five such sites, on CAPE averaging",
                sites_link("avg_", "5", EQUAL, "classic"),  # the paper's formula, as above
                shows=("tau",),
                section=sections.AVERAGING_DESIGN,
            ),
            Question(
                "Predict: going from δ = 10⁻² to δ = 10⁻⁶ multiplies σ by…",
                ("about 1.7×", "about 10×", "about 10 000×"),
                "σ ∝ √(2 ln(1.25/δ)): √(ln(1.25·10⁶)/ln(125)) = **{ratio:.3g}**. δ sits "
                "inside a logarithm.",
                claim="about 1.7×",  # the text: σ grows only like √(ln(1.25/δ))
            ),
        ),
        Step(
            "calibration",
            "Classic vs analytic: the classic formula is no proof for ε ≥ 1",
            "The classic σ is proven (ε, δ)-private only for ε < 1 (Dwork & Roth, Thm A.1); "
            "the paper uses it up to ε = 10. The **analytic** Gaussian mechanism (Balle & "
            "Wang 2018) computes the least σ that is private, for every ε. At ε = "
            "{epsilon:g}: classic σ = {classic:.3g}·Δ, analytic σ = {analytic:.3g}·Δ — "
            "{ratio:.2f}× the classic one.",
            "calibrations",
            EPS,
            "Two curves of σ/Δ against ε (both axes log), δ = 0.01: the classic formula "
            "(dashed) and the analytic calibration (solid), which is the exact minimum noise. "
            "The grey region is ε ≥ 1, where the classic formula is no proof; the dotted line "
            "is your ε. The one thing to notice: at large ε the dashed line falls *below* the "
            "solid one — less noise than privacy needs.",
            Explore(
                PRIVACY,
                "Calibrations on the Privacy explorer",
                privacy_link("5", "analytic"),
                shows=("ratio",),
                section=sections.PRIVACY_CALIBRATION,
            ),
            Question(
                "Predict: at ε = {epsilon:g}, is the classic σ enough noise for (ε, δ = 0.01)?",
                ("yes, at least enough", "no, too little"),
                "The least σ that is private is {analytic:.4g}·Δ; classic gives "
                "{classic:.4g}·Δ. At the classic σ the mechanism's real δ at ε = {epsilon:g} "
                "is **{real_delta:.3g}** (promised: 0.01; Balle & Wang, Thm 8).",
                claim="yes, at least enough",  # the text: a proof for ε < 1 (default 0.5)
            ),
        ),
    ),
)

SITES_LESSON = Lesson(
    "sites",
    "Many sites",
    "2 · Many sites, and CAPE's cancelling",
    "Conventional averaging loses a factor S in variance; CAPE's zero-sum noise wins it back.",
    (
        Step(
            "conventional",
            "Conventional averaging pays S times",
            "S sites each hold N_s = 1000 samples and must each add their own noise τ_s to "
            "be private. Averaging S releases divides the variance by S — but a trusted "
            "curator holding all S·N_s samples would need only τ_s/S of std (sensitivity "
            "1/(S·N_s)). With S = {sites}: conventional std {tau_conv:.3g}, pooled "
            "{tau_cape:.3g} (Sec. 2).",
            "conventional_cost",
            SITES,
            "Two lines against the number of sites S (each N_s = 1000, ε = 0.5, δ = 0.01, "
            "analytic σ): the aggregate noise std of conventional averaging (blue) and of "
            "CAPE, which equals the pooled curator's (orange). The dotted line is your S. The "
            "one thing to notice: the gap widens with S — conventional falls as 1/√S, pooled "
            "as 1/S.",
            Explore(
                AVERAGING,
                "Explore on CAPE averaging",
                sites_link("avg_", "{sites}", EQUAL, "analytic"),
                shows=("tau_conv", "tau_cape"),
            ),
            Question(
                "Predict: with S = {sites} equal sites, conventional averaging's noise "
                "variance is how many times the pooled one?",
                ("1× (the same)", "√S×", "S×", "S²×"),
                "τ_conv² / τ_pool² = (τ_s²/S) / (τ_s²/S²) = S: here **{ratio:.3g}** "
                "(from dpcore's design: {tau_conv:.4g}² / {tau_cape:.4g}²).",
                claim="S×",  # the text: conventional pays S times
            ),
        ),
        Step(
            "cancelling",
            "CAPE: noise that cancels",
            "CAPE (Sec. 3) gives each site three noises: E_s from a trusted **noise "
            "generator**, drawn so that Σ_s E_s = 0; F_s from the aggregator, which it later "
            "subtracts; and the site's own small G_s. In the sum the E's vanish and the F's "
            "are removed: only Σ G_s/S remains, with the pooled std. One real draw, S = "
            "{sites}: E_1 = {e_first:.3g}, yet Σ μ_s E_s = {e_sum:.1e}.",
            "cancelling",
            SITES,
            "Bars per site: this draw's E_s (green, from the noise generator, std τ_e = "
            "{tau_e:.3g}) and G_s (orange, the site's own); the last pair are their "
            "weighted sums Σ μ_s E_s and Σ μ_s G_s. The one thing to notice: the E's are as "
            "large as the G's, yet their weighted sum is zero to rounding — an invisible bar.",
            Explore(
                "app_pages/protocol.py",
                "Step through every message of a draw ({protocol_sites} sites)",
                (
                    ("pr_S", "{protocol_sites}"),
                    ("pr_kind", "scalar"),
                    ("pr_eps", "0.5"),
                    ("pr_seed", str(LESSON_SEED)),
                    ("pr_step", "{protocol_last}"),
                ),
                shows=("e_first",),  # the same draw when S is 3 to 5 (the page's range)
            ),
            Question(
                "Predict: add up this draw's E_s (weighted 1/S). What do you get?",
                ("about τ_e", "about τ_e/√S", "zero (to rounding)"),
                "Σ μ_s E_s = **{e_sum:.1e}** while each E_s has std {tau_e:.3g}: the noise "
                "generator draws them conditioned on a zero sum (eq. (2); our construction "
                "in docs/cape-design.md).",
                claim="zero (to rounding)",
            ),
        ),
        Step(
            "private",
            "Yet every release stays private",
            "The aggregator knows its F_s, so in its view site s's release carries E_s + G_s: "
            "variance τ_e² + τ_g² = (1 − 1/S)τ_s² + τ_s²/S = τ_s², exactly what the site needs "
            "alone (eq. (2)). The noise generator, knowing E_s, sees F_s + G_s: τ_s² again.",
            "views_of_one_release",
            SITES,
            "Horizontal bars: the noise variance protecting site 1's release, in units of "
            "the τ_s² it needs, as seen by the aggregator, the noise generator, an outsider, "
            "and in the final average (relative to site 1's 1/S share of it). The dashed line "
            "is 1 — enough. The one thing to notice: no single-release view falls below it.",
            Explore(
                PRIVACY,
                "Who sees what, on the Privacy explorer",
                privacy_link("{sites}", "analytic"),
                shows=("ratio",),  # its table's σ own / τ_s: 1 in std as in variance
                section=sections.PRIVACY_VIEWS,
            ),
            Question(
                "Predict: after subtracting F_1, how much noise variance is left on site 1's "
                "release in the aggregator's view?",
                ("τ_s²/S", "τ_s² (what it needs)", "2τ_s²"),
                "τ_e² + τ_g² = **{ratio:.3g} τ_s²** (dpcore's design for S = {sites}).",
                claim="τ_s² (what it needs)",
            ),
        ),
    ),
)


# The unequal-sites lesson's steps all open CAPE averaging on the lesson's five sites.
def unequal_explore(*shows: str, section: str | None = None) -> Explore:
    return Explore(
        AVERAGING,
        "Explore on CAPE averaging",
        sites_link("avg_", "5", SIZE, "analytic"),
        shows=shows,
        section=section,
    )


UNEQUAL = Lesson(
    "unequal",
    "Unequal sites",
    "3 · Unequal sites: weights, G(n) and a fair comparison",
    "When sites differ in size, which weights, which gain, and against what baseline?",
    (
        Step(
            "weights",
            "Weights μ_s = N_s/N reproduce the pooled mean",
            "With sizes {sizes}, the pooled mean is Σ (N_s/N)·a_s. CAPE with these weights "
            "(Sec. 3.1) still reaches the pooled noise: std {tau_cape:.3g}. Conventional "
            "averaging with the same weights: {tau_conv:.3g}; with equal weights 1/S: "
            "{tau_conv_equal:.3g}.",
            "weights_scene",
            SHARE,
            "Three bars: the aggregate noise std of conventional averaging with "
            "equal weights 1/S, conventional with weights N_s/N, and CAPE with N_s/N, for "
            "S = 5 sites of the sizes on the x-axis (ε = 0.5, δ = 0.01). The one thing to "
            "notice: CAPE's bar is the lowest whatever the split.",
            unequal_explore("tau_cape", "tau_conv"),
            Question(
                "Predict: with the same weights N_s/N, conventional variance / CAPE variance is…",
                ("1×", "S× = 5×", "G(n)× = {gain:.3g}×"),
                "With μ_s = N_s/N and one ε, every μ_s τ_s is the same, so conventional has "
                "S·(μτ)² against CAPE's (μτ)²: **{ratio:.3g}×** = S, whatever the sizes.",
                claim="S× = 5×",
            ),
        ),
        Step(
            "gain",
            "The paper's gain G(n)",
            "Proposition 1 states CAPE's gain as G(n) = (N²/S²) Σ 1/N_s²: the variance of "
            "conventional averaging **with equal weights 1/S** over CAPE's. For these sizes "
            "G = {gain:.3g}; it is S = 5 for equal sizes and grows as one site dominates.",
            "gain_scene",
            SHARE,
            "The curve is G(n) (log axis) as the largest of 5 sites grows from an equal "
            "share to almost all N = 10 000 samples, the others sharing the rest. Lines mark "
            "the minimum S (equal sizes), the maximum of Proposition 1, and your split's G. "
            "The one thing to notice: G shoots up — but only because equal weights are a "
            "poor way to average unequal sites.",
            unequal_explore("gain", section=sections.AVERAGING_GAINS),
            Question(
                "Predict: at this split, is G(n) more than, exactly, or less than S = 5?",
                ("less than S", "exactly S", "more than S"),
                "G(n) = **{gain:.3g}** for sizes {sizes} (Proposition 1: S ≤ G, with "
                "equality only for equal sizes).",
                claim="more than S",  # the text: G grows as one site dominates
            ),
        ),
        Step(
            "fair",
            "A fair comparison",
            "A fair baseline lets conventional averaging pick its best weights: μ_s ∝ 1/τ_s² "
            "(∝ N_s² here), the least-variance combination. Against it CAPE still wins, by "
            "N²/Σ N_s² = {best:.3g}× here — between 1 and S. Against the same weights it "
            "wins S× = {same:.3g}×; the paper's G(n) = {gain:.3g}× flatters it.",
            "fair_scene",
            SHARE,
            "Three bars (log scale), each conventional variance over CAPE's for the same "
            "sites: with the same weights N_s/N, with equal weights (the paper's G(n)), and "
            "with the best conventional weights. The dashed line is 1 (no advantage). The "
            "one thing to notice: the honest advantage is the smallest bar, and it shrinks "
            "as one site dominates.",
            unequal_explore("best", "same", "gain", section=sections.AVERAGING_GAINS),
            Question(
                "Predict: against the best conventional weights, CAPE's advantage is…",
                ("more than S", "between 1 and S", "none (1×)"),
                "Best conventional variance is 1/Σ(1/τ_s²) = τ²/ΣN_s² against CAPE's τ²/N² "
                "(τ_s = τ/N_s): a gain of N²/ΣN_s² = **{best:.3g}×**.",
                claim="between 1 and S",
            ),
        ),
    ),
)

VIEWS = Lesson(
    "views",
    "Who sees what",
    "4 · Who sees what: the effective ε",
    "The aggregator, colluding sites and the noise generator — what each learns.",
    (
        Step(
            "joint",
            "The aggregator sees every release",
            "The paper checks each release on its own: τ_s², enough. But the aggregator "
            "receives **all** S releases, and the E's are correlated (they sum to zero): "
            "combined, they say more about site 1 than its release alone. Noise left: "
            "{joint:.3f}·τ_s for S = {sites}.",
            "joint_view_scene",
            SITES,
            "Two bars: the noise protecting site 1 in the aggregator's view, as a multiple "
            "of the τ_s it needs — from site 1's release alone, and from all releases "
            "together (S equal sites of N_s = 1000, ε = 0.5). The dashed line is 1. The one "
            "thing to notice: the joint bar is below the line (docs/privacy.md).",
            Explore(
                PRIVACY,
                "Who sees what, on the Privacy explorer",
                privacy_link("{sites}", "analytic"),
                shows=("joint",),
                section=sections.PRIVACY_VIEWS,
            ),
            Question(
                "Predict: using all releases together, the aggregator's noise on site 1 is…",
                ("exactly τ_s", "less than τ_s", "more than τ_s"),
                "All releases together leave **{joint:.3f}·τ_s** (√((1 + 1/S)/2) for S "
                "equal sites); the release alone leaves {own:.3f}·τ_s.",
                claim="less than τ_s",  # the text: combined they say more about site 1
            ),
        ),
        Step(
            "collusion",
            "Colluding sites",
            "Sites that collude hand the aggregator their E_j and G_j. Each one removes a "
            "piece of the zero-sum puzzle; with {colluding} colluding, site 1's effective ε "
            "(everything the coalition sees) is **{epsilon_joint:.3g}**, against "
            "{epsilon_at_required:.3g} promised.",
            "collusion_scene",
            COLLUDING,
            "Effective ε of the most exposed honest site (y) against the number of sites "
            "colluding with the aggregator (x), for S = 5 equal sites: from its own release "
            "(solid) and from all releases (dashed). The horizontal line is the promised ε, "
            "the vertical one ⌈S/3⌉ − 1, the collusion bound of the CAPE paper. The one "
            "thing to notice: ε climbs with every colluder.",
            Explore(
                PRIVACY,
                "Collusion on the Privacy explorer",
                privacy_link("5", "analytic", False, ("prv_colluders", "{colluders}")),
                shows=("epsilon_joint", "epsilon_release", "epsilon_at_required"),
                section=sections.PRIVACY_COLLUSION,
            ),
            Question(
                "Predict: with {colluding} colluding sites, site 1's effective ε is…",
                ("smaller: stronger privacy", "the promised ε", "larger: weaker privacy"),
                "dpcore's coalition view: ε = **{epsilon_joint:.3g}** from all the coalition "
                "sees, {epsilon_release:.3g} from site 1's release alone, "
                "{epsilon_at_required:.3g} promised.",
                claim="larger: weaker privacy",  # the text: ε climbs with every colluder
            ),
        ),
        Step(
            "generator",
            "The noise generator must be trusted",
            "The noise generator knows every E_s. Should it share them with the aggregator, "
            "only G_s is left on each release: std τ_s/√S. Site 1's effective ε: "
            "{alone:.3g} with the aggregator alone, **{both:.3g}** with both.",
            "generator_scene",
            WHO,
            "Three bars: the ε that τ_s itself gives (promised), and site 1's effective ε "
            "from its own release when the aggregator alone looks and when the noise "
            "generator joins it (S = 5, N_s = 1000). The one thing to notice: the trusted "
            "party is trusted for a reason.",
            Explore(
                PRIVACY,
                "Coalitions on the Privacy explorer",
                privacy_link("5", "analytic", True),
                shows=("both",),
                section=sections.PRIVACY_COLLUSION,
            ),
            Question(
                "Predict: if the noise generator joins the aggregator, site 1's ε becomes…",
                ("unchanged", "about √S× larger", "about S× larger"),
                "ε grows from {alone:.3g} to {both:.3g}: **{ratio:.3g}×**. Only G (std "
                "τ_s/√S) is left, so the noise shrinks √S = {root:.3g}×, and ε grows faster "
                "than 1/σ: the factor is {excess:.0%} above √S, still nearer √S than S "
                "on a log scale.",
                claim="about √S× larger",
            ),
        ),
        Step(
            "attacker",
            "ε in an attacker's words",
            "An attacker who guesses whether one person is in site 1's data trades false "
            "alarms α against misses β. The promise (ε, δ) = (0.5, 0.01) is a curve: no test "
            "may do better than max(0, 1 − δ − e^ε·α, e^−ε·(1 − δ − α)). Each view has its own "
            "exact curve, β = Φ(Φ⁻¹(1 − α) − μ) with μ = Δ_s/σ of the noise it leaves (Dong, "
            "Roth & Su). A view breaks its promise exactly where its curve dips under the "
            "promise's — and the aggregator's view, we saw, leaves less noise than τ_s.",
            "attacker_scene",
            ATTACKER_VIEW,
            "Trade-off curves against site 1 (S = 5 equal sites of N_s = 1000, ε = 0.5, δ = "
            "0.01): false alarms α (x, log scale) against misses β (y, log scale in 1 − β). "
            "Dotted: the promise; thick: the view you chose; thin: the other view. Lower is a "
            "better attack. The one thing to notice: where a view's curve passes under the "
            "dotted one, that view breaks the promise.",
            Explore(
                AUDIT,
                "The trade-off and the posteriors, on the Attack audit",
                sites_link("au_", "5", EQUAL, "analytic"),
                shows=("epsilon_view", "posterior"),
                section=sections.AUDIT_POSTERIOR,  # their table, under the trade-off chart
            ),
            Question(
                "Predict: in the view “{view}”, does site 1's curve dip under the promise's?",
                ("no: never under it", "yes: somewhere under it"),
                "Largest gap under the promise's curve: {depth} (it is δ of this view at "
                "ε = 0.5, {view_delta:.3g}, minus δ = 0.01): its ε at δ = 0.01 is "
                "**{epsilon_view:.3g}** against 0.5 promised. In an attacker's words: "
                "{prior:.0%} sure before, at most **{posterior:.1%}** sure after (up to the "
                "δ term), where the promise allows {promise_posterior:.1%}.",
                claim="yes: somewhere under it",  # the text: the aggregator's view leaves less
            ),
        ),
    ),
)

PCA = Lesson(
    "pca",
    "PCA and tensors",
    "5 · From averages to PCA and tensors",
    "A better average gives a better subspace: captured energy as the measure.",
    (
        Step(
            "pca",
            "PCA is an average of matrices",
            "capePCA (Algorithm 1) runs CAPE on each site's D×D second-moment matrix A_s = "
            "X_s X_sᵀ/N_s, then takes the top-K eigenvectors of the sum. Less noise in Â "
            "means directions closer to the true ones. The measure: **captured energy** "
            "tr(V̂ᵀAV̂) as a fraction of the best possible. At ε = {epsilon:g}: CAPE "
            "{cape:.1%}, conventional {conv:.1%} — {finding}.",
            "pca_scene",
            EPS,
            f"Captured energy over the optimum (y) against ε (log x) for S = {PCA_SITES} "
            f"sites of N_s = {PCA_N}, D = {PCA_SETTINGS.dim}, K = {PCA_SETTINGS.k}: "
            "non-private (dashed), CAPE and conventional; bands are ±1 std over {runs} runs, "
            "the dotted line your ε. The one thing to notice: CAPE reaches a given quality at "
            "a smaller ε.",
            Explore(
                "app_pages/pca.py",
                "The same sweep on the PCA page",
                pca_link(PCA_SITES, PCA_N),
                shows=("cape", "conv"),
            ),
            Question(
                "Predict: at ε = {epsilon:g}, which captures more energy?",
                ("capePCA", "conventional", "about the same"),
                "Mean ± standard error over {runs} runs: CAPE **{cape:.2%}** ± {cape_se:.2%}, "
                "conventional **{conv:.2%}** ± {conv_se:.2%}. Their difference is {z:.1f} "
                "standard errors ({diff_se:.2%} each); within 2 it would be a tie.",
                claim="capePCA",  # the text: less noise, directions closer to the true ones
            ),
        ),
        Step(
            "pca_sites",
            "Same data, more sites",
            f"Split the same N = {SPLIT_TOTAL:,} samples over more sites. Each site's noise "
            "τ_s grows with S (fewer samples, larger sensitivity), so conventional averaging's "
            "noise grows like √S, while CAPE keeps the pooled noise whatever S is. Captured "
            "energy gap (CAPE − conventional) at ε = {epsilon:g}: {gap_first:.1%} at "
            f"S = {SITE_GRID[0]}, " + "{gap_last:.1%} at S = {sites_last} (N_s = {ns_last}: "
            "CAPE {cape_last:.1%}, conventional {conv_last:.1%}).",
            "pca_sites_scene",
            EPS,
            "Captured energy over the optimum (y) against the number of sites S (x) that "
            f"share N = {SPLIT_TOTAL:,} samples equally, at your ε, D = "
            f"{PCA_SETTINGS.dim}, K = {PCA_SETTINGS.k}: non-private (dashed), CAPE and "
            "conventional, ±1 std bands over {runs} runs. The one thing to notice: CAPE's line "
            "stays flat, conventional's falls.",
            Explore(
                "app_pages/pca.py",
                f"The {SITE_GRID[-1]}-site split on the PCA page",
                pca_link(SITE_GRID[-1], SPLIT_TOTAL // SITE_GRID[-1]),
                shows=("cape_last", "conv_last"),
            ),
            Question(
                f"Predict: as the same data is split over {SITE_GRID[0]} → {SITE_GRID[-1]} "
                "sites, the gap between CAPE and conventional…",
                ("it grows", "it shrinks", "about the same"),
                f"The gap is {{gap_first:.2%}} at S = {SITE_GRID[0]} and **{{gap_last:.2%}}** "
                "at S = {sites_last}: a change of {z:.1f} standard errors ({gap_se:.2%}, over "
                "{runs} runs at each end); within 2 it would be a tie.",
                claim="it grows",  # the text: conventional's noise grows like √S, CAPE's not
            ),
        ),
        Step(
            "tensor",
            "Tensors: the same trick, twice",
            "capeAGN (Algorithm 2) learns a mixture of Gaussians from the moments M2 (a "
            "matrix) and M3 (a D×D×D tensor): CAPE on M2 for the whitening, then on the "
            "projected M3 (Theorem 2 splits (ε, δ) between them). Where the noise matters, "
            "the same S-fold noise saving shows up as a lower component error. At ε = "
            "{epsilon:g}: CAPE {cape:.3f}, conventional {conv:.3f} — {finding}.",
            "tensor_scene",
            EPS,
            "Component error q_comp (y, lower is better) against ε (log x) for a mixture of "
            f"{OTD_SETTINGS.k} Gaussians in D = {OTD_SETTINGS.dim}, S = {OTD_SITES} "
            f"sites of N_s = {OTD_N:,}: non-private (dashed), CAPE, conventional; ±1 std over "
            "{runs} runs. The one thing to notice: where the noise matters, CAPE's error is "
            "the lower one.",
            Explore(
                "app_pages/tensor.py",
                "The same sweep on the tensor page",
                otd_link(),
                shows=("cape", "conv"),
            ),
            Question(
                "Predict: at ε = {epsilon:g}, which recovers the components better?",
                ("capeAGN", "conventional", "about the same"),
                "Component error, mean ± standard error over {runs} runs: CAPE **{cape:.3f}** "
                "± {cape_se:.3f}, conventional **{conv:.3f}** ± {conv_se:.3f}. Their difference "
                "is {z:.1f} standard errors ({diff_se:.3f} each); within 2 it would be a tie.",
                claim="capeAGN",  # the text: the S-fold saving shows up as lower error
            ),
        ),
    ),
)

BITS = Control(
    "bits",
    "Bit width b",
    BITS_GRID,
    16,  # the case (#40 item 1): at 16 bits the sum wraps around
    "Secure aggregation adds integers modulo 2^b: fewer bits, smaller messages.",
)
RELEASES = Control(
    "T",
    "Releases T of the same mean",
    RELEASES_GRID,
    10,
    "Each release draws fresh noise on the same data.",
)
TRIALS = Control(
    "trials",
    "Games the attacker plays per audit",
    AUDIT_TRIALS_GRID,
    100_000,
    "Half without the record, half with it; more games, a tighter bound.",
)


def _beyond_sites(prefix: str, sites: int = BEYOND_SITES) -> tuple[tuple[str, str], ...]:
    """A beyond-the-paper page on the lesson's equal sites (analytic calibration)."""
    return sites_link(prefix, str(sites), EQUAL, "analytic")


BEYOND = Lesson(
    "beyond",
    "Beyond the paper",
    "6 · Beyond the paper: trust, repetition, attack",
    "Secure aggregation instead of a noise generator, privacy spent again with every release, "
    "and an attacker who proves a broken promise from the messages alone.",
    (
        Step(
            "trust",
            "No trusted party: secure aggregation, and its bits",
            "CAPE trusts a noise generator. **Secure aggregation** trusts nobody: each site "
            "rounds its statistic to integers, adds a small share of discrete Gaussian noise, "
            "and hides its message under pairwise masks that cancel in the sum (Bonawitz et "
            "al. 2017; Kairouz, Liu & Steinke 2021). The sum is taken modulo 2^b: with too few "
            "bits it **wraps around** and decodes wrongly. At b = {bits}: {wraps:.3g} of "
            "{coordinates} coordinates wrap on average, the decoded sum's error is "
            "**{ratio:.3g}×** central's noise, and PCA captures {energy:.3f} of the optimum "
            "(a trusted curator: {central:.3f}).",
            "bits_scene",
            BITS,
            "The line is secure aggregation's measured error — noise, rounding and "
            "wrap-around together — over the noise a trusted curator adds, against the bit "
            f"width b ({BEYOND_SITES} equal sites of N_s = 1000, ε = 0.5, δ = 0.01, D = "
            f"{TRUST_DIM}, {TRUST_RUNS} rounds). The dashed line is 1: as good as central. The "
            "one thing to notice: below some b the error jumps — not by a little, by the "
            "whole range of the integers.",
            Explore(
                "app_pages/trust_models.py",
                "Every scheme at b = {bits} bits, on Trust models",
                (
                    *_beyond_sites("tm_"),
                    ("tm_dim", str(TRUST_DIM)),
                    ("tm_runs", str(TRUST_RUNS)),
                    ("tm_seed", str(LESSON_SEED)),
                    ("tm_bits", "{bits}"),
                    ("tm_scale", "automatic"),
                    ("tm_sacal", "matched"),
                ),
                shows=("ratio", "energy"),
            ),
            Question(
                "Predict: with b = {bits} bits, secure aggregation's error against central's "
                "noise is…",
                ("about the same (1×)", "about 10× larger", "about 1000× larger"),
                "Measured over {coordinates} coordinates and the rounds: **{ratio:.3g}×** "
                "central's noise, with {wraps:.3g} wrap-arounds per round. A wrapped "
                "coordinate is off by a whole 2^b·γ; without wrap-around only the rounding "
                "(a fraction of a step) is added to the noise.",
                claim="about 10× larger",  # the text: too few bits and the sum wraps
            ),
        ),
        Step(
            "releases",
            "Every release spends privacy again",
            "A site's mean released once costs ε = {one:.3g} (at δ = 0.01, in the "
            "aggregator's joint view). Release it again with fresh noise and the attacker "
            "averages the two: privacy **composes**. Counted exactly (Gaussian DP, Dong, Roth "
            "& Su 2022), T = {releases} releases cost **ε = {total:.3g}**; summing the ε's "
            "(basic composition) would claim {basic:.3g}.",
            "releases_scene",
            RELEASES,
            "Total ε of site 1 (log y) against the number of releases T of the same mean "
            f"({BEYOND_SITES} equal sites, N_s = 1000, ε = 0.5, δ = 0.01, paper's design, "
            "the aggregator's joint view), one line per accountant: exact, Rényi DP, zCDP, "
            "advanced and basic composition. Every line but the exact one is an upper bound. "
            "The one thing to notice: the exact line rises far more slowly than the sum of "
            "the ε's.",
            Explore(
                "app_pages/composition.py",
                "T = {releases} releases, five accountants, on Repeated releases",
                (
                    *_beyond_sites("rr_"),
                    ("rr_design", "cape"),
                    ("rr_view", JOINT_VIEW),
                    ("rr_site", "1"),
                    ("rr_tmax", "{releases}"),
                ),
                shows=("total",),
                section=sections.COMPOSITION_ACCOUNTANTS,
            ),
            Question(
                "Predict: counted exactly, T = {releases} releases of the same mean cost how "
                "much more ε than one?",
                ("about 1× (the same)", "about √T×", "about T×"),
                "ε = {total:.3g} against {one:.3g} for one release: **{ratio:.3g}×** — more than "
                "√T = {root:.3g}, less than T = {releases}. The privacy loss of T Gaussian "
                "releases is Gaussian with √T times the signal, so ε grows like √T at first; "
                "the linear term takes over "
                "only beyond about {crossover:,.0f} releases here.",
                claim="about √T×",
            ),
        ),
        Step(
            "audit",
            "An attacker proves the broken promise",
            "Lesson 4 computed that the aggregator, holding all releases, learns more than "
            f"the paper's promise allows. With {AUDIT_SITES} equal sites (ε_s = 0.5, δ_s = "
            f"{AUDIT_DELTA:g}) its view of site 1 has ε = {{epsilon:.4g}}. The **Attack audit** "
            "shows it without the theory: an attacker plays the game — {trials:,} runs with "
            "and without one person's record — and turns its false alarms ({fpr:.3g}) and "
            "misses ({fnr:.3g}) into a 95 % lower bound: ε ≥ **{lower:.4g}** (Clopper–Pearson "
            "bounds on both rates; Jagielski et al. 2020).",
            "audit_scene",
            TRIALS,
            "One group of bars per view of site 1: its own release, and the aggregator's view "
            f"of all releases ({AUDIT_SITES} equal sites). Pale bars: the theory's exact ε; "
            "solid bars: the ε the attack proves from its games, at 95 % confidence. Orange: "
            "the paper's design, blue: the joint-view-safe design. The dotted line is the "
            "promise ε_s = 0.5. The one thing to notice: a solid bar above the dotted line is "
            "a broken promise shown from the messages alone.",
            Explore(
                "app_pages/audit.py",
                "The same audit on the Attack audit page",
                (
                    *_beyond_sites("au_", AUDIT_SITES),
                    ("au_trials", "{trials}"),
                    ("au_seed", str(LESSON_SEED)),
                ),
                shows=("lower", "epsilon"),  # at the page table's 4 digits: no double rounding
                section=sections.AUDIT_NUMBERS,  # the chart above shows them as bars only
            ),
            Question(
                "Predict: with {trials:,} games, does the attack prove that the aggregator's "
                "view breaks the promise ε_s = 0.5?",
                ("yes: a proven break", "not yet: the bound stays below ε_s"),
                "The attack proves ε ≥ **{lower:.4g}** against ε_s = {promised:.3g} (theory: "
                "{epsilon:.4g}). About {needed} games show the break in half of such audits: "
                "fewer games leave wider Clopper–Pearson bounds, and a lower bound that may "
                "stay below the promise even though the promise is broken.",
                claim="yes: a proven break",  # the text: the audit shows it
            ),
        ),
    ),
)

LESSONS: tuple[Lesson, ...] = (NOISE, SITES_LESSON, UNEQUAL, VIEWS, PCA, BEYOND)
