"""The three CAPE designs for sites that each release a mean, side by side.

The averaging pages release each site's mean of N_s values in [0, 1] (sensitivity 1/N_s,
:func:`dpcore.mean_noise_std`) and compare, on the same sites:

- our design (:func:`dpcore.cape_design`): the aggregate carries exactly the pooled noise;
- the joint-view-safe design (:func:`dpcore.joint_safe_design`): also safe in the
  aggregator's view of all releases together, for a slightly larger aggregate;
- the paper's closed form (Imtiaz & Sarwate, Sec. 3.1; :func:`dpcore.paper_design`), which
  can ask for a negative variance;

and the paper's gain formula G(n) (Proposition 1, :func:`dpcore.cape_gain`) with the reasons
it is not these sites' gain when their (ε, δ) or weights differ (issue #22).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import (
    as_float_array,
    check_positive_array,
    show,
)
from dpcore.mechanisms.calibration import CalibrationLike
from dpcore.protocol.cape import CapeDesign, cape_design, cape_gain, check_sizes, paper_design
from dpcore.protocol.joint_safe import joint_safe_design
from dpcore.protocol.sites import Sites, as_sites  # the record below; it never imports this

# The gains a page compares, in its order: the names of :attr:`MeanReleaseDesigns.gains`.
GAIN_NAMES = ("same_weights", "joint_same_weights", "best_conventional", "paper_g")


@dataclass(frozen=True, eq=False)
class MeanReleaseDesigns:
    """Our, the joint-view-safe and the paper's CAPE design for the same sites.

    Attributes
    ----------
    n_per_site : ndarray of float, shape (S,)
        N_s (whole numbers).
    epsilon, delta : ndarray, shape (S,)
        Each site's (ε_s, δ_s).
    cape, joint, paper : CapeDesign
        :func:`dpcore.cape_design`, :func:`dpcore.joint_safe_design` and
        :func:`dpcore.paper_design` (possibly infeasible) on τ_s and the weights μ_s.
    """

    n_per_site: NDArray[np.float64]
    epsilon: NDArray[np.float64]
    delta: NDArray[np.float64]
    cape: CapeDesign
    joint: CapeDesign
    paper: CapeDesign

    def __post_init__(self) -> None:
        for name in ("cape", "joint", "paper"):
            design = getattr(self, name)
            if not isinstance(design, CapeDesign):
                raise TypeError(f"{name} must be a CapeDesign; got {type(design).__name__}")
        sites = self.cape.n_sites
        for name in ("joint", "paper"):
            if getattr(self, name).n_sites != sites:
                raise ValueError(
                    f"{name} must have as many sites as cape ({sites}); "
                    f"got {getattr(self, name).n_sites}"
                )
        per_site = {}
        for name, value in (
            ("n_per_site", check_sizes(self.n_per_site)),  # whole numbers, up to 1e100
            ("epsilon", self.epsilon),
            ("delta", self.delta),
        ):
            arr = as_float_array(value, name)
            if arr.shape not in ((), (sites,)):
                raise ValueError(f"{name} must have one entry per site ({sites}); got {arr.shape}")
            per_site[name] = np.array(np.broadcast_to(arr, (sites,)))
        check_positive_array(per_site["epsilon"], "epsilon", allow_inf=True)
        dl = per_site["delta"]
        if np.any(np.isnan(dl) | (dl <= 0) | (dl >= 1)):
            raise ValueError(f"every entry of delta must be in (0, 1); got {show(self.delta)}")
        for name, arr in per_site.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def tau_site(self) -> NDArray[np.float64]:
        """τ_s, the std each site's mean needs on its own."""
        return self.cape.tau_site

    @property
    def gains(self) -> dict[str, float]:
        """CAPE's variance gain against each conventional comparison (:data:`GAIN_NAMES`).

        ``same_weights``: conventional averaging with the same μ_s; ``joint_same_weights``:
        the same for the joint-view-safe design; ``best_conventional``: the inverse-variance
        weighting; ``paper_g``: equal weights 1/S, the comparison of Proposition 1.
        """
        return {
            "same_weights": self.cape.gain_same_weights,
            "joint_same_weights": self.joint.gain_same_weights,
            "best_conventional": self.cape.gain_best_conventional,
            "paper_g": self.cape.gain_equal_weights,
        }

    @property
    def paper_formula(self) -> float:
        """The paper's G(n) = (N²/S²) Σ 1/N_s² (Proposition 1): ignores ε_s, δ_s and μ_s."""
        return cape_gain(self.n_per_site)

    @property
    def paper_formula_differs(self) -> tuple[str, ...]:
        """Why G(n) is not these sites' equal-weights gain; empty when it is.

        G(n) assumes one (ε, δ) for every site (so τ_s ∝ 1/N_s) and μ_s = N_s/N.
        """
        sizes = self.n_per_site
        reasons = []
        if not np.allclose(self.epsilon, self.epsilon[0], rtol=1e-12, atol=0):
            reasons.append("the sites' ε differ")
        if not np.allclose(self.delta, self.delta[0], rtol=1e-12, atol=0):
            reasons.append("the sites' δ differ")
        if not np.allclose(self.cape.weights, sizes / sizes.sum(), rtol=1e-9, atol=0):
            reasons.append("the weights are not μ_s = N_s/N")
        return tuple(reasons)

    def table(self) -> pd.DataFrame:
        """One row per site: N_s, μ_s, τ_s and every design's τ_e, τ_f, τ_g.

        The paper's design gives τ_g², which may be negative (then it cannot be run).
        """
        cape, joint = self.cape, self.joint
        return pd.DataFrame(
            {
                "site": np.arange(1, cape.n_sites + 1),
                "N_s": self.n_per_site.astype(np.int64)
                if self.n_per_site.max() < 2**53
                else self.n_per_site,
                "μ_s": cape.weights,
                "τ_s": cape.tau_site,
                "τ_e": cape.tau_e,
                "τ_f": cape.tau_f,
                "τ_g": cape.tau_g,
                "paper τ_g²": self.paper.var_g,
                "joint-safe τ_e": joint.tau_e,
                "joint-safe τ_f": joint.tau_f,
                "joint-safe τ_g": joint.tau_g,
            }
        )


