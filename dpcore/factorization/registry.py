"""The algorithm registry: one frozen record per algorithm, read by everything that lists them.

The sweeps run an algorithm through its record, :func:`dpcore.communication_cost` and the
resource guard read its cost and work, and the app takes its label, colour, description and
role from it. Adding a baseline is one :class:`Algorithm` record (here, or :func:`register` at
runtime), its function (in :mod:`dpcore.factorization.pca` or :mod:`dpcore.factorization.otd`) and
its tests. The sweep-spec parameters only some algorithms read are declared once here
(:data:`SPEC_PARAMETERS`) and named by the records that read them (``parameters``). Records
are strict: keyword-only, with the cost and the work stated (no silent zero), not featured
in the app's pickers unless chosen, and a colour no other algorithm of the same sweep uses.
An unknown name is a ``ValueError`` at lookup (:func:`get`), never a silent fall-through.

Roles: the pages compare the private algorithms against two references, found by role
(:func:`reference`), never by name: the ``"upper"`` reference is the best achievable
without privacy (``nonprivate``), the ``"lower"`` one what knowing nothing gives
(``random``, tensors only).

Random streams: every (grid point, run) gives each algorithm a stream that is a function of
the run's stream and the algorithm's name alone (:func:`stream`), never of its position in
the registry. Registering, removing or reordering algorithms, or choosing a subset of them,
changes no other algorithm's numbers (issue #51).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import MAX_MAGNITUDE, check_int, check_real
from dpcore.factorization.central import (
    central_gaussian_pca,
    l1_per_l2,
    laplace_covariance_pca,
    pooled_sensitivity,
)
from dpcore.factorization.dppca import block_sigmas, dp_pca
from dpcore.factorization.fedpca import (
    DEFAULT_LOCAL_ITERATIONS,
    federated_pca,
    fedpower_pca,
    synchronisations,
)
from dpcore.factorization.iterative import (
    DEFAULT_ROUNDS,
    cape_npm_pca,
    check_rounds,
    distributed_npm_pca,
    npm_pca,
)
from dpcore.factorization.metrics import top_k_eigvecs
from dpcore.factorization.models import MixtureModel
from dpcore.factorization.moments import SiteMoments
from dpcore.factorization.otd import (
    PowerOptions,
    WhitenedTensor,
    agn_otd,
    avn_otd,
    cape_otd,
    conv_otd,
    nonprivate_otd,
    random_components,
)
from dpcore.factorization.pca import cape_pca, conv_pca, dpdis_pca, local_pca, nonprivate_pca
from dpcore.factorization.tensor import Recovery, multilinear, whitening
from dpcore.mechanisms.calibration import Calibration
from dpcore.protocol.secagg import (
    DEFAULT_BITS,
    point_design,
    secagg_symmetric,
    symmetric_coordinates,
)

FAMILIES = ("pca", "otd")
ROLES = ("private", "upper", "lower")  # a private algorithm, or a reference bound (see above)


# --- what an algorithm sees in one run -------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class PcaInputs:
    """Everything a distributed PCA algorithm gets in one (grid point, run); keyword-only.

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
    calibration : Calibration
        The sweep's Gaussian calibration (a kind's name is taken for it; its relation is
        ``neighbouring``'s).
    bits : int
        Secure aggregation's bit width b.
    scale : float or None
        Its scale γ (``None``: automatic, :func:`dpcore.protocol.secagg.auto_scale`).
    neighbouring : {"add-remove", "replace"}
        The relation Δ_s was computed for (the central Laplace entry's L1 bound reads it).
    """

    sensitivity: NDArray[np.float64]
    epsilon: float
    delta: float
    calibration: Calibration | str
    bits: int
    scale: float | None
    neighbouring: str = "add-remove"

    def __post_init__(self) -> None:
        cal = Calibration.of(self.calibration, neighbouring=self.neighbouring)
        object.__setattr__(self, "calibration", cal)


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


@dataclass(frozen=True, eq=False, kw_only=True)
class OtdInputs:
    """Everything a distributed tensor algorithm gets in one (grid point, run); keyword-only.

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
    """Nothing sent: for an algorithm that runs where the data are (one site alone)."""
    return PartyCost()


def _one(_: int) -> int:
    return 1


def _no_draws(sites: int, dim: int) -> int:
    return 0


def _no_steps(sites: int, faithful: bool) -> tuple[int, int]:
    return (0, 0)


def _check_callables(record: object, fields: tuple[str, ...]) -> None:
    for name in fields:
        if not callable(getattr(record, name)):
            raise TypeError(f"{name} must be callable; got {getattr(record, name)!r}")


# --- the sweep-spec parameters an algorithm reads ------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SpecParameter:
    """A keyword of the sweep specs that only some algorithms read, declared once.

    The specs (:meth:`dpcore.PcaSpec.build`, :meth:`dpcore.OtdSpec.build`) take it, resolve
    it with :meth:`resolve` and check it again with :attr:`check` when a spec is made; the
    algorithms that read it name it in their method's ``parameters``
    (:attr:`PcaMethod.parameters`, :attr:`OtdMethod.parameters`; the tensor power method's are
    read by every decomposing method, :data:`POWER_PARAMETERS`).

    Attributes
    ----------
    name : str
        The keyword, as the specs' ``build`` takes it (and a frame's column if it is swept).
    families : tuple of str
        The sweeps whose spec takes it (``"pca"``, ``"otd"``).
    default : object
        ``build``'s default (``None`` with ``derive``: derived from the spec).
    check : callable
        ``check(value, context) -> value``: the value validated (a ValueError or TypeError
        naming ``name``, the allowed range and the value); ``context`` holds the spec's
        resolved ``dim`` and ``k`` (empty for a grid axis, whose check needs neither).
    derive : callable, optional
        ``derive(context) -> value``: the value when the keyword is ``None`` (rank: min(2K, D)).
    description : str
        What it sets, in one line.
    """

    name: str
    families: tuple[str, ...]
    default: object
    check: Callable[[Any, Mapping[str, Any]], Any]
    derive: Callable[[Mapping[str, Any]], Any] | None = None
    description: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a keyword name; got {self.name!r}")
        if not self.families or any(f not in FAMILIES for f in self.families):
            raise ValueError(f"families must name some of {list(FAMILIES)}; got {self.families!r}")
        _check_callables(self, ("check",))
        if self.derive is not None and not callable(self.derive):
            raise TypeError(f"derive must be callable or None; got {self.derive!r}")

    def resolve(self, value: object, context: Mapping[str, Any]) -> Any:
        """The spec's value of the keyword given as ``value`` (``None``: derived, if it is)."""
        if value is None and self.derive is not None:
            return self.derive(context)
        return self.check(value, context)


def _check_scale(value: object, context: Mapping[str, Any]) -> float | None:
    if value is None:
        return None  # automatic: rounding costs at most 1% of the sensitivity
    return check_real(value, "secagg_scale", low=0.0, high=MAX_MAGNITUDE, low_open=True)


_POWER = PowerOptions()  # the power method's defaults: the robust method with restarts
SPEC_PARAMETERS: dict[str, SpecParameter] = {
    p.name: p
    for p in (
        SpecParameter(
            name="rank",
            families=("pca",),
            default=None,
            check=lambda v, c: check_int(v, "rank", low=c["k"], high=c["dim"]),
            derive=lambda c: min(2 * c["k"], c["dim"]),
            description="DPdisPCA's R, each site's factor's rank, K ≤ R ≤ D (None: min(2K, D))",
        ),
        SpecParameter(
            name="secagg_bits",
            families=FAMILIES,
            default=DEFAULT_BITS,
            check=lambda v, c: check_int(v, "secagg_bits", low=2, high=64),
            description="secure aggregation's bit width b in [2, 64]",
        ),
        SpecParameter(
            name="secagg_scale",
            families=FAMILIES,
            default=None,
            check=_check_scale,
            description="secure aggregation's scale γ > 0 (None: automatic)",
        ),
        SpecParameter(
            name="restarts",
            families=("otd",),
            default=_POWER.restarts,
            check=lambda v, c: check_int(v, "restarts", low=1),
            description="the tensor power method's random starts per component",
        ),
        SpecParameter(
            name="max_iter",
            families=("otd",),
            default=_POWER.max_iter,
            check=lambda v, c: check_int(v, "max_iter", low=1),
            description="the tensor power method's iterations per start, at most",
        ),
        SpecParameter(
            name="tol",
            families=("otd",),
            default=_POWER.tol,
            check=lambda v, c: check_real(v, "tol", low=0.0, low_open=True),
            description="the tensor power method's convergence tolerance",
        ),
    )
}
# The tensor power method's settings (dpcore.factorization.otd.PowerOptions): read by every
# decomposing tensor method, whose whitened tensor the sweep decomposes with them.
POWER_PARAMETERS = ("restarts", "max_iter", "tol")
SECAGG_PARAMETERS = ("secagg_bits", "secagg_scale")  # the grid's secure-aggregation axes


def spec_parameters(family: str) -> tuple[str, ...]:
    """The names of the spec parameters of one sweep, in :data:`SPEC_PARAMETERS` order.

    Examples
    --------
    >>> spec_parameters("pca")
    ('rank', 'secagg_bits', 'secagg_scale')
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    return tuple(n for n, p in SPEC_PARAMETERS.items() if family in p.families)


def _check_parameters(method: PcaMethod | OtdMethod, family: str) -> None:
    known = spec_parameters(family)
    params = method.parameters
    if not isinstance(params, tuple) or any(p not in known for p in params):
        raise ValueError(f"parameters must be a tuple of names from {list(known)}; got {params!r}")


# --- how an algorithm runs in each family ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
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
    rounds : int
        Gaussian releases per run, each charged against the one total (ε, δ) (1 for the
        one-shot algorithms; T for the iterative ones, :mod:`dpcore.factorization.iterative`).
    with_rounds : callable, optional
        ``with_rounds(T) -> PcaMethod``: the same algorithm with T rounds (iterative
        algorithms only; the rounds axis, :func:`dpcore.experiments.sweeps.rounds.rounds_sweep`).
    steps : callable
        ``steps(S, faithful) -> (steps, products)`` per run, the work of an iterative
        algorithm (the work estimate; ``faithful`` as in :class:`PcaInputs`). ``steps``
        counts the calls of the round steps of :mod:`dpcore.factorization.iterative` ("one
        step each": ``orthonormalise``, ``central_round``, one per site in ``site_round`` and
        ``cape_round``) and FedPower's ``procrustes_rotation``, each charged a fixed
        overhead; ``products`` counts the D×D by D×K products A X, 2D²K flops each. (0, 0)
        for the one-shot algorithms.
    min_sites : int
        The fewest sites S it runs with: 2 for the protocols (S×S noise designs), 1 for the
        curator's (``central_*``, ``nonprivate``) and one site's (``local``).
    parameters : tuple of str
        The spec parameters its run reads beyond those of every algorithm (names from
        :func:`spec_parameters` ``("pca")``: DPdisPCA's ``rank``, secure aggregation's
        ``secagg_bits`` and ``secagg_scale``); a new one is declared in
        :data:`SPEC_PARAMETERS`.
    """

    run: Callable[[PcaInputs, np.random.Generator], NDArray[np.float64]]
    cost: Callable[[CostShape], PartyCost]
    eighs: Callable[[int], int]
    noiseless: bool = False
    draws: Callable[[int, int], int] = _no_draws
    rounds: int = 1
    with_rounds: Callable[[int], PcaMethod] | None = None
    steps: Callable[[int, bool], tuple[int, int]] = _no_steps
    min_sites: int = 2
    parameters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_callables(self, ("run", "cost", "eighs", "draws", "steps"))
        _check_parameters(self, "pca")
        if self.min_sites not in (1, 2):
            raise ValueError(f"min_sites must be 1 or 2; got {self.min_sites!r}")
        check_rounds(self.rounds)
        if self.with_rounds is not None and not callable(self.with_rounds):
            raise TypeError(f"with_rounds must be callable or None; got {self.with_rounds!r}")
        if self.with_rounds is not None and self.steps is _no_steps:  # no silent zero work
            raise TypeError("an iterative PcaMethod (with_rounds) must state its steps")

    @property
    def reads(self) -> tuple[str, ...]:
        """The spec parameters its result depends on (:attr:`parameters`)."""
        return self.parameters


@dataclass(frozen=True, kw_only=True)
class OtdMethod:
    """How an algorithm runs in :func:`dpcore.otd_sweep`.

    Attributes
    ----------
    run : callable
        ``run(inputs: OtdInputs, rng)``. With ``decomposes`` it returns the
        :class:`~dpcore.factorization.otd.WhitenedTensor` the batched power method decomposes
        (``rng`` is
        the algorithm's noise stream); otherwise it returns a
        :class:`~dpcore.factorization.tensor.Recovery` directly (``rng`` is the algorithm's own
        stream).
    cost : callable
        ``cost(CostShape) -> PartyCost``: reals sent per run.
    decomposes : bool
        Whether the result goes through the tensor power method.
    draws : callable
        ``draws(S, D) -> int``: samples per run beyond Gaussian noise (the work estimate;
        secure aggregation's rounding and discrete noise).
    parameters : tuple of str
        The spec parameters its run reads beyond those of every algorithm (names from
        :func:`spec_parameters` ``("otd")``, as in :class:`PcaMethod`); the power method's
        (:data:`POWER_PARAMETERS`) go with ``decomposes`` (:attr:`reads`).
    """

    run: Callable[[OtdInputs, np.random.Generator], WhitenedTensor | Recovery]
    cost: Callable[[CostShape], PartyCost]
    decomposes: bool
    draws: Callable[[int, int], int] = _no_draws
    parameters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_callables(self, ("run", "cost", "draws"))
        if not isinstance(self.decomposes, bool):
            raise TypeError(f"decomposes must be True or False; got {self.decomposes!r}")
        _check_parameters(self, "otd")

    @property
    def reads(self) -> tuple[str, ...]:
        """The spec parameters its result depends on: the power method's if it decomposes."""
        own = tuple(p for p in self.parameters if p not in POWER_PARAMETERS)
        return (POWER_PARAMETERS if self.decomposes else ()) + own


@dataclass(frozen=True, kw_only=True)
class Algorithm:
    """One algorithm: how it runs in each sweep it belongs to, and how the app shows it.

    Keyword-only; ``name``, ``label``, ``color``, ``description`` and at least one method
    are required.

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
    role : {"private", "upper", "lower"}
        A private algorithm (default), or the upper (non-private) or lower (knows nothing)
        reference the pages compare against (:func:`reference`).
    dash : {"solid", "dash", "dot"}
        Line style.
    featured : bool
        Selected by default in the app's pickers (default False: a new baseline joins the
        pickers, not every default view).
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
    role: str = "private"
    dash: str = "solid"
    featured: bool = False
    opt_in: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string; got {self.name!r}")
        for text in ("label", "description"):
            if not isinstance(getattr(self, text), str) or not getattr(self, text):
                raise ValueError(f"{text} must be a non-empty string; got {getattr(self, text)!r}")
        if self.pca is not None and not isinstance(self.pca, PcaMethod):
            raise TypeError(f"pca must be a PcaMethod or None; got {self.pca!r}")
        if self.otd is not None and not isinstance(self.otd, OtdMethod):
            raise TypeError(f"otd must be an OtdMethod or None; got {self.otd!r}")
        for choice, allowed in (("role", ROLES), ("dash", ("solid", "dash", "dot"))):
            value = getattr(self, choice)
            if not isinstance(value, str) or value not in allowed:
                raise ValueError(f"{choice} must be one of {list(allowed)}; got {value!r}")
        for flag in ("featured", "opt_in"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be True or False; got {getattr(self, flag)!r}")
        if self.pca is None and self.otd is None:
            raise ValueError(f"algorithm {self.name!r} must belong to a sweep (pca or otd)")
        if (
            not isinstance(self.color, str)
            or len(self.color) != 7
            or self.color[0] != "#"
            or any(c not in "0123456789abcdefABCDEF" for c in self.color[1:])
        ):
            raise ValueError(f"color must be '#RRGGBB'; got {self.color!r}")

    def method(self, family: str) -> PcaMethod | OtdMethod:
        """The record's method for ``family`` ("pca" or "otd"); ValueError if it has none."""
        method = self.pca if family == "pca" else self.otd if family == "otd" else None
        if method is None:
            raise ValueError(f"algorithms must be one of {list(names(family))}; got {self.name!r}")
        return method

    def reads(self, family: str) -> tuple[str, ...]:
        """The spec parameters its result in ``family``'s sweep depends on.

        Examples
        --------
        >>> get("dpdis").reads("pca"), get("cape").reads("pca"), get("secagg").reads("otd")
        (('rank',), (), ('restarts', 'max_iter', 'tol', 'secagg_bits', 'secagg_scale'))
        """
        return self.method(family).reads


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
    return conv_pca(x.moments, x.k, tau_site=x.tau, weights=x.weights, faithful=x.faithful, rng=rng)


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
    return avn_otd(m.m2[0], m.m3[0], x.k, tau2=float(n.tau2_avn[0]), beta=float(n.beta[0]), rng=rng)


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
        calibration=Calibration.of(privacy.calibration).kind,  # "matched" to the sweep's
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
    return PartyCost(aggregator=c.sites * c.dim * c.k, sites=c.sites * (c.dim**2 + c.k**3))


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


# --- the iterative algorithms (dpcore.factorization.iterative): T releases against one (ε, δ) ---


def _npm(x: PcaInputs, rng: np.random.Generator, *, rounds: int) -> NDArray[np.float64]:
    return npm_pca(x.moments, x.k, tau_site=x.tau, weights=x.weights, rounds=rounds, rng=rng)


def _distributed_npm(x: PcaInputs, rng: np.random.Generator, *, rounds: int) -> NDArray[np.float64]:
    return distributed_npm_pca(
        x.moments,
        x.k,
        tau_site=x.tau,
        weights=x.weights,
        rounds=rounds,
        faithful=x.faithful,
        rng=rng,
    )


def _cape_npm(
    x: PcaInputs, rng: np.random.Generator, *, rounds: int, design: str = "cape"
) -> NDArray[np.float64]:
    return cape_npm_pca(
        x.moments,
        x.k,
        tau_site=x.tau,
        weights=x.weights,
        rounds=rounds,
        design=design,
        faithful=x.faithful,
        rng=rng,
    )


# Communication per run, T rounds of D×K matrices (the final X_T is not sent).
def _npm_cost(c: CostShape, *, rounds: int) -> PartyCost:
    # the sites hand A_s to the trusted curator once; it publishes the T releases Y_t
    return PartyCost(aggregator=rounds * c.dim * c.k, sites=c.sites * c.dim**2)


def _distributed_npm_cost(c: CostShape, *, rounds: int) -> PartyCost:
    each = rounds * c.sites * c.dim * c.k  # X_{t−1} to every site, Y_{s,t} back
    return PartyCost(aggregator=each, sites=each)


def _cape_npm_cost(c: CostShape, *, rounds: int) -> PartyCost:
    each = rounds * c.sites * c.dim * c.k  # E_s; F_s and X_{t−1}; Y_{s,t}
    return PartyCost(noise_generator=each, aggregator=2 * each, sites=each)


def _fedpower(
    x: PcaInputs, rng: np.random.Generator, *, rounds: int, local_iterations: int
) -> NDArray[np.float64]:
    return fedpower_pca(
        x.moments,
        x.k,
        tau_site=x.tau,
        weights=x.weights,
        rounds=rounds,
        local_iterations=min(local_iterations, rounds),  # T < p: one aggregation, at T
        rng=rng,
    )


def _fedpower_cost(c: CostShape, *, rounds: int, local_iterations: int) -> PartyCost:
    # at each synchronisation every site sends Y_t^(s); the server broadcast Z₀ and every
    # aggregate but the last (the output)
    each = len(synchronisations(rounds, min(local_iterations, rounds))) * c.sites * c.dim * c.k
    return PartyCost(aggregator=each, sites=each)


def _federated_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    return federated_pca(x.moments, x.k, tau_site=x.tau, weights=x.weights, rng=rng)


def _federated_pca_cost(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * (c.dim * c.k + c.k))  # U_s and Σ_s, once


def _federated_pca_eighs(sites: int) -> int:
    return sites  # one per site; the S − 1 merges are SVDs of D×2K (small)


# Work per run of T rounds (PcaMethod.steps): X₀ and every round's X_t are one orthonormalise
# each (T + 1); the round itself is one central_round on the pooled A, or one step per site
# (site_round, cape_round) when the protocol runs message by message.
def _pooled_steps(sites: int, faithful: bool, *, rounds: int) -> tuple[int, int]:
    return (2 * rounds + 1, rounds)


def _site_steps(sites: int, faithful: bool, *, rounds: int) -> tuple[int, int]:
    if not faithful:  # the aggregate noise drawn directly: the pooled power method
        return _pooled_steps(sites, faithful, rounds=rounds)
    return (rounds + 1 + rounds * sites, rounds * sites)


def _fedpower_steps(
    sites: int, faithful: bool, *, rounds: int, local_iterations: int
) -> tuple[int, int]:
    # always message by message: every site T central_round's; a synchronisation S
    # procrustes_rotation's and one orthonormalise, any other round S orthonormalise's; X₀
    syncs = len(synchronisations(rounds, min(local_iterations, rounds)))
    steps = 1 + rounds * sites + syncs * (sites + 1) + (rounds - syncs) * sites
    return (steps, rounds * sites)


def _iterative(
    run: Callable[..., NDArray[np.float64]],
    cost: Callable[..., PartyCost],
    steps: Callable[..., tuple[int, int]],
    rounds: int,
) -> PcaMethod:
    """The PcaMethod of an iterative algorithm with T = ``rounds``."""
    rounds = check_rounds(rounds)
    return PcaMethod(
        run=partial(run, rounds=rounds),
        cost=partial(cost, rounds=rounds),
        eighs=_no_eigh,
        steps=partial(steps, rounds=rounds),
        rounds=rounds,
        with_rounds=partial(_iterative, run, cost, steps),
    )


def _secagg_pca_draws(sites: int, dim: int) -> int:
    return sites * symmetric_coordinates(dim, 2)  # one rounding and one share per integer


def _secagg_otd_draws(sites: int, dim: int) -> int:
    return sites * (symmetric_coordinates(dim, 2) + symmetric_coordinates(dim, 3))


def _dpdis_eighs(sites: int) -> int:
    return sites + 1


def _central_gauss(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    p = _site_privacy(x.privacy)
    return central_gaussian_pca(
        x.moments,
        x.k,
        weights=x.weights,
        sensitivity=pooled_sensitivity(p.sensitivity, x.weights),
        epsilon=p.epsilon,
        delta=p.delta,
        rng=rng,
        calibration=p.calibration,  # the sweep's, as every other entry's (issue #51)
    )


def _central_laplace(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    p = _site_privacy(x.privacy)
    dim = x.moments.shape[1]
    l1 = pooled_sensitivity(p.sensitivity, x.weights) * l1_per_l2(dim, p.neighbouring)
    return laplace_covariance_pca(
        x.moments, x.k, weights=x.weights, l1_sensitivity=l1, epsilon=p.epsilon, rng=rng
    )


def _dp_pca(x: PcaInputs, rng: np.random.Generator) -> NDArray[np.float64]:
    p = _site_privacy(x.privacy)
    sigmas = block_sigmas(
        p.sensitivity, epsilon=p.epsilon, delta=p.delta, calibration=p.calibration
    )
    return dp_pca(x.moments, x.k, sigmas=sigmas, rng=rng)


def _dp_pca_cost(c: CostShape) -> PartyCost:
    return PartyCost(sites=c.sites * c.dim * c.k)  # each block's release A_b W + G_b, once


def _dp_pca_steps(sites: int, faithful: bool) -> tuple[int, int]:
    return (2 * sites + 1, sites)  # W₀, then per block a release and an orthonormalisation


BUILTIN = (
    Algorithm(
        name="nonprivate",
        label="Non-private (pooled)",
        color="#000000",
        description="all data pooled at a trusted curator, no noise — the best possible",
        pca=PcaMethod(
            run=_nonprivate_pca, cost=_pca_sites, eighs=_no_eigh, noiseless=True, min_sites=1
        ),
        otd=OtdMethod(run=_nonprivate_otd, cost=_otd_sites, decomposes=True),
        role="upper",
        dash="dash",
        featured=True,
    ),
    Algorithm(
        name="cape",
        label="CAPE",
        color="#D55E00",
        description="correlated noise: the aggregate carries only the pooled noise level",
        pca=PcaMethod(run=_cape_pca, cost=_pca_cape, eighs=_one),
        otd=OtdMethod(run=_cape_otd, cost=_otd_cape, decomposes=True),
        featured=True,
    ),
    Algorithm(
        name="conv",
        label="Conventional",
        color="#0072B2",
        description="every site adds its own full noise; the aggregator averages",
        pca=PcaMethod(run=_conv_pca, cost=_pca_sites, eighs=_one),
        otd=OtdMethod(run=_conv_otd, cost=_otd_sites, decomposes=True),
        featured=True,
    ),
    Algorithm(
        name="local",
        label="Local (one site)",
        color="#009E73",
        description="one site alone, with its own data and noise",
        pca=PcaMethod(run=_local_pca, cost=_silent, eighs=_one, min_sites=1),
        featured=True,
    ),
    Algorithm(
        name="dpdis",
        label="DPdisPCA",
        color="#CC79A7",
        description="sites send a noisy rank-R square root of their matrix (less communication)",
        pca=PcaMethod(run=_dpdis_pca, cost=_pca_dpdis, eighs=_dpdis_eighs, parameters=("rank",)),
        featured=True,
    ),
    Algorithm(
        name="local_agn",
        label="Local AGN (one site)",
        color="#009E73",
        description="one site alone, Gaussian noise on M2 and M3 (Algorithm 3)",
        otd=OtdMethod(run=_local_agn, cost=_silent, decomposes=True),
        featured=True,
    ),
    Algorithm(
        name="local_avn",
        label="Local AVN (one site)",
        color="#56B4E9",
        description="one site alone, vector noise on M3 (pure ε for M3, Algorithm 4)",
        otd=OtdMethod(run=_local_avn, cost=_silent, decomposes=True),
    ),
    Algorithm(
        name="random",
        label="Random vectors",
        color="#999999",
        description="random vectors: what knowing nothing gives",
        otd=OtdMethod(run=_random_otd, cost=_silent, decomposes=False),
        role="lower",
        dash="dot",
        featured=True,
    ),
    Algorithm(
        name="cape_joint",
        label="CAPE, joint-view-safe",
        color="#E69F00",
        description="CAPE whose aggregator's view of all releases together also meets every "
        "site's (ε, δ): larger zero-sum E's, 5% more aggregate noise std (docs/privacy.md)",
        pca=PcaMethod(run=partial(_cape_pca, design="joint"), cost=_pca_cape, eighs=_one),
        otd=OtdMethod(run=partial(_cape_otd, design="joint"), cost=_otd_cape, decomposes=True),
        dash="dash",
    ),
    Algorithm(
        name="secagg",
        label="Secure aggregation (discrete noise)",
        color="#7F3C8D",
        description="no trusted party: sites quantise, add discrete Gaussian shares and hide "
        "their messages under pairwise masks; the server learns only the sum "
        "(docs/trust-models.md)",
        pca=PcaMethod(
            run=_secagg_pca,
            cost=_pca_sites,
            eighs=_one,
            draws=_secagg_pca_draws,
            parameters=SECAGG_PARAMETERS,
        ),
        otd=OtdMethod(
            run=_secagg_otd,
            cost=_otd_sites_full,
            decomposes=True,
            draws=_secagg_otd_draws,
            parameters=SECAGG_PARAMETERS,
        ),
        dash="dot",
        opt_in=True,
    ),
    # The iterative baselines (issue #38, docs/baselines.md): opt-in, so no default frame moves.
    Algorithm(
        name="npm",
        label="Noisy power method (central)",
        color="#882255",
        description="a trusted curator runs T rounds of the private power method on the pooled "
        "data (Hardt & Price 2014), every round charged against the one (ε, δ)",
        pca=_iterative(_npm, _npm_cost, _pooled_steps, DEFAULT_ROUNDS),
        dash="dash",
        opt_in=True,
    ),
    Algorithm(
        name="npm_distributed",
        label="Distributed noisy power method",
        color="#44AA99",
        description="every site adds its own noise to A_s X in each of T rounds; the "
        "aggregator sums (Balcan et al. 2016)",
        pca=_iterative(_distributed_npm, _distributed_npm_cost, _site_steps, DEFAULT_ROUNDS),
        dash="dot",
        opt_in=True,
    ),
    Algorithm(
        name="npm_cape",
        label="CAPE in every round (power method)",
        color="#AA4499",
        description="the distributed power method with CAPE's zero-sum noise in each of T "
        "rounds: every round's aggregate carries only the pooled noise",
        pca=_iterative(_cape_npm, _cape_npm_cost, _site_steps, DEFAULT_ROUNDS),
        opt_in=True,
    ),
    Algorithm(
        name="npm_cape_joint",
        label="CAPE in every round, joint-view-safe",
        color="#117733",
        description="as CAPE in every round, with the design whose aggregator's joint view of "
        "every round also meets each site's budget (docs/privacy.md)",
        pca=_iterative(
            partial(_cape_npm, design="joint"), _cape_npm_cost, _site_steps, DEFAULT_ROUNDS
        ),
        dash="dash",
        opt_in=True,
    ),
    Algorithm(
        name="fedpower",
        label="FedPower (local power iterations)",
        color="#332288",
        description="every site runs T noisy power iterations on its own data; every "
        f"p = {DEFAULT_LOCAL_ITERATIONS} rounds the server aligns the sites' iterates "
        "(orthogonal Procrustes) and averages them (Guo et al. 2024)",
        pca=_iterative(
            partial(_fedpower, local_iterations=DEFAULT_LOCAL_ITERATIONS),
            partial(_fedpower_cost, local_iterations=DEFAULT_LOCAL_ITERATIONS),
            partial(_fedpower_steps, local_iterations=DEFAULT_LOCAL_ITERATIONS),
            DEFAULT_ROUNDS,
        ),
        dash="dot",
        opt_in=True,
    ),
    Algorithm(
        name="fedpca",
        label="Federated PCA (subspace merge)",
        color="#CC6677",
        description="every site releases a noisy A_s once and keeps its rank-K subspace; the "
        "server merges the subspaces pairwise up a tree (Grammenos et al. 2020)",
        pca=PcaMethod(run=_federated_pca, cost=_federated_pca_cost, eighs=_federated_pca_eighs),
        dash="dash",
        opt_in=True,
    ),
    # Central peers (issue #39, docs/peers.md): a trusted curator, S = 1 allowed; opt-in.
    Algorithm(
        name="central_gauss",
        label="Central analytic Gaussian (trusted curator)",
        color="#999933",
        description="a trusted curator adds analytic-Gaussian noise to the pooled second "
        "moment once (Dwork et al. 2014; Balle & Wang 2018): (ε, δ), one site allowed",
        pca=PcaMethod(run=_central_gauss, cost=_pca_sites, eighs=_one, min_sites=1),
        dash="dash",
        opt_in=True,
    ),
    Algorithm(
        name="central_laplace",
        label="Central Laplace covariance (pure ε)",
        color="#DDCC77",
        description="a trusted curator adds Laplace noise to the pooled second moment's upper "
        "triangle: pure ε, δ = 0 (the Laplace mechanism; a baseline of Jiang et al. 2016)",
        pca=PcaMethod(run=_central_laplace, cost=_pca_sites, eighs=_one, min_sites=1),
        dash="dot",
        opt_in=True,
    ),
    # Issue #52: DP-PCA (Liu et al. 2022), one pass over the blocks.
    Algorithm(
        name="dp_pca",
        label="DP-PCA (Liu et al. 2022)",
        color="#6699CC",
        description="one private pass of Oja steps, each data block a minibatch released "
        "once with Gaussian noise (Liu, Kong, Jain & Oh 2022): (ε, δ), parallel composition",
        pca=PcaMethod(
            run=_dp_pca, cost=_dp_pca_cost, eighs=_no_eigh, steps=_dp_pca_steps, min_sites=1
        ),
        dash="dash",
        opt_in=True,
    ),
)

_REGISTRY: dict[str, Algorithm] = {}


# --- lookup and registration -------------------------------------------------------------------


def _check_family(family: str | None) -> str | None:
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    return family


def names(family: str | None = None) -> tuple[str, ...]:
    """Registered algorithm names in registration order, optionally of one family.

    Examples
    --------
    >>> names("pca")  # doctest: +NORMALIZE_WHITESPACE
    ('nonprivate', 'cape', 'conv', 'local', 'dpdis', 'cape_joint', 'secagg', 'npm',
     'npm_distributed', 'npm_cape', 'npm_cape_joint', 'fedpower', 'fedpca', 'central_gauss',
     'central_laplace', 'dp_pca')
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
    """Add an algorithm (its random stream is keyed by its name: :func:`stream`).

    Raises
    ------
    ValueError
        If the name is taken, or its :func:`name_word` is another algorithm's (the two
        would share a random stream).
    """
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"algorithm must be an Algorithm; got {type(algorithm).__name__}")
    if algorithm.name in _REGISTRY:
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered")
    for other in _REGISTRY.values():
        if name_word(other.name) == name_word(algorithm.name):
            raise ValueError(
                f"name must not share its stream word with {other.name!r}; got "
                f"{algorithm.name!r} (rename it: streams are keyed by name)"
            )
        shared = [f for f in FAMILIES if _belongs(algorithm, f) and _belongs(other, f)]
        if shared and other.color.lower() == algorithm.color.lower():
            raise ValueError(
                f"color must differ from every {shared[0]} algorithm's; got {algorithm.color!r}, "
                f"the colour of {other.name!r}"
            )
        if algorithm.role != "private" and algorithm.role == other.role and shared:
            raise ValueError(
                f"role {algorithm.role!r} is taken in {shared[0]} by {other.name!r}; got "
                f"{algorithm.name!r} (a family has one reference of each kind)"
            )
    _REGISTRY[algorithm.name] = algorithm
    return algorithm


def _belongs(algorithm: Algorithm, family: str) -> bool:
    return (algorithm.pca if family == "pca" else algorithm.otd) is not None


def reference(family: str, role: str) -> str | None:
    """The name of the family's reference algorithm of ``role``, or None if it has none.

    Parameters
    ----------
    family : {"pca", "otd"}
    role : {"upper", "lower"}
        ``"upper"``: the best achievable without privacy; ``"lower"``: what knowing
        nothing gives.

    Examples
    --------
    >>> reference("pca", "upper"), reference("otd", "lower"), reference("pca", "lower")
    ('nonprivate', 'random', None)
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    if role not in ROLES[1:]:
        raise ValueError(f"role must be one of {list(ROLES[1:])}; got {role!r}")
    found = [n for n in names(family) if _REGISTRY[n].role == role]
    return found[0] if found else None


def references(family: str) -> tuple[str, ...]:
    """The family's reference algorithms (every role but "private"), in registration order."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    return tuple(n for n in names(family) if _REGISTRY[n].role != "private")


def unregister(name: str) -> None:
    """Remove a runtime-registered algorithm (the built-ins cannot be removed)."""
    get(name)
    if name in {a.name for a in BUILTIN}:
        raise ValueError(f"{name!r} is built in and cannot be unregistered")
    del _REGISTRY[name]


# The spawn-key word that marks a stream keyed by name. Generator.spawn numbers a parent's
# children 0, 1, 2, … (one word each, after the parent's key), so a spawned child, or any of
# its descendants, has this word in that place only after 2**32 − 2 children: a named stream
# (parent key, NAME_KEY, word of the name) can never equal a spawned one, and two names differ
# in the last word (checked at registration). dpcore.protocol.pairwise's PAIR_KEY is 2**32 − 1.
NAME_KEY = 2**32 - 2


def name_word(name: str) -> int:
    """A stable 32-bit word of a name: the first 4 bytes of its UTF-8 SHA-256, big-endian.

    Stable across processes and Python versions (unlike ``hash``, which is salted).

    Examples
    --------
    >>> name_word("cape")
    248707621
    """
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big")


def stream(name: str, rng: np.random.Generator) -> np.random.Generator:
    """The random stream of the algorithm ``name`` in a run whose stream is ``rng``.

    A child of ``rng``'s seed sequence with its entropy and its spawn key followed by
    (:data:`NAME_KEY`, :func:`name_word` of the name): a function of ``rng``'s seed and the
    name alone. ``rng`` is neither advanced nor spawned from, so the same name gets the same
    stream however many algorithms run, in whatever order they were registered.

    Raises
    ------
    TypeError
        If ``rng``'s bit generator has no :class:`numpy.random.SeedSequence` (a generator
        made from a bare state cannot name its children).

    Examples
    --------
    >>> run = np.random.default_rng(7).spawn(1)[0]
    >>> bool(stream("cape", run).random() == stream("cape", run).random())
    True
    >>> bool(stream("cape", run).random() == stream("conv", run).random())
    False
    """
    seq = rng.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):
        raise TypeError(f"rng must be seeded by a SeedSequence; got {type(seq).__name__}")
    child = np.random.SeedSequence(
        seq.entropy,
        spawn_key=(*seq.spawn_key, NAME_KEY, name_word(name)),
        pool_size=seq.pool_size,
    )
    return np.random.Generator(type(rng.bit_generator)(child))


def streams(names: Iterable[str], rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """:func:`stream` of each name: one stream per algorithm of a run, keyed by its name.

    Choosing a subset of algorithms, registering a new one (first, last or anywhere) or
    removing one changes no algorithm's stream.

    Raises
    ------
    ValueError
        If two of the names share a :func:`name_word` (they would share a stream).
    """
    out = {name: stream(name, rng) for name in names}
    words = {name_word(name): name for name in out}
    if len(words) < len(out):
        raise ValueError(f"names must differ in their stream words; got {list(out)}")
    return out


for _builtin in BUILTIN:  # through register: the built-ins pass the same checks
    register(_builtin)
