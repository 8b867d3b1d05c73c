"""The glossary: every term the pages name, in plain words, with where it appears and a source.

Each term has an anchor, so a link can land on it (``glossary?section=term-kls``,
:mod:`learning.sections`); :func:`terms_line` writes the line of links a page shows under its
title for the terms it names.
"""

from __future__ import annotations

from dataclasses import dataclass

from learning.settings import LESSON_DELTA, N_MEAN


@dataclass(frozen=True)
class Term:
    """One glossary entry."""

    key: str  # the anchor is "term-" + key
    name: str
    words: str  # plain words, no formula needed
    where: str  # the pages that use it
    source: str  # where it is defined

    @property
    def anchor(self) -> str:
        return f"term-{self.key}"


GLOSSARY: tuple[Term, ...] = (
    Term(
        "sensitivity",
        "Sensitivity Δ",
        "How far one person can move the released statistic: for the mean of N values in "
        "[0, 1], Δ = 1/N. The noise is measured in units of Δ.",
        "every page",
        "Dwork & Roth 2014, Def. 3.8; Imtiaz & Sarwate Sec. 2",
    ),
    Term(
        "epsilon",
        "Privacy ε",
        "How much one person's data may change the odds of any outcome: at most a factor "
        "e^ε. Smaller ε, stronger privacy, more noise.",
        "every page",
        "Dwork & Roth 2014, Def. 2.4",
    ),
    Term(
        "delta",
        "Privacy δ",
        "The small probability with which the ε promise may fail. Publishing one randomly "
        "chosen person's record fails only with probability 1/N, so a real release takes δ "
        "well below 1/N. The lessons keep the paper's δ = "
        f"{LESSON_DELTA:g} so that the numbers stay readable: for lesson 1's mean of {N_MEAN} "
        "values that is exactly 1/N, and for the sites of 1,000–5,000 in lessons 2–4 it is "
        "above 1/N_s — a teaching value, not a recommendation.",
        "every page",
        "Dwork & Roth 2014, Def. 2.4",
    ),
    Term(
        "gaussian",
        "Gaussian mechanism",
        "Add normal noise of standard deviation σ to the statistic. The classic formula "
        "σ = Δ·√(2 ln(1.25/δ))/ε is a proof only for ε < 1; the analytic calibration finds "
        "the least σ for every ε.",
        "Lessons 1, CAPE averaging, Privacy explorer",
        "Dwork & Roth 2014, Thm. A.1; Balle & Wang 2018",
    ),
    Term(
        "cape",
        "CAPE (correlated noise)",
        "Each site adds three noises: E from a trusted noise generator (they sum to zero "
        "over the sites), F from the aggregator (it subtracts them) and its own small G. In "
        "the average only the G's remain: a trusted curator's noise without pooling data.",
        "Lessons 2–5, Protocol, CAPE averaging",
        "Imtiaz & Sarwate Sec. 3, eq. (2)",
    ),
    Term(
        "joint-view",
        "Joint view",
        "Everything one party holds at once. The aggregator holds all releases; because the "
        "E's sum to zero, together they leave less noise on a site than one release alone.",
        "Lesson 4, Privacy explorer, Repeated releases, Attack audit",
        "docs/privacy.md",
    ),
    Term(
        "discrete-gaussian",
        "Discrete Gaussian",
        "Normal noise for integers: each integer k drawn with probability proportional to "
        "exp(−k²/(2σ²)). Secure aggregation adds integers, so its noise must be integers too.",
        "Trust models",
        "Canonne, Kamath & Steinke 2020",
    ),
    Term(
        "secure-aggregation",
        "Secure aggregation",
        "Sites hide their messages under random masks that cancel in the sum, so the server "
        "learns the sum and nothing else — no trusted party. It adds integers modulo 2^b: "
        "too few bits b and the sum wraps around.",
        "Trust models, lesson 6",
        "Bonawitz et al., CCS 2017",
    ),
    Term(
        "kls",
        "KLS accountant",
        "Kairouz, Liu & Steinke's proof that a sum of discrete Gaussian shares, after "
        "rounding, is private: a certificate for secure aggregation's (ε, δ), slightly "
        "pessimistic.",
        "Trust models",
        "Kairouz, Liu & Steinke, ICML 2021, Prop. 14",
    ),
    Term(
        "composition",
        "Composition",
        "Releasing twice from the same data spends privacy twice: an attacker combines the "
        "releases. Accountants add the releases up, some exactly, some loosely.",
        "Repeated releases, lesson 6",
        "Dwork & Roth 2014, Sec. 3.5",
    ),
    Term(
        "basic-composition",
        "Basic composition",
        "Add up the ε's (and the δ's) of the releases. Always true, and the loosest count.",
        "Repeated releases",
        "Dwork & Roth 2014, Thm. 3.16",
    ),
    Term(
        "advanced-composition",
        "Advanced composition",
        "Knows only each release's (ε, δ): T releases of ε cost about ε·√(2T·ln(1/δ)) "
        "instead of T·ε, for a little extra δ.",
        "Repeated releases",
        "Kairouz, Oh & Viswanath 2017, Thm. 3.5",
    ),
    Term(
        "gdp",
        "Gaussian DP (GDP)",
        "Privacy measured as how hard it is to tell two bell curves μ apart. Gaussian noise "
        "composes exactly in it: μ's add like the sides of a right triangle, √(μ₁² + μ₂²).",
        "Repeated releases, Attack audit",
        "Dong, Roth & Su 2022",
    ),
    Term(
        "rdp",
        "Rényi DP (RDP)",
        "Compares the releases with and without one person through a family of divergences, "
        "one per order α; these add up over releases, and one conversion at the end gives "
        "(ε, δ), losing a little.",
        "Repeated releases",
        "Mironov 2017",
    ),
    Term(
        "zcdp",
        "Zero-concentrated DP (zCDP)",
        "One number ρ per release (ρ = 1/(2z²) for Gaussian noise with multiplier z = σ/Δ); "
        "the ρ's add up and one formula turns the total into (ε, δ). Simpler than RDP, a "
        "little looser.",
        "Repeated releases",
        "Bun & Steinke 2016",
    ),
    Term(
        "pld",
        "Privacy loss distribution (PLD)",
        "The distribution of the log-likelihood ratio between the two worlds (with and "
        "without one person). Composing releases convolves their PLDs; for Gaussian noise the "
        "PLD is itself Gaussian, which is why the exact accountant is exact. The app's exact "
        "accountant is checked against Google's PLD accountant.",
        "Repeated releases (docs/composition.md)",
        "Koskela et al. 2020; Google dp_accounting",
    ),
    Term(
        "privacy-profile",
        "Privacy profile δ(ε)",
        "For every ε, the smallest δ for which a view is (ε, δ)-private: one curve says "
        "everything about a mechanism. A curve above another is less private at every ε.",
        "Repeated releases",
        "Balle & Wang 2018, Thm. 8",
    ),
    Term(
        "tradeoff",
        "Trade-off curve",
        "An attacker guessing whether one person is in the data trades false alarms α "
        "against misses β; (ε, δ) forbids every test below a curve. A view breaks its "
        "promise where its own curve dips under that one.",
        "Lesson 4, Attack audit",
        "Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2022",
    ),
    Term(
        "clopper-pearson",
        "Clopper–Pearson bound",
        "An exact confidence bound on a rate measured by counting, e.g. 13 false alarms in "
        "1000 games: the rate is at most the bound with 97.5 % confidence. The audit turns "
        "two such bounds into a lower bound on ε.",
        "Attack audit, lesson 6",
        "Clopper & Pearson 1934; Jagielski et al. 2020",
    ),
    Term(
        "audit",
        "Privacy audit",
        "Play the distinguishing game many times and prove, from the errors counted, that ε "
        "is at least some value. Above the promise, the promise is broken — shown, not only "
        "computed.",
        "Attack audit, lesson 6",
        "Jagielski et al. 2020; Nasr et al. 2021",
    ),
    Term(
        "captured-energy",
        "Captured energy",
        "How good a private PCA subspace is: the data's variance along the directions found, "
        "as a fraction of the best possible (1 = as good as without privacy).",
        "PCA, lesson 5, Trust models",
        "Imtiaz & Sarwate Sec. 6.1",
    ),
)

BY_KEY = {term.key: term for term in GLOSSARY}
PAGE_TERMS = {  # the terms a page names, in the order its line of links shows them
    "trust_models": ("secure-aggregation", "discrete-gaussian", "kls", "captured-energy"),
    "composition": (
        "composition",
        "gdp",
        "rdp",
        "zcdp",
        "advanced-composition",
        "pld",
        "privacy-profile",
    ),
    "audit": ("audit", "clopper-pearson", "tradeoff", "joint-view"),
    "privacy": ("joint-view", "gaussian", "sensitivity"),
}


def terms_line(page: str, glossary_url: str = "glossary") -> str:
    """Markdown: 'Terms on this page:' and a link to each of the page's glossary entries."""
    links = [
        f"[{BY_KEY[k].name}]({glossary_url}?section={BY_KEY[k].anchor})" for k in PAGE_TERMS[page]
    ]
    return "**Terms on this page** (glossary): " + " · ".join(links)
