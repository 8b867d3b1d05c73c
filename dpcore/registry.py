"""The algorithm registry: one frozen record per algorithm, read by everything that lists them.

The sweeps run an algorithm through its record, :func:`dpcore.communication_cost` and the
resource guard read its cost and work, and the app takes its label, colour and description
from it. Adding a baseline is one :class:`Algorithm` record (here, or :func:`register` at
runtime), its function (in :mod:`dpcore.pca` or :mod:`dpcore.otd`) and its tests. An unknown
name is a ``ValueError`` at lookup (:func:`get`), never a silent fall-through.

Random streams: every (grid point, run) spawns one stream per algorithm of the family, in
registration order (:func:`streams`). A stream therefore depends only on the algorithm's
position, not on which algorithms a sweep runs; a new algorithm is appended, so the numbers
of the existing ones do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpcore.metrics import top_k_eigvecs
from dpcore.models import MixtureModel
from dpcore.moments import SiteMoments
from dpcore.otd import (
    WhitenedTensor,
    agn_otd,
    avn_otd,
    cape_otd,
    conv_otd,
    nonprivate_otd,
    random_components,
)
from dpcore.pca import cape_pca, conv_pca, dpdis_pca, local_pca, nonprivate_pca
from dpcore.secagg import point_design, secagg_symmetric, symmetric_coordinates
from dpcore.tensor import Recovery, multilinear, whitening

FAMILIES = ("pca", "otd")


# --- what an algorithm sees in one run -------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PcaInputs:
    """Everything a distributed PCA algorithm gets in one (grid point, run).

    Attributes
    ----------
    moments : ndarray, shape (S, D, D)
        The sites' second-moment matrices A_s.
    k : int
        Subspace dimension K.
    tau : ndarray, shape (S,)
        Per-site noise std τ_s for the site's full (ε, δ).
    weights : ndarray, shape (S,)
        Aggregator weights μ_s.
    rank : int
        R for algorithms that send a rank-R factor (DPdisPCA).
    faithful : bool
        Run the protocol message by message instead of drawing the aggregate noise.
    privacy : SitePrivacy, optional
        Sensitivities, (ε, δ) and settings, for baselines that calibrate their own noise.
    """

    moments: NDArray[np.float64]
    k: int
    tau: NDArray[np.float64]
    weights: NDArray[np.float64]
    rank: int
    faithful: bool
    privacy: SitePrivacy | None = None


@dataclass(frozen=True, eq=False)
class SitePrivacy:
    """What a baseline that calibrates its own noise needs: Δ_s, (ε, δ) and its settings.

    Attributes
    ----------
    sensitivity : ndarray, shape (S,)
        Δ_s of each site's statistic under the sweep's neighbouring relation.
    epsilon, delta : float
        The grid point's (ε, δ) for this statistic (a stage's share of it for tensors).
    calibration : str
        The sweep's Gaussian calibration ("classic" or "analytic").
    bits : int
        Secure aggregation's bit width b.
    scale : float or None
        Its scale γ (``None``: automatic, :func:`dpcore.secagg.auto_scale`).
    """

    sensitivity: NDArray[np.float64]
    epsilon: float
    delta: float
    calibration: str
    bits: int
    scale: float | None


@dataclass(frozen=True, eq=False)
class NoiseScales:
    """Per-site noise of one tensor grid point (Algorithms 2–4).

    Attributes
    ----------
    tau2, tau3 : ndarray, shape (S,)
        Gaussian std for M2 at (ε₁, δ₁) and M3 at (ε₂, δ₂).
    tau2_avn : ndarray, shape (S,)
        Gaussian std for M2 at (ε₁, δ₁ + δ₂): AVN spends all of δ on M2.
    beta : ndarray, shape (S,)
        AVN's vector-noise rate ε₂/Δ₃ for M3.
    privacy2, privacy3 : SitePrivacy, optional
        Sensitivities and (ε₁, δ₁), (ε₂, δ₂) of M2 and M3, for baselines that calibrate
        their own noise (secure aggregation).
    """

    tau2: NDArray[np.float64]
    tau3: NDArray[np.float64]
    tau2_avn: NDArray[np.float64]
    beta: NDArray[np.float64]
    privacy2: SitePrivacy | None = None
    privacy3: SitePrivacy | None = None


@dataclass(frozen=True, eq=False)
class OtdInputs:
    """Everything a distributed tensor algorithm gets in one (grid point, run).

    Attributes
    ----------
    moments : SiteMoments
        Every site's M2 and M3.
    k : int
        Number of components K.
    weights : ndarray, shape (S,)
        Aggregator weights μ_s.
    noise : NoiseScales
        Calibrated per-site noise.
    faithful : bool
        Run the protocol message by message instead of drawing the aggregate noise.
    model : MixtureModel
        The planted model (only its public shape is used: D, K, kind).
    """

    moments: SiteMoments
    k: int
    weights: NDArray[np.float64]
    noise: NoiseScales
    faithful: bool
    model: MixtureModel


@dataclass(frozen=True)
class CostShape:
    """The sizes communication cost depends on: D, K, S and DPdisPCA's R."""

    dim: int
    k: int
    sites: int
    rank: int


