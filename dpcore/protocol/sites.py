"""The sites of one protocol run as one record: N_s, (ε_s, δ_s), μ_s, calibration, neighbours.

The sites-table pages (CAPE averaging, privacy explorer, repeated releases, attack audit,
trust models), their cached calls and the lessons pass one :class:`Sites`, as the PCA and
tensor pages pass one spec (issue #35). The record validates once, is frozen and hashable
(a cache key), and derives what every consumer used to rebuild: τ_s of each site's mean
(paper eq. (2), the Gaussian mechanism with Δ_s = 1/N_s), the sensitivities and the CAPE
designs (Sec. 3, Algorithm 1; or the joint-view-safe design).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_choice, check_design_sites, check_per_site, show
from dpcore.mechanisms.calibration import (
    CALIBRATIONS,
    NEIGHBOURING,
    mean_noise_std,
    mean_sensitivity,
    site_noise_std,
)
from dpcore.protocol.cape import CapeDesign, check_sizes, normalise_weights
from dpcore.protocol.joint_safe import design_for
from dpcore.protocol.mean_release import MeanReleaseDesigns, mean_release_designs


@dataclass(frozen=True, init=False)
class Sites:
    """S sites: sizes, privacy, the aggregator's weights, the calibration and neighbours.

    Parameters
    ----------
    n_per_site : sequence of int, length S
        N_s, whole numbers in [1, 1e100], 2 ≤ S ≤ 2048 (a design holds S×S matrices).
    epsilon : float or sequence of float
        ε_s in (0, ∞], one for every site or one per site.
    delta : float or sequence of float
        δ_s in (0, 1), one for every site or one per site.
    weights : sequence of float, optional
        μ_s ≥ 0 with a positive sum, kept as given (the designs normalise them; the pages
        pass them normalised); default 1/S each.
    calibration : {"analytic", "classic"}
        How τ_s is calibrated (:func:`dpcore.gaussian_sigma`).
    neighbouring : {"add-remove", "replace"}
        The neighbouring relation of a site's second-moment release (:attr:`moment_taus`).
        A mean of values in [0, 1] has Δ_s = 1/N_s under either.

    Raises
    ------
    ValueError, TypeError
        A field out of range, of another length than ``n_per_site``, or not numbers.

    Examples
    --------
    >>> sites = Sites((100, 200), epsilon=0.5, delta=1e-3)
    >>> sites.count, sites.weights, sites.epsilon
    (2, (0.5, 0.5), (0.5, 0.5))
    >>> [round(float(t), 5) for t in sites.taus]
    [0.0461, 0.02305]
    >>> hash(sites) == hash(Sites([100, 200], epsilon=[0.5, 0.5], delta=1e-3))
    True
    """

    n_per_site: tuple[int, ...]
    epsilon: tuple[float, ...]
    delta: tuple[float, ...]
    weights: tuple[float, ...]
    calibration: str
    neighbouring: str

    def __init__(
        self,
        n_per_site: ArrayLike,
        epsilon: ArrayLike,
        delta: ArrayLike,
        weights: ArrayLike | None = None,
        calibration: str = "analytic",
        neighbouring: str = "add-remove",
    ) -> None:
        # the fields as stored (tuples of Python numbers), whatever array-likes came in
        sizes = check_sizes(n_per_site)
        count = check_design_sites(sizes.size, "n_per_site")
        if weights is None:
            mu: tuple[float, ...] = (1.0 / count,) * count
        else:
            normalise_weights(weights)  # each ≥ 0 and finite, a positive sum
            given = np.asarray(weights, dtype=float)
            if given.shape != (count,):
                raise ValueError(
                    f"weights must be one number per site of n_per_site ({count}); "
                    f"got {show(weights)}"
                )
            mu = _floats(given)
        fields: dict[str, Any] = {
            "n_per_site": tuple(int(n) for n in sizes),
            "epsilon": _floats(check_per_site(epsilon, count, "epsilon", sites_of="n_per_site")),
            "delta": _floats(
                check_per_site(delta, count, "delta", high=1.0, sites_of="n_per_site")
            ),
            "weights": mu,
            "calibration": check_choice(calibration, "calibration", CALIBRATIONS),
            "neighbouring": check_choice(neighbouring, "neighbouring", NEIGHBOURING),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def count(self) -> int:
        """S, the number of sites."""
        return len(self.n_per_site)

    def __len__(self) -> int:
        return self.count

    @property
    def sensitivities(self) -> NDArray[np.float64]:
        """Δ_s = 1/N_s of each site's mean in [0, 1] (:func:`dpcore.mean_sensitivity`)."""
        return mean_sensitivity(self.n_per_site)

    @property
    def taus(self) -> NDArray[np.float64]:
        """τ_s of each site's mean at its (ε_s, δ_s) (:func:`dpcore.mean_noise_std`, eq. (2))."""
        return mean_noise_std(
            self.n_per_site, epsilon=self.epsilon, delta=self.delta, method=self.calibration
        )

    @property
    def moment_taus(self) -> NDArray[np.float64]:
        """τ_s of each site's second-moment release (:func:`dpcore.site_noise_std`)."""
        return site_noise_std(
            self.n_per_site,
            epsilon=self.epsilon,
            delta=self.delta,
            method=self.calibration,
            neighbouring=self.neighbouring,
        )

    def design(self, kind: str = "cape") -> CapeDesign:
        """The CAPE design of the sites' means, on :attr:`taus` and the weights.

        ``kind``: ``"cape"`` (paper Sec. 3, :func:`dpcore.cape_design`) or ``"joint"``
        (joint-view-safe, :func:`dpcore.joint_safe_design`).
        """
        return design_for(kind, self.taus, weights=self.weights)

    def designs(self) -> MeanReleaseDesigns:
        """The three designs side by side (:func:`dpcore.mean_release_designs`)."""
        return mean_release_designs(
            self.n_per_site,
            epsilon=self.epsilon,
            delta=self.delta,
            weights=self.weights,
            calibration=self.calibration,
        )

    def keywords(self) -> dict[str, Any]:
        """The keywords of the core's per-site functions, ``n_per_site`` included."""
        return {
            "n_per_site": self.n_per_site,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "weights": self.weights,
            "calibration": self.calibration,
        }

    def replace(self, **changes: Any) -> Sites:
        """A copy with ``changes``, validated again (``sites.replace(calibration="classic")``)."""
        return dataclasses.replace(self, **changes)


def _floats(values: ArrayLike) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=float))