def mean_release_designs(
    n_per_site: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    calibration: CalibrationLike = None,
) -> MeanReleaseDesigns:
    """The three CAPE designs for sites releasing their mean of values in [0, 1].

    Parameters
    ----------
    n_per_site : Sites, or array_like of int, shape (S,)
        The sites (:class:`dpcore.Sites`); or N_s per site with the keywords below, the
        older exploded form (:func:`dpcore.protocol.sites.as_sites`).
    epsilon, delta, weights, calibration : optional
        With N_s only: ε_s, δ_s, μ_s and the calibration, as :class:`dpcore.Sites` takes them.

    Returns
    -------
    MeanReleaseDesigns

    References
    ----------
    Imtiaz & Sarwate, Sec. 3, eq. (2) and Sec. 3.1 (the designs); Proposition 1 (G(n)).

    Examples
    --------
    >>> d = mean_release_designs([100, 100], epsilon=0.5, delta=0.01, calibration="classic")
    >>> round(d.gains["same_weights"], 6), d.paper_formula_differs
    (2.0, ())
    """
    record = as_sites(
        n_per_site, epsilon=epsilon, delta=delta, weights=weights, calibration=calibration
    )
    tau = record.taus
    cape = cape_design(tau, weights=record.weights)
    return MeanReleaseDesigns(
        n_per_site=np.asarray(record.n_per_site, dtype=float),
        epsilon=np.asarray(record.epsilon),
        delta=np.asarray(record.delta),
        cape=cape,
        joint=joint_safe_design(tau, weights=cape.weights),
        paper=paper_design(tau, weights=cape.weights, tau_pool=cape.tau_pool),
    )