@dataclass(frozen=True)
class PartyCost:
    """Real numbers sent by each party in one run."""

    noise_generator: int = 0
    aggregator: int = 0
    sites: int = 0


def _silent(_: CostShape) -> PartyCost:
    return PartyCost()


def _one(_: int) -> int:
    return 1


def _no_draws(sites: int, dim: int) -> int:
    return 0


# --- how an algorithm runs in each family ------------------------------------------------------


@dataclass(frozen=True)
class PcaMethod:
    """How an algorithm runs in :func:`dpcore.pca_sweep`.

    Attributes
    ----------
    run : callable
        ``run(inputs: PcaInputs, rng) -> ndarray (D, K)``: an orthonormal basis.
    cost : callable
        ``cost(CostShape) -> PartyCost``: reals sent per run.
    eighs : callable
        ``eighs(S) -> int``: D×D eigendecompositions per run (the work estimate).
    noiseless : bool
        The result depends only on the moments and weights (no random stream): computed
        once per data draw, not once per grid point and run.
    draws : callable
        ``draws(S, D) -> int``: samples per run beyond symmetric Gaussian matrices (the work
        estimate; secure aggregation's rounding and discrete noise).
    """

    run: Callable[[PcaInputs, np.random.Generator], NDArray[np.float64]]
    cost: Callable[[CostShape], PartyCost] = _silent
    eighs: Callable[[int], int] = _one
    noiseless: bool = False
    draws: Callable[[int, int], int] = _no_draws


@dataclass(frozen=True)
class OtdMethod:
    """How an algorithm runs in :func:`dpcore.otd_sweep`.

    Attributes
    ----------
    run : callable
        ``run(inputs: OtdInputs, rng)``. With ``decomposes`` it returns the
        :class:`~dpcore.otd.WhitenedTensor` the batched power method decomposes (``rng`` is
        the algorithm's noise stream); otherwise it returns a
        :class:`~dpcore.tensor.Recovery` directly (``rng`` is the algorithm's own stream).
    cost : callable
        ``cost(CostShape) -> PartyCost``: reals sent per run.
    decomposes : bool
        Whether the result goes through the tensor power method.
    draws : callable
        ``draws(S, D) -> int``: samples per run beyond Gaussian noise (the work estimate;
        secure aggregation's rounding and discrete noise).
    """

    run: Callable[[OtdInputs, np.random.Generator], WhitenedTensor | Recovery]
    cost: Callable[[CostShape], PartyCost] = _silent
    decomposes: bool = True
    draws: Callable[[int, int], int] = _no_draws


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: how it runs in each sweep it belongs to, and how the app shows it.

    Attributes
    ----------
    name : str
        The key in sweeps' ``algorithms`` and in the frames' ``algorithm`` column.
    label : str
        Display name.
    color : str
        ``#RRGGBB`` line colour (Okabe–Ito colour-blind-safe palette for the built-ins).
    description : str
        One line for the picker's help.
    pca, otd : PcaMethod or OtdMethod, optional
        How it runs in :func:`dpcore.pca_sweep` / :func:`dpcore.otd_sweep`; ``None`` where
        it does not belong to that sweep.
    dash : {"solid", "dash", "dot"}
        Line style.
    featured : bool
        Selected by default in the app's pickers.
    opt_in : bool
        Runs only when named: a sweep's default ``algorithms=None`` (:func:`defaults`)
        leaves it out, so adding it changes no default frame.
    """

    name: str
    label: str
    color: str
    description: str
    pca: PcaMethod | None = None
    otd: OtdMethod | None = None
    dash: str = "solid"
    featured: bool = True
    opt_in: bool = False

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"name must be a non-empty string; got {self.name!r}")
        if self.pca is None and self.otd is None:
            raise ValueError(f"algorithm {self.name!r} must belong to a sweep (pca or otd)")
        if (
            not isinstance(self.color, str)
            or len(self.color) != 7
            or self.color[0] != "#"
            or any(c not in "0123456789abcdefABCDEF" for c in self.color[1:])
        ):
            raise ValueError(f"color must be '#RRGGBB'; got {self.color!r}")
        if self.dash not in ("solid", "dash", "dot"):
            raise ValueError(f"dash must be one of ['solid', 'dash', 'dot']; got {self.dash!r}")

    def method(self, family: str) -> PcaMethod | OtdMethod:
        """The record's method for ``family`` ("pca" or "otd"); ValueError if it has none."""
        method = self.pca if family == "pca" else self.otd if family == "otd" else None
        if method is None:
            raise ValueError(
                f"algorithms must be one of {list(names(family))}; got {self.name!r}"
            )
        return method


