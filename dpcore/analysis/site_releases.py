"""The sites' releases as one view counts them: what the accountants need of a sites table.

The Repeated releases page used to read each site's noise multiplier z_s = σ_s/Δ_s out of
one cached call and hand it back down to the next (issue #35: ε took 10 hops, bouncing
through the page). :class:`SiteReleases` holds the sites (:class:`dpcore.Sites`), the CAPE
design and the view that is counted; its methods go from there to the accountants' records
in one step each: ε over T releases per accountant, the exact growth, and the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore._validation import check_choice, check_int, check_real
from dpcore.analysis.accounting import (
    VIEWS,
    CompositionGrowth,
    composition_growth,
    epsilon_curve,
    view_noise_multipliers,
)
from dpcore.analysis.ledger import PrivacyLedger
from dpcore.protocol.joint_safe import DESIGN_KINDS
from dpcore.protocol.sites import Sites

# What a release of the sites table is: each site's mean of values in [0, 1].
MEAN_RELEASE = "release of each site's mean"


@dataclass(frozen=True)
class SiteReleases:
    """Every site's release of its mean, in one view of one CAPE design.

    Parameters
    ----------
    sites : Sites
        N_s, (ε_s, δ_s), μ_s and the calibration (τ_s of each mean, paper eq. (2)).
    design : {"cape", "joint"}
        The paper's design (Sec. 3) or the joint-view-safe one.
    view : {"own release", "aggregator's joint view"}
        What an accountant adds up per release (:func:`dpcore.view_noise_multipliers`).

    Examples
    --------
    >>> from dpcore import Sites
    >>> seen = SiteReleases(Sites((100, 200), epsilon=0.5, delta=1e-3), view="own release")
    >>> [round(float(z), 4) for z in seen.noise_multipliers]
    [4.6101, 4.6101]
    """

    sites: Sites
    design: str = "cape"
    view: str = "aggregator's joint view"

    def __post_init__(self) -> None:
        if not isinstance(self.sites, Sites):
            raise TypeError(f"sites must be a dpcore.Sites; got {type(self.sites).__name__}")
        check_choice(self.design, "design", DESIGN_KINDS)
        check_choice(self.view, "view", [v for v in VIEWS if v != "coalition"])

    @property
    def noise_multipliers(self) -> NDArray[np.float64]:
        """z_s = σ_s/Δ_s protecting each site in the view, one release."""
        return view_noise_multipliers(
            self.sites.design(self.design), sensitivity=self.sites.sensitivities, view=self.view
        )

    def _site(self, site: object) -> int:
        return check_int(site, "site", low=0, high=self.sites.count - 1)

    def epsilon_curve(self, site: int, *, max_releases: int) -> pd.DataFrame:
        """Site ``site``'s ε at its δ_s after T = 1 … ``max_releases`` releases, per accountant.

        ``site`` is 0-based; one row per (T, accountant record) (:func:`dpcore.epsilon_curve`).
        """
        s = self._site(site)
        z = float(self.noise_multipliers[s])
        return epsilon_curve(z, max_releases=max_releases, delta=self.sites.delta[s])

    def growth(self, site: int, *, releases: int) -> CompositionGrowth:
        """Site ``site``'s exact ε over ``releases`` releases (:func:`composition_growth`)."""
        s = self._site(site)
        z = float(self.noise_multipliers[s])
        return composition_growth(z, releases=releases, delta=self.sites.delta[s])

    def ledger(
        self, *, budget_multiple: float, accountant: str, releases: int
    ) -> PrivacyLedger:
        """The ledger of every site after ``releases`` releases of its mean (0: empty).

        Each site's budget is ``budget_multiple`` × ε_s at its δ_s; ``accountant`` adds up
        (:class:`dpcore.PrivacyLedger`).
        """
        multiple = check_real(budget_multiple, "budget_multiple", low=1.0, high=1e6)
        releases = check_int(releases, "releases", low=0, high=10**6)
        z: Sequence[float] = [float(v) for v in self.noise_multipliers]
        ledger = PrivacyLedger(
            budget=np.array([multiple * e for e in self.sites.epsilon]),
            delta=np.array(self.sites.delta),
            accountant=accountant,
        )
        return ledger.add(list(z), label=MEAN_RELEASE, count=releases) if releases else ledger
