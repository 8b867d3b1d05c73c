"""A privacy ledger: repeated releases on the same data add up, per site.

Every release made on the same data — a new noise draw, a re-run, another ε asked for on a
page — spends privacy again. The ledger records, per release, the noise multiplier
z_s = σ_s/Δ_s that protects each site in the counted view (:func:`dpcore.analysis.accounting.
view_noise_multipliers`), and adds them up with an accountant of :mod:`dpcore.analysis.accounting`
at each site's δ_s. It is a frozen value: :meth:`PrivacyLedger.add` returns a new ledger.

:func:`privacy_statement` writes what the numbers mean, in the spirit of TensorFlow
Privacy's ``compute_dp_sgd_privacy_statement`` and OpenDP DP Wizard's "unit of protection".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_choice, check_int, check_per_site
from dpcore.analysis.accounting import (
    MAX_SEQUENCE,
    VIEWS,
    check_multipliers,
    composed_epsilon,
    get_accountant,
)
from dpcore.analysis.views import collusion_bound
from dpcore.mechanisms.calibration import Calibration, CalibrationLike
from dpcore.protocol.joint_safe import DESIGN_KINDS

MAX_ENTRIES = 10**4


@dataclass(frozen=True, eq=False)
class LedgerEntry:
    """One release on the data: a label and the noise multiplier z_s of each site.

    Attributes
    ----------
    label : str
        What was released (shown in the statement).
    noise_multiplier : ndarray, shape (S,)
        σ_s/Δ_s per site in the counted view, each in (0, ∞] (∞: the site is not in it).
    count : int
        How many identical releases this entry stands for, in [1, 10⁶].
    """

    label: str
    noise_multiplier: NDArray[np.float64]
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a str; got {type(self.label).__name__}")
        z = check_multipliers(self.noise_multiplier)
        z.setflags(write=False)
        object.__setattr__(self, "noise_multiplier", z)
        object.__setattr__(self, "count", check_int(self.count, "count", low=1, high=10**6))


@dataclass(frozen=True, eq=False)
class PrivacyLedger:
    """Per-site privacy spent by the releases made so far, against per-site budgets.

    Parameters
    ----------
    budget : array_like, shape (S,)
        Each site's lifetime ε budget, each in (0, 10⁴).
    delta : array_like, shape (S,)
        Each site's total δ_s, each in (0, 1): ε is accounted at it.
    accountant : str
        One of :func:`dpcore.analysis.accounting.accountant_names` (default ``"exact"``).
    entries : tuple of LedgerEntry
        The releases so far (default none); use :meth:`add`.

    Examples
    --------
    >>> ledger = PrivacyLedger(budget=[1.0, 2.0], delta=[1e-5, 1e-5])
    >>> ledger = ledger.add([8.0, 8.0], count=4)
    >>> ledger.n_releases
    4
    >>> from dpcore.analysis.accounting import composed_epsilon
    >>> float(ledger.spent()[0]) == composed_epsilon(4.0, releases=1, delta=1e-5)  # 4 × z=8
    True
    >>> ledger.would_exceed([8.0, 8.0]).tolist()
    [True, False]
    """

    budget: NDArray[np.float64]
    delta: NDArray[np.float64]
    accountant: str = "exact"
    entries: tuple[LedgerEntry, ...] = field(default=())

    def __post_init__(self) -> None:
        budget = check_per_site(self.budget, None, "budget", high=1e4)
        if budget.size > MAX_SEQUENCE:
            raise ValueError(f"budget must list at most {MAX_SEQUENCE} sites; got {budget.size}")
        delta = check_per_site(self.delta, budget.size, "delta", high=1.0, sites_of="budget")
        for arr, name in ((budget, "budget"), (delta, "delta")):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "accountant", get_accountant(self.accountant).name)
        entries = self.entries
        if not isinstance(entries, tuple) or not all(isinstance(e, LedgerEntry) for e in entries):
            raise TypeError("entries must be a tuple of LedgerEntry")
        if len(entries) > MAX_ENTRIES:
            raise ValueError(f"entries must hold at most {MAX_ENTRIES} entries; got {len(entries)}")
        if any(e.noise_multiplier.size != budget.size for e in entries):
            raise ValueError(f"every entry must have one noise_multiplier per site ({budget.size})")

    @property
    def n_sites(self) -> int:
        """S."""
        return int(self.budget.size)

    @property
    def n_releases(self) -> int:
        """Releases recorded (entries weighted by their count)."""
        return sum(e.count for e in self.entries)

    def add(
        self, noise_multiplier: float | ArrayLike, *, label: str = "release", count: int = 1
    ) -> PrivacyLedger:
        """A new ledger with ``count`` more releases of noise multipliers z_s (one per site)."""
        z = check_multipliers(noise_multiplier)
        if z.size not in (1, self.n_sites):
            raise ValueError(
                f"noise_multiplier must be one number or one per site ({self.n_sites}); "
                f"got {z.size}"
            )
        z = np.broadcast_to(z, (self.n_sites,)).copy()
        entry = LedgerEntry(label=label, noise_multiplier=z, count=count)
        return PrivacyLedger(
            budget=self.budget,
            delta=self.delta,
            accountant=self.accountant,
            entries=(*self.entries, entry),
        )

    def _spent(self, entries: tuple[LedgerEntry, ...]) -> NDArray[np.float64]:
        out = np.zeros(self.n_sites)
        if not entries:
            return out
        for s in range(self.n_sites):
            z = np.repeat([e.noise_multiplier[s] for e in entries], [e.count for e in entries])
            out[s] = composed_epsilon(
                z, releases=1, delta=float(self.delta[s]), accountant=self.accountant
            )
        return out

    def spent(self) -> NDArray[np.float64]:
        """ε spent per site so far, at its δ_s, under the ledger's accountant (0 if none)."""
        return self._spent(self.entries)

    def spent_after(
        self, noise_multiplier: float | ArrayLike, *, count: int = 1
    ) -> NDArray[np.float64]:
        """ε per site if ``count`` more releases of z_s were made."""
        return self.add(noise_multiplier, count=count).spent()

    def would_exceed(
        self, noise_multiplier: float | ArrayLike, *, count: int = 1
    ) -> NDArray[np.bool_]:
        """Per site, whether the next release(s) would take its spent ε above its budget."""
        return self.spent_after(noise_multiplier, count=count) > self.budget

    def summary(self) -> pd.DataFrame:
        """The ledger per site, one row each.

        Columns ``site`` (1-based), ``budget``, ``delta``, ``spent``, ``remaining``
        (budget − spent, may be negative), ``fraction`` (spent/budget) and ``exceeded``.
        """
        spent = self.spent()
        return pd.DataFrame(
            {
                "site": np.arange(1, self.n_sites + 1),
                "budget": self.budget,
                "delta": self.delta,
                "spent": spent,
                "remaining": self.budget - spent,
                "fraction": spent / self.budget,
                "exceeded": spent > self.budget,
            }
        )