# --- the built-in algorithms -------------------------------------------------------------------


def _nonprivate_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    return nonprivate_pca(x.moments, x.k, weights=x.weights)


def _cape_pca(
    x: PcaInputs, rng: np.random.Generator, *, design: str = "cape"
) -> NDArray[np.float64]:
    return cape_pca(
        x.moments,
        x.k,
        tau_site=x.tau,
        weights=x.weights,
        faithful=x.faithful,
        design=design,
        rng=rng,
    )


def _conv_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    return conv_pca(
        x.moments, x.k, tau_site=x.tau, weights=x.weights, faithful=x.faithful, rng=rng
    )


def _local_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    return local_pca(x.moments[0], x.k, tau=float(x.tau[0]), rng=rng)  # site 1


def _dpdis_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    return dpdis_pca(x.moments, x.k, tau_site=x.tau, weights=x.weights, rank=x.rank, rng=rng)


def _nonprivate_otd(x: OtdInputs, rng: np.random.Generator) -> WhitenedTensor:
    return nonprivate_otd(x.moments.m2, x.moments.m3, x.k, weights=x.weights)


def _cape_otd(x: OtdInputs, rng: np.random.Generator, *, design: str = "cape") -> WhitenedTensor:
    m = x.moments
    return cape_otd(
        m.m2,
        m.m3,
        x.k,
        tau2=x.noise.tau2,
        tau3=x.noise.tau3,
        weights=x.weights,
        faithful=x.faithful,
        design=design,
        rng=rng,
    )


def _conv_otd(x: OtdInputs, rng: np.random.Generator) -> WhitenedTensor:
    m = x.moments
    return conv_otd(
        m.m2, m.m3, x.k, tau2=x.noise.tau2, tau3=x.noise.tau3, weights=x.weights, rng=rng
    )


def _local_agn(x: OtdInputs, rng: np.random.Generator) -> WhitenedTensor:
    m, n = x.moments, x.noise
    return agn_otd(m.m2[0], m.m3[0], x.k, tau2=float(n.tau2[0]), tau3=float(n.tau3[0]), rng=rng)


def _local_avn(x: OtdInputs, rng: np.random.Generator) -> WhitenedTensor:
    m, n = x.moments, x.noise
    return avn_otd(
        m.m2[0], m.m3[0], x.k, tau2=float(n.tau2_avn[0]), beta=float(n.beta[0]), rng=rng
    )


def _random_otd(x: OtdInputs, rng: np.random.Generator) -> Recovery:
    return random_components(x.model, rng=rng)


def _site_privacy(privacy: SitePrivacy | None) -> SitePrivacy:
    if privacy is None:
        raise ValueError(
            "privacy must be given for secure aggregation (Δ_s, ε, δ of the grid point); the "
            "sweeps pass it, a direct call must build a SitePrivacy"
        )
    return privacy


