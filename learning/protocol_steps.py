"""Algorithm 1 (CAPE, Alg. 5) as a sequence of steps over one real run — no Streamlit here.

Every number comes from a :class:`dpcore.protocol.protocol_demo.ProtocolDemo`; this module only says
which of them a step shows, who sends what to whom, and what each party holds afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore import ProtocolDemo

NG, AGG = "noise generator", "aggregator"
LEDGER = ("a_s", "E_s", "F_s", "G_s", "Â_s", "Â_s − F_s")


@dataclass(frozen=True)
class ProtocolStep:
    """What one step of the stepper shows.

    Attributes
    ----------
    title, text : str
        Heading and a few sentences (markdown) with this draw's numbers.
    message : tuple of (sender, receiver, name) or None
        The message sent in this step, drawn highlighted.
    sent : sequence of (sender, receiver, name)
        Messages delivered before this step (drawn faint): a tuple, or for a real run's log a
        view of the log's messages (:class:`learning.run_replay.Sent`), never a copy.
    revealed : dict
        Ledger column → how many sites' entries are known by now.
    figure : {"network", "cancel"}
        The network picture, or the weighted sum with the E's cancelling.
    """

    title: str
    text: str
    message: tuple[str, str, str] | None
    sent: Sequence[tuple[str, str, str]]
    revealed: dict[str, int]
    figure: str = "network"


def fmt(value: np.ndarray, *, tiny: bool = False) -> str:
    """A scalar as +0.1234; a symmetric 2×2 as [[a, b], [b, c]] with 3 decimals.

    ``tiny``: scientific notation, for sums that are zero to rounding (1e-17, not -0.000).
    """
    v = np.asarray(value, dtype=float)
    one = "{:+.1e}" if tiny else ("{:+.4f}" if v.ndim == 0 else "{:+.3f}")
    if v.ndim == 0:
        return one.format(float(v))
    rows = ", ".join("[" + ", ".join(one.format(x) for x in row) + "]" for row in v)
    return f"[{rows}]"


def fmt_sum(*terms: tuple[np.ndarray, bool]) -> str:
    """``(value, tiny)`` terms joined by + and −, each sign written once: "0.5 + 0.0156",
    "0.5 − 0.0156", never "+ +0.0156". A 2×2 term is added whole, its entries keep their signs.
    """
    out = ""
    for value, tiny in terms:
        text = fmt(value, tiny=tiny)
        if np.ndim(value) == 0:
            sign, text = text[0], text[1:]
            op = "−" if sign == "-" else "+"
        else:
            op = "+"
        out = (f"−{text}" if op == "−" else text) if not out else f"{out} {op} {text}"
    return out


def site_name(s: int) -> str:
    """Party name of site s (0-based index), as in :attr:`AveragingRun.messages`."""
    return f"site {s + 1}"


def protocol_steps(demo: ProtocolDemo) -> list[ProtocolStep]:
    """The 3S + 5 steps of one run, in the order of Algorithm 1 (steps 1–8)."""
    run, design = demo.run, demo.run.design
    if design is None:  # a conventional run has no design; the demo runs CAPE's protocol
        raise ValueError("protocol_steps needs a CAPE run (its design); got a run without one")
    n = run.values.shape[0]
    tau, tau_e, tau_g = design.tau_site[0], design.tau_e[0], design.tau_g[0]
    by_name = {m.name: m for m in run.messages}
    steps: list[ProtocolStep] = []
    sent: list[tuple[str, str, str]] = []
    shown = dict.fromkeys(LEDGER, 0)

    def add(title, text, message=None, figure="network", **reveal):
        shown.update(reveal)
        steps.append(ProtocolStep(title, text, message, tuple(sent), dict(shown), figure))
        if message is not None:
            sent.append(message)

    add(
        "Each site holds a private value",
        f"{n} sites each hold a statistic a_s of N_s = {demo.n_per_site} private samples "
        f"({'a mean of values in [0, 1]' if run.values.ndim == 1 else 'a 2×2 second-moment matrix'}"
        f"). Released alone with (ε, δ)-DP, each needs Gaussian noise of std τ_s = {tau:.4f} "
        f"(sensitivity 1/N_s, Sec. 2). The aggregator wants Σ μ_s a_s with μ_s = 1/{n}.",
        **{"a_s": n},
    )
    add(
        "The noise generator draws E_1 … E_S that sum to zero",
        f"Each E_s is Gaussian with std τ_e = √(1 − 1/S)·τ_s = {tau_e:.4f} (eq. (2)), but they "
        "are drawn together so that Σ_s μ_s E_s = 0: here the sum is "
        f"{fmt(demo.e_sum, tiny=True)} — zero to rounding. Nobody but the noise generator sees "
        "them all.",
        E_s=n,
    )
    for s in range(n):
        m = by_name[f"E_{s + 1}"]
        add(
            f"Noise generator → {site_name(s)}: E_{s + 1}",
            f"Over a secure channel, {site_name(s)} receives E_{s + 1} = {fmt(m.value)}. "
            "On its own it looks like any Gaussian draw: the site cannot tell it is part of a "
            "zero sum.",
            (NG, site_name(s), m.name),
        )
    add(
        "The aggregator draws F_1 … F_S",
        f"Independent Gaussians with std τ_f = τ_e = {tau_e:.4f} (eq. (2)). The aggregator "
        "keeps a copy: it will subtract them later.",
        F_s=n,
    )
    for s in range(n):
        m = by_name[f"F_{s + 1}"]
        add(
            f"Aggregator → {site_name(s)}: F_{s + 1}",
            f"{site_name(s).capitalize()} receives F_{s + 1} = {fmt(m.value)}.",
            (AGG, site_name(s), m.name),
        )
    for s in range(n):
        m = by_name[f"Â_{s + 1}"]
        add(
            f"{site_name(s).capitalize()} adds its own G_{s + 1} and sends Â_{s + 1}",
            f"G_{s + 1} = {fmt(run.g[s])} (std τ_g = τ_s/√S = {tau_g:.4f}). "
            f"Â_{s + 1} = a_{s + 1} + E_{s + 1} + F_{s + 1} + G_{s + 1} = {fmt(m.value)}. "
            "The aggregator knows F but not E: to it the noise is E + G, of variance "
            "τ_e² + τ_g² = τ_s²; to the noise generator it is F + G, again τ_s². Either way the "
            "release is as private as the site alone needs (Sec. 3).",
            (site_name(s), AGG, m.name),
            G_s=s + 1,
            **{"Â_s": s + 1},
        )
    add(
        "The aggregator subtracts its F_s",
        "Â_s − F_s = a_s + E_s + G_s. Per site the aggregator still sees noise E_s + G_s of "
        f"variance τ_e² + τ_g² = τ_s² = {tau**2:.2e}: exactly what the site needs alone, so no "
        "single site is exposed.",
        **{"Â_s − F_s": n},
    )
    add(
        "The weighted sum: the E's cancel",
        "Σ μ_s (Â_s − F_s) = Σ μ_s a_s + Σ μ_s E_s + Σ μ_s G_s = "
        f"{fmt_sum((demo.value_sum, False), (demo.e_sum, True), (demo.g_sum, False))} "
        f"= **{fmt_sum((run.estimate, False))}**. "
        f"Only the G's remain: std τ_g/√S = τ_s/S = {design.tau_agg:.4f}, the noise a trusted "
        f"curator holding all {n * demo.n_per_site} samples would add — √S = "
        f"{np.sqrt(n):.2f}× less than conventional averaging's τ_s/√S = {design.tau_conv:.4f}.",
        figure="cancel",
    )
    return steps


def holdings(demo: ProtocolDemo, step: ProtocolStep) -> pd.DataFrame:
    """What each party has received by the end of ``step`` (its own draws included)."""
    delivered = [*step.sent, *([step.message] if step.message else [])]
    n = demo.run.values.shape[0]
    rows = []
    for party in (NG, AGG, *(site_name(s) for s in range(n))):
        got = [name for _, to, name in delivered if to == party]
        if party == NG and step.revealed["E_s"]:
            own = "drew every E_s"
        elif party == AGG and step.revealed["F_s"]:
            own = "drew every F_s"
        elif party.startswith("site"):
            s = int(party.split()[1]) - 1
            own = "its a_s" + (", its G_s" if step.revealed["G_s"] > s else "")
        else:
            own = "—"
        rows.append({"party": party, "own": own, "received": ", ".join(got) or "—"})
    return pd.DataFrame(rows)


NOT_SENT = "—"  # what the ledger shows for an entry not drawn or sent yet (not "None")


def ledger(demo: ProtocolDemo, step: ProtocolStep) -> pd.DataFrame:
    """Every number of the run known by the end of ``step``; unknown entries are NaN.

    One row per site (per free entry of a 2×2 value) and a last row with the weighted sums
    Σ μ_s · (column) once the aggregator has summed.
    """
    run = demo.run
    columns = {
        "a_s": run.values,
        "E_s": run.e,
        "F_s": run.f,
        "G_s": run.g,
        "Â_s": run.released,
        "Â_s − F_s": demo.unmasked,
    }
    n = run.values.shape[0]
    entries = (
        [((), "")]
        if run.values.ndim == 1
        else [((0, 0), "[1,1]"), ((0, 1), "[1,2]"), ((1, 1), "[2,2]")]
    )
    rows = []
    for s in range(n):
        for idx, entry in entries:
            row: dict = {"site": f"{s + 1}", "entry": entry}
            for col, arr in columns.items():
                row[col] = float(arr[s][idx]) if s < step.revealed[col] else np.nan
            rows.append(row)
    if step.figure == "cancel":  # the aggregator's sums, as dpcore computed them
        sums = {
            "a_s": demo.value_sum,
            "E_s": demo.e_sum,
            "G_s": demo.g_sum,
            "Â_s − F_s": run.estimate,
        }
        for idx, entry in entries:
            row = {"site": "Σ μ_s ·", "entry": entry}
            row.update({c: float(sums[c][idx]) if c in sums else np.nan for c in columns})
            rows.append(row)
    out = pd.DataFrame(rows)
    return out if run.values.ndim > 1 else out.drop(columns="entry")
