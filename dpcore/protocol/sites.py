"""The sites of one protocol run as one record: N_s, (ε_s, δ_s), μ_s and the calibration.

The sites-table pages (CAPE averaging, privacy explorer, repeated releases, attack audit,
trust models), their cached calls and the lessons pass one :class:`Sites`, as the PCA and
tensor pages pass one spec (issue #35). The record validates once, is frozen and hashable
(a cache key), and derives what every consumer used to rebuild: τ_s of each site's mean
(paper eq. (2), the Gaussian mechanism with Δ_s = 1/N_s), the sensitivities and the CAPE
designs (Sec. 3, Algorithm 1; or the joint-view-safe design).

It is the core's currency for sites (issue #51): :func:`check_site_record` is the one validation
of N_s, ε_s, δ_s and μ_s, and the functions about sites (the mean-release designs, the trust
tables, the dropout sweep) take a :class:`Sites` where they took the four one by one
(:func:`as_sites` turns the older exploded form into the record).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import check_design_sites, check_per_site, show
from dpcore.mechanisms.calibration import (
    Calibration,
    CalibrationLike,
    mean_noise_std,
    mean_sensitivity,
    site_noise_std,
)
from dpcore.protocol.cape import CapeDesign, check_sizes, normalise_weights
from dpcore.protocol.joint_safe import design_for
from dpcore.resources import MAX_SITE_SAMPLES, MAX_TRUST_EPSILON


def check_site_record(
    n_per_site: ArrayLike, epsilon: ArrayLike, delta: ArrayLike, weights: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The one validation of a set of sites: N_s, ε_s, δ_s and μ_s as S floats each.

    N_s whole numbers in [1, 10⁹] (:data:`~dpcore.resources.MAX_SITE_SAMPLES`),
    2 ≤ S ≤ :data:`~dpcore.resources.MAX_DESIGN_SITES`; ε_s in (0, 10⁶)
    (:data:`~dpcore.resources.MAX_TRUST_EPSILON`: the range every door about sites takes;
    a site with no privacy at all is a design with τ_s = 0, :func:`dpcore.cape_design`);
    δ_s in (0, 1); μ_s ≥ 0 with a positive sum, kept as given (default 1/S).

    Raises
    ------
    ValueError, TypeError
        A field out of range, of another length than ``n_per_site``, or not numbers.
    """
    sizes = check_sizes(n_per_site)
    count = check_design_sites(sizes.size, "n_per_site")
    if np.any(sizes > MAX_SITE_SAMPLES):
        raise ValueError(
            f"every entry of n_per_site must be in [1, {MAX_SITE_SAMPLES:g}]; "
            f"got {show(sizes[sizes > MAX_SITE_SAMPLES][0])}"
        )
    eps = check_per_site(epsilon, count, "epsilon", high=MAX_TRUST_EPSILON, sites_of="n_per_site")
    dlt = check_per_site(delta, count, "delta", high=1.0, sites_of="n_per_site")
    if weights is None:
        mu = np.full(count, 1.0 / count)
    else:
        normalise_weights(weights)  # each ≥ 0 and finite, a positive sum
        mu = np.asarray(weights, dtype=float)
        if mu.shape != (count,):
            raise ValueError(
                f"weights must be one number per site of n_per_site ({count}); "
                f"got {show(weights)}"
            )
    return sizes, eps, dlt, mu