def _secagg_estimate(
    values: NDArray[np.float64],
    privacy: SitePrivacy,
    weights: NDArray[np.float64],
    *,
    faithful: bool,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Σ μ_s values_s of symmetric matrices/tensors through one secure-aggregation round."""
    order = values.ndim - 1
    design = point_design(
        privacy.sensitivity,
        epsilon=privacy.epsilon,
        delta=privacy.delta,
        calibration=privacy.calibration,
        bits=privacy.bits,
        scale=privacy.scale,
        weights=weights,
        coordinates=symmetric_coordinates(values.shape[1], order),
    )
    return secagg_symmetric(values, design, faithful=faithful, rng=rng)


def _secagg_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    privacy = _site_privacy(x.privacy)
    est = _secagg_estimate(x.moments, privacy, x.weights, faithful=x.faithful, rng=rng)
    return top_k_eigvecs(est, x.k)


def _secagg_otd(x: OtdInputs, rng: np.random.Generator) -> WhitenedTensor:
    """M2 and M3 each through one round at (ε₁, δ₁) and (ε₂, δ₂); the server whitens."""
    p2, p3 = _site_privacy(x.noise.privacy2), _site_privacy(x.noise.privacy3)
    rng2, rng3 = rng.spawn(2)
    m = x.moments
    m2_hat = _secagg_estimate(m.m2, p2, x.weights, faithful=x.faithful, rng=rng2)
    m3_hat = _secagg_estimate(m.m3, p3, x.weights, faithful=x.faithful, rng=rng3)
    w, u, d = whitening(m2_hat, x.k)
    return WhitenedTensor(w, u, d, multilinear(m3_hat, w))


# Communication (Sec. 4 and 5): matrices and tensors counted in full, as in the paper.
def _pca_sites(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * c.dim**2)


def _pca_cape(c: CostShape) -> PartyCost:
    each = c.sites * c.dim**2  # 3SD² in all: E_s, F_s and Â_s
    return PartyCost(noise_generator=each, aggregator=each, sites=each)


def _pca_dpdis(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * c.dim * c.rank)  # P_s is D×R


def _otd_sites(c: CostShape) -> PartyCost:
    # M̂2 (D×D) and M̃3 (K×K×K) from each site; W (D×K) from the aggregator
    return PartyCost(
        aggregator=c.sites * c.dim * c.k, sites=c.sites * (c.dim**2 + c.k**3)
    )


def _otd_cape(c: CostShape) -> PartyCost:
    plain = _otd_sites(c)
    tensors = c.sites * (c.dim**2 + c.dim**3)  # E2, E3 / F2, F3
    return PartyCost(
        noise_generator=tensors, aggregator=plain.aggregator + tensors, sites=plain.sites
    )


def _otd_sites_full(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * (c.dim**2 + c.dim**3))  # M2 and M3 in full, no W round


def _no_eigh(_: int) -> int:
    return 0


def _secagg_pca_draws(sites: int, dim: int) -> int:
    return sites * symmetric_coordinates(dim, 2)  # one rounding and one share per integer


def _secagg_otd_draws(sites: int, dim: int) -> int:
    return sites * (symmetric_coordinates(dim, 2) + symmetric_coordinates(dim, 3))


def _dpdis_eighs(sites: int) -> int:
    return sites + 1


BUILTIN = (
    Algorithm(
        "nonprivate",
        "Non-private (pooled)",
        "#000000",
        "all data pooled at a trusted curator, no noise — the best possible",
        pca=PcaMethod(_nonprivate_pca, _pca_sites, eighs=_no_eigh, noiseless=True),
        otd=OtdMethod(_nonprivate_otd, _otd_sites),
        dash="dash",
    ),
    Algorithm(
        "cape",
        "CAPE",
        "#D55E00",
        "correlated noise: the aggregate carries only the pooled noise level",
        pca=PcaMethod(_cape_pca, _pca_cape),
        otd=OtdMethod(_cape_otd, _otd_cape),
    ),
    Algorithm(
        "conv",
        "Conventional",
        "#0072B2",
        "every site adds its own full noise; the aggregator averages",
        pca=PcaMethod(_conv_pca, _pca_sites),
        otd=OtdMethod(_conv_otd, _otd_sites),
    ),
    Algorithm(
        "local",
        "Local (one site)",
        "#009E73",
        "one site alone, with its own data and noise",
        pca=PcaMethod(_local_pca),
    ),
    Algorithm(
        "dpdis",
        "DPdisPCA",
        "#CC79A7",
        "sites send a noisy rank-R square root of their matrix (less communication)",
        pca=PcaMethod(_dpdis_pca, _pca_dpdis, eighs=_dpdis_eighs),
    ),
    Algorithm(
        "local_agn",
        "Local AGN (one site)",
        "#009E73",
        "one site alone, Gaussian noise on M2 and M3 (Algorithm 3)",
        otd=OtdMethod(_local_agn),
    ),
    Algorithm(
        "local_avn",
        "Local AVN (one site)",
        "#56B4E9",
        "one site alone, vector noise on M3 (pure ε for M3, Algorithm 4)",
        otd=OtdMethod(_local_avn),
        featured=False,
    ),
    Algorithm(
        "random",
        "Random vectors",
        "#999999",
        "random vectors: what knowing nothing gives",
        otd=OtdMethod(_random_otd, decomposes=False),
        dash="dot",
    ),
    # Appended last: the other algorithms keep their random streams.
    Algorithm(
        "cape_joint",
        "CAPE, joint-view-safe",
        "#E69F00",
        "CAPE whose aggregator's view of all releases together also meets every site's "
        "(ε, δ): larger zero-sum E's, 5% more aggregate noise std (docs/privacy.md)",
        pca=PcaMethod(partial(_cape_pca, design="joint"), _pca_cape),
        otd=OtdMethod(partial(_cape_otd, design="joint"), _otd_cape),
        dash="dash",
        featured=False,
    ),
    Algorithm(
        "secagg",
        "Secure aggregation (discrete noise)",
        "#7F3C8D",
        "no trusted party: sites quantise, add discrete Gaussian shares and hide their "
        "messages under pairwise masks; the server learns only the sum (docs/trust-models.md)",
        pca=PcaMethod(_secagg_pca, _pca_sites, draws=_secagg_pca_draws),
        otd=OtdMethod(_secagg_otd, _otd_sites_full, draws=_secagg_otd_draws),
        dash="dot",
        featured=False,
        opt_in=True,
    ),
)

_REGISTRY: dict[str, Algorithm] = {a.name: a for a in BUILTIN}


# --- lookup and registration -------------------------------------------------------------------


def _check_family(family: str | None) -> str | None:
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    return family


def names(family: str | None = None) -> tuple[str, ...]:
    """Registered algorithm names in registration order, optionally of one family.

    Examples
    --------
    >>> names("pca")
    ('nonprivate', 'cape', 'conv', 'local', 'dpdis', 'cape_joint', 'secagg')
    """
    family = _check_family(family)
    return tuple(
        a.name
        for a in _REGISTRY.values()
        if family is None or (a.pca if family == "pca" else a.otd) is not None
    )


def featured(family: str) -> tuple[str, ...]:
    """The family's algorithms the app selects by default."""
    return tuple(n for n in names(family) if _REGISTRY[n].featured)


def defaults(family: str) -> tuple[str, ...]:
    """What a sweep runs when ``algorithms`` is None: every algorithm but the opt-in ones.

    Examples
    --------
    >>> "secagg" in names("pca"), "secagg" in defaults("pca")
    (True, False)
    """
    return tuple(n for n in names(family) if not _REGISTRY[n].opt_in)


def get(name: object, family: str | None = None, *, param: str = "algorithm") -> Algorithm:
    """The record of ``name``; ValueError naming the choices if it is unknown.

    Parameters
    ----------
    name : str
        An algorithm name.
    family : {"pca", "otd"}, optional
        Also require that the algorithm belongs to this sweep.
    param : str
        Parameter name for the error message.

    Raises
    ------
    ValueError
        If ``name`` is not registered (in ``family``).

    Examples
    --------
    >>> get("cape").label
    'CAPE'
    >>> get("dpdis", "otd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: algorithm must be one of ['nonprivate', 'cape', ...]; got 'dpdis'
    """
    allowed = names(family)
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"{param} must be one of {list(allowed)}; got {name!r}")
    return _REGISTRY[name]