CALIBRATION_TEXT = {
    "classic": "classic Gaussian calibration σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth 2014, "
    "Thm. A.1; a proof only for ε < 1)",
    "analytic": "analytic Gaussian calibration (Balle & Wang, ICML 2018, Thm. 8; exact for "
    "every ε)",
}
DESIGN_TEXT = {
    "cape": "the paper's design (Imtiaz & Sarwate, Sec. 3, eq. (2)): each release on its own "
    "carries τ_s",
    "joint": "the joint-view-safe design (docs/privacy.md): all releases together carry τ_s",
}
NEIGHBOURING_TEXT = {
    "add-remove": "add or remove one record at one site (N_s treated as public)",
    "replace": "replace one record at one site by another",
}


def privacy_statement(
    ledger: PrivacyLedger,
    *,
    calibration: CalibrationLike,
    design: str,
    view: str = "aggregator's joint view",
    n_colluding: int = 0,
    neighbouring: str | None = None,
    statistic: str = "each site's released statistic",
) -> str:
    """A plain-text privacy statement for the releases recorded in ``ledger``.

    Parameters
    ----------
    ledger : PrivacyLedger
    calibration : Calibration or {"classic", "analytic"}
        How each site's τ_s was calibrated to its per-release (ε_s, δ_s) (a
        :class:`dpcore.Calibration`, as ``Sites.calibration``, or a kind's name).
    design : {"cape", "joint"}
        The paper's CAPE design or the joint-view-safe one.
    view : str
        The view the ledger counted (:data:`dpcore.analysis.accounting.VIEWS`).
    n_colluding : int
        Sites colluding with the aggregator in the counted view, in [0, S − 1].
    neighbouring : {"add-remove", "replace"}, optional
        Replaces the calibration's relation
        (:data:`dpcore.mechanisms.calibration.NEIGHBOURING`).
    statistic : str
        What each site releases, in words (at most 200 characters).

    Returns
    -------
    str
        Unit of privacy, neighbouring relation, trust model, calibration, design, accountant,
        view and colluders, the number of releases, and ε spent at δ_s per site against its
        budget; then what the statement does not cover.

    References
    ----------
    Imtiaz & Sarwate, Sec. 3 (threat model); Imtiaz, Mohammadi & Sarwate, arXiv:1904.10059
    (S_C ≤ ⌈S/3⌉ − 1); TensorFlow Privacy, ``compute_dp_sgd_privacy_statement``.
    """
    if not isinstance(ledger, PrivacyLedger):
        raise TypeError(f"ledger must be a PrivacyLedger; got {type(ledger).__name__}")
    if calibration is None:
        raise ValueError("calibration must be named: the statement says how τ_s was calibrated")
    cal = Calibration.of(calibration, neighbouring=neighbouring)
    calibration, neighbouring = cal.kind, cal.neighbouring
    design = check_choice(design, "design", DESIGN_KINDS)
    view = check_choice(view, "view", VIEWS)
    n = ledger.n_sites
    colluding = check_int(n_colluding, "n_colluding", low=0, high=max(n - 1, 0))
    if not isinstance(statistic, str) or not statistic.strip() or len(statistic) > 200:
        raise TypeError("statistic must be a non-empty str of at most 200 characters")
    if view != "coalition" and colluding:
        raise ValueError(f"n_colluding must be 0 unless view is 'coalition'; got {colluding}")
    summary = ledger.summary()
    bound = collusion_bound(n) if n >= 2 else 0
    who = (
        "the aggregator alone (no site colluding)"
        if colluding == 0
        else f"the aggregator together with {colluding} colluding site(s)"
    )
    lines = [
        "PRIVACY STATEMENT — CAPE Lab",
        "",
        "Unit of privacy: one record (one sample) held by one site.",
        f"Neighbouring data sets: {NEIGHBOURING_TEXT[neighbouring]}.",
        f"Released: {statistic.strip()}, with Gaussian noise by the CAPE protocol "
        "(Imtiaz & Sarwate, Algorithm 1).",
        "Trust model: sites are honest but curious; the aggregator is untrusted; the noise "
        "generator is trusted and sees no data (Imtiaz & Sarwate, Sec. 3).",
        f"Design: {DESIGN_TEXT[design]}.",
        f"Calibration: {CALIBRATION_TEXT[calibration]}.",
        f"View accounted: the {view}, as seen by {who}.",
        f"Colluders: this accounting covers {colluding} colluding site(s); the follow-up CAPE "
        f"analysis (Imtiaz, Mohammadi & Sarwate, arXiv:1904.10059) tolerates up to "
        f"⌈S/3⌉ − 1 = {bound} of S = {n} sites per release.",
        f"Accountant: {get_accountant(ledger.accountant).citation}.",
        f"Releases on the same data: {ledger.n_releases}.",
        "",
        "Per site (ε spent at the site's δ_s, against its budget):",
    ]
    for row in summary.itertuples():
        verdict = "EXCEEDED" if row.exceeded else "within budget"
        lines.append(
            f"  site {row.site}: ε = {row.spent:.4g} at δ = {row.delta:.3g} "
            f"(budget {row.budget:.4g}, {verdict})"
        )
    if ledger.entries:
        lines += ["", "Releases recorded:"]
        lines += [f"  {e.count} × {e.label}" for e in ledger.entries]
    lines += [
        "",
        "Not covered: choices made from the data (hyper-parameters, which ε to ask for), the "
        "sizes N_s (public), the noise generator colluding, and side channels. ε bounds how "
        "much more likely any output is with or without one record: by at most a factor "
        "e^ε, except with probability δ.",
    ]
    return "\n".join(lines)
