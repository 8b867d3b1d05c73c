"""One name and one colour per algorithm, on every page (Okabe–Ito colour-blind-safe palette)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Style:
    """How an algorithm is shown."""

    label: str
    color: str
    dash: str = "solid"


STYLES: dict[str, Style] = {
    "nonprivate": Style("Non-private (pooled)", "#000000", "dash"),
    "cape": Style("CAPE", "#D55E00"),
    "conv": Style("Conventional", "#0072B2"),
    "dpdis": Style("DPdisPCA", "#CC79A7"),
    "local": Style("Local (one site)", "#009E73"),
    "local_agn": Style("Local AGN (one site)", "#009E73"),
    "local_avn": Style("Local AVN (one site)", "#56B4E9"),
    "random": Style("Random vectors", "#999999", "dot"),
}

DESCRIPTIONS: dict[str, str] = {
    "nonprivate": "all data pooled at a trusted curator, no noise — the best possible",
    "cape": "correlated noise: the aggregate carries only the pooled noise level",
    "conv": "every site adds its own full noise; the aggregator averages",
    "dpdis": "sites send a noisy rank-R square root of their matrix (less communication)",
    "local": "one site alone, with its own data and noise",
    "local_agn": "one site alone, Gaussian noise on M2 and M3 (Algorithm 3)",
    "local_avn": "one site alone, vector noise on M3 (pure ε for M3, Algorithm 4)",
    "random": "random vectors: what knowing nothing gives",
}

AXIS_LABELS = {
    "epsilon": "privacy ε",
    "delta": "privacy δ",
    "n_per_site": "samples per site N_s",
    "sites": "number of sites S",
}
LOG_AXES = {"epsilon", "delta", "n_per_site"}


def label(algorithm: str) -> str:
    """Display name of an algorithm (falls back to the name itself)."""
    return STYLES[algorithm].label if algorithm in STYLES else algorithm