def pca_method(name: object, *, param: str = "algorithm") -> PcaMethod:
    """How a registered PCA algorithm runs; ValueError if ``name`` is not one."""
    method = get(name, "pca", param=param).pca
    assert method is not None  # get(…, "pca") admits only algorithms with a PCA method
    return method


def otd_method(name: object, *, param: str = "algorithm") -> OtdMethod:
    """How a registered tensor algorithm runs; ValueError if ``name`` is not one."""
    method = get(name, "otd", param=param).otd
    assert method is not None  # get(…, "otd") admits only algorithms with a tensor method
    return method


def register(algorithm: Algorithm) -> Algorithm:
    """Add an algorithm (appended: the existing ones keep their random streams).

    Raises
    ------
    ValueError
        If the name is taken.
    """
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be an Algorithm; got {type(algorithm).__name__}")
    if algorithm.name in _REGISTRY:
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered")
    _REGISTRY[algorithm.name] = algorithm
    return algorithm


def unregister(name: str) -> None:
    """Remove a runtime-registered algorithm (the built-ins cannot be removed)."""
    get(name)
    if name in {a.name for a in BUILTIN}:
        raise ValueError(f"{name!r} is built in and cannot be unregistered")
    del _REGISTRY[name]


def streams(order: tuple[str, ...], rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """One child stream of ``rng`` per name in ``order`` (a family's :func:`names`).

    Choosing a subset of algorithms changes no algorithm's numbers, and appending a new
    one leaves the existing streams as they were (spawned children are indexed). The
    order is taken once, in the calling process, and passed to tasks that may run in
    another one.
    """
    return dict(zip(order, rng.spawn(len(order)), strict=True))