@dataclass(frozen=True, init=False)
class Sites:
    """S sites: sizes, privacy, the aggregator's weights, the calibration and neighbours.

    Parameters
    ----------
    n_per_site : sequence of int, length S
        N_s, whole numbers in [1, 10⁹], 2 ≤ S ≤ 2048 (a design holds S×S matrices).
    epsilon : float or sequence of float
        ε_s in (0, 10⁶), one for every site or one per site.
    delta : float or sequence of float
        δ_s in (0, 1), one for every site or one per site.
    weights : sequence of float, optional
        μ_s ≥ 0 with a positive sum, kept as given (the designs normalise them; the pages
        pass them normalised); default 1/S each.
    calibration : Calibration or {"analytic", "classic"}, optional
        How τ_s is calibrated (:class:`dpcore.Calibration`; default analytic, add/remove).
    neighbouring : {"add-remove", "replace"}, optional
        Replaces the calibration's neighbouring relation, that of a site's second-moment
        release (:attr:`moment_taus`). A mean of values in [0, 1] has Δ_s = 1/N_s under either.

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
    calibration: Calibration

    def __init__(
        self,
        n_per_site: ArrayLike,
        epsilon: ArrayLike,
        delta: ArrayLike,
        weights: ArrayLike | None = None,
        calibration: CalibrationLike = None,
        neighbouring: str | None = None,
    ) -> None:
        # the fields as stored (tuples of Python numbers), whatever array-likes came in
        sizes, eps, dlt, mu = check_site_record(n_per_site, epsilon, delta, weights)
        fields: dict[str, Any] = {
            "n_per_site": tuple(int(n) for n in sizes),
            "epsilon": _floats(eps),
            "delta": _floats(dlt),
            "weights": _floats(mu),
            "calibration": Calibration.of(calibration, neighbouring=neighbouring),
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def neighbouring(self) -> str:
        """The calibration's neighbouring relation."""
        return self.calibration.neighbouring

    @property
    def mu(self) -> NDArray[np.float64]:
        """μ_s normalised to sum 1."""
        return normalise_weights(self.weights)

    @property
    def count(self) -> int:
        """S, the number of sites."""
        return len(self.n_per_site)

    def __len__(self) -> int:
        return self.count

    # σ once per record (issue #51: a page's render computed the same τ_s dozens of times);
    # cached in the instance, read-only so that no caller can change what the next one reads

    @cached_property
    def sensitivities(self) -> NDArray[np.float64]:
        """Δ_s = 1/N_s of each site's mean in [0, 1] (:func:`dpcore.mean_sensitivity`)."""
        return _frozen(mean_sensitivity(self.n_per_site))

    @cached_property
    def taus(self) -> NDArray[np.float64]:
        """τ_s of each site's mean at its (ε_s, δ_s) (:func:`dpcore.mean_noise_std`, eq. (2))."""
        return _frozen(mean_noise_std(
            self.n_per_site, epsilon=self.epsilon, delta=self.delta, calibration=self.calibration
        ))  # fmt: skip

    @cached_property
    def moment_taus(self) -> NDArray[np.float64]:
        """τ_s of each site's second-moment release (:func:`dpcore.site_noise_std`)."""
        return _frozen(site_noise_std(
            self.n_per_site,
            epsilon=self.epsilon,
            delta=self.delta,
            calibration=self.calibration,
        ))  # fmt: skip

    def design(self, kind: str = "cape") -> CapeDesign:
        """The CAPE design of the sites' means, on :attr:`taus` and the weights.

        ``kind``: ``"cape"`` (paper Sec. 3, :func:`dpcore.cape_design`) or ``"joint"``
        (joint-view-safe, :func:`dpcore.joint_safe_design`).
        """
        return design_for(kind, self.taus, weights=self.weights)

    def keywords(self) -> dict[str, Any]:
        """The record's fields as keywords (``n_per_site`` included): ``Sites(**keywords())``."""
        return {
            "n_per_site": self.n_per_site,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "weights": self.weights,
            "calibration": self.calibration,
        }

    def replace(self, **changes: Any) -> Sites:
        """A copy with ``changes``, validated again (``sites.replace(calibration="classic")``).

        A calibration given by its kind's name keeps the record's neighbouring relation.
        """
        fields = self.keywords()
        cal = changes.pop("calibration", self.calibration)
        nbr = changes.pop("neighbouring", None)
        fields["calibration"] = Calibration.of(
            cal, neighbouring=nbr if nbr is not None else self.neighbouring
        )
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Sites has no field {sorted(unknown)[0]!r}")
        return Sites(**{**fields, **changes})


def as_sites(
    sites: Sites | ArrayLike,
    *,
    epsilon: ArrayLike | None = None,
    delta: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    calibration: CalibrationLike = None,
    neighbouring: str | None = None,
) -> Sites:
    """A :class:`Sites` from a record, or from the exploded form (N_s and the keywords).

    The shim of every function about sites: ``f(sites)`` is the form; ``f(n_per_site,
    epsilon=…, delta=…, weights=…, calibration=…)`` builds the record first. A record with
    any of the keywords is refused (which one should win?).

    Raises
    ------
    ValueError
        A record and keywords; N_s without ε or δ; or a field out of range.
    """
    if isinstance(sites, Sites):
        given = {
            "epsilon": epsilon, "delta": delta, "weights": weights,
            "calibration": calibration, "neighbouring": neighbouring,
        }  # fmt: skip
        extra = [name for name, value in given.items() if value is not None]
        if extra:
            raise ValueError(
                f"{extra[0]} must not be given with a Sites record (it holds its own); "
                f"use sites.replace({extra[0]}=...)"
            )
        return sites
    if epsilon is None or delta is None:
        raise ValueError(
            f"n_per_site needs epsilon and delta (or pass a dpcore.Sites); got epsilon="
            f"{show(epsilon)}, delta={show(delta)}"
        )
    return Sites(sites, epsilon, delta, weights, calibration, neighbouring)


def _frozen(values: NDArray[np.float64]) -> NDArray[np.float64]:
    values.setflags(write=False)
    return values


def _floats(values: ArrayLike) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(values, dtype=float))
