"""CAPE between separate parties: what each party computes, free of any transport (#37).

The Flower app (:mod:`federated.flower_app`) only moves the bytes these functions produce.
Every noise draw goes through :mod:`dpcore`'s protocol steps with the stream
:func:`dpcore.protocol.cape.party_rng` gives for (seed, party, site), so a distributed run with the
same seed and data releases exactly what :func:`simulate` (``dpcore.cape_average`` in one
process) releases (Imtiaz & Sarwate, Algorithm 1 steps 1–8; Alg. 5).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from dpcore import (
    DEFAULT_CALIBRATION,
    CapeDesign,
    PrivacyLedger,
    aggregate_step,
    cape_average,
    design_for,
    dropout_analysis,
    dropout_correction,
    gaussian_sigmas,
    mean_sensitivity,
    pairwise_average,
    privacy_statement,
    site_releases,
    top_k_eigh,
    view_noise_multipliers,
)
from federated.identity import Manifest

PROTOCOL_VERSION = "cape-flower/1"
# "helper": the noise generator draws every E_s (Alg. 5); "pairwise": no helper, the sites
# agree antisymmetric pairwise noise with the same covariance (dpcore.protocol.pairwise)
SCHEMES = ("helper", "pairwise")
DESIGNS = ("joint", "cape")  # the joint-view-safe design / the paper's (dpcore.protocol.joint_safe)
KINDS = ("mean", "pca")  # CAPE mean of the rows / capePCA of the second moment (Alg. 1)
CALIBRATION = DEFAULT_CALIBRATION.kind  # analytic (Balle & Wang): valid at every ε
NORM_SLACK = 1e-12  # rows may exceed norm 1 by rounding only


class Refusal(RuntimeError):
    """The aggregator refuses to release; ``party`` names who caused it."""

    def __init__(self, party: str, reason: str) -> None:
        super().__init__(f"{party}: {reason}")
        self.party = party
        self.reason = reason

    @classmethod
    def of(cls, problems: Sequence[tuple[str, str]]) -> Refusal:
        """One refusal naming every party with a problem (a single one as is), sites in
        their order (the replies arrive in the order of Flower's random node ids)."""
        problems = sorted(problems, key=_party_order)
        if len(problems) == 1:
            return cls(*problems[0])
        parties = ", ".join(p for p, _ in problems)
        return cls(parties, "; ".join(f"{p}: {r}" for p, r in problems))


def _party_order(problem: tuple[str, str]) -> tuple[int, str]:
    party = problem[0]
    number = party.removeprefix("site ")
    return (int(number), "") if number.isdigit() else (-1, party)


# --- a site's data -----------------------------------------------------------------------------


class DataRuleError(ValueError):
    """A site's data break a rule. ``rule`` says which, in words that may cross the wire; the
    message adds the file, the row and the value, which stay in the site's own log."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(detail)
        self.rule = rule


def read_site_csv(path: str | Path) -> NDArray[np.float64]:
    """A site's samples, one per row of a header-less numeric CSV, each of norm ≤ 1.

    Raises
    ------
    DataRuleError
        Naming the file and the first row that is not finite or has ‖x‖₂ > 1 (the
        sensitivity 1/N_s of Sec. 4 assumes ‖x‖₂ ≤ 1: such a row would be under-noised),
        with the rule it breaks as ``rule``.
    """
    try:
        x = np.loadtxt(path, delimiter=",", ndmin=2, dtype=np.float64)
    except OSError as err:
        raise DataRuleError("the site's data file must be readable", f"{path}: {err}") from None
    except ValueError as err:
        raise DataRuleError("every entry must be a number", f"{path}: {err}") from None
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise DataRuleError(
            "the data need at least one row and one column",
            f"{path}: needs at least one row and one column; got shape {x.shape}",
        )
    bad = ~np.all(np.isfinite(x), axis=1)
    if bad.any():
        raise DataRuleError(
            "every entry must be finite", f"{path}: row {int(np.argmax(bad)) + 1} is not finite"
        )
    norms = np.linalg.norm(x, axis=1)
    if np.any(norms > 1.0 + NORM_SLACK):
        row = int(np.argmax(norms > 1.0 + NORM_SLACK))
        raise DataRuleError(
            "every row must have ‖x‖₂ ≤ 1 (scale the data first)",
            f"{path}: row {row + 1} has norm {norms[row]:.6g} > 1; every sample must have "
            "‖x‖₂ ≤ 1 (scale the data first), or its noise would be too small",
        )
    return x


def site_statistic(x: NDArray[np.float64], kind: str) -> NDArray[np.float64]:
    """a_s: the mean of the rows (shape (D,)) or A_s = X_sᵀX_s/N_s (shape (D, D), symmetric)."""
    if kind == "mean":
        return x.mean(axis=0)
    a = x.T @ x / x.shape[0]
    return (a + a.T) / 2.0  # exactly symmetric, as the symmetric noise keeps it


def site_tau(n_samples: Sequence[int], epsilon: Sequence[float], delta: Sequence[float]):
    """τ_s: the Gaussian mechanism at (ε_s, δ_s) with Δ_s = 1/N_s.

    Rows with ‖x‖₂ ≤ 1 and add/remove neighbours with N_s public: the mean moves by
    ‖x‖/N_s ≤ 1/N_s and A_s by ‖xxᵀ‖_F/N_s ≤ 1/N_s (Sec. 4), so both kinds share Δ_s.
    """
    sens = mean_sensitivity(np.asarray(n_samples))
    return gaussian_sigmas(sens, epsilon=epsilon, delta=delta, calibration=CALIBRATION)


def shape_of(kind: str, dim: int) -> tuple[int, ...]:
    """The shape of one site's value."""
    return (dim,) if kind == "mean" else (dim, dim)


def make_design(kind: str, design: str, tau, n_samples) -> CapeDesign:
    """The run's design with weights μ_s = N_s/N (the pooled estimate)."""
    n = np.asarray(n_samples, dtype=float)
    return design_for(design, tau, weights=n / n.sum())


# --- bytes on the wire ---------------------------------------------------------------------------


def to_bytes(arr: NDArray[np.float64]) -> bytes:
    """Little-endian float64 bytes of an array (its shape travels separately)."""
    return np.ascontiguousarray(arr, dtype="<f8").tobytes()


def from_bytes(data: bytes, shape: Sequence[int]) -> NDArray[np.float64]:
    """The inverse of :func:`to_bytes`; ValueError if the length does not fit ``shape``."""
    shape = tuple(int(s) for s in shape)
    if len(data) != 8 * math.prod(shape):
        raise ValueError(f"{len(data)} bytes do not hold a float64 array of shape {shape}")
    return np.frombuffer(data, dtype="<f8").reshape(shape).astype(np.float64)


def check_release(
    party: str, released: NDArray[np.float64], shape: tuple[int, ...], symmetric: bool
) -> None:
    """Refuse a site's Â_s unless it has the agreed shape, is finite and (PCA) symmetric."""
    if released.shape != shape:
        raise Refusal(party, f"sent a value of shape {released.shape}; the run agreed {shape}")
    if not np.all(np.isfinite(released)):
        raise Refusal(party, "sent a value with NaN or inf entries")
    if symmetric and not np.array_equal(released, released.T):
        raise Refusal(party, "sent a second-moment release that is not symmetric")


# --- the release ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Release:
    """What the aggregator publishes: Σ μ_s(Â_s − F_s) and, for PCA, its top-K subspace."""

    kind: str
    design: str
    estimate: NDArray[np.float64]
    n_samples: tuple[int, ...]
    epsilon: tuple[float, ...]
    delta: tuple[float, ...]
    tau_site: tuple[float, ...]
    tau_agg: float
    subspace: NDArray[np.float64] | None = None
    eigenvalues: NDArray[np.float64] | None = None
    scheme: str = "helper"
    dropped: tuple[int, ...] = ()  # 1-based sites that dropped out (the remedy made up for them)

    def to_json(self) -> dict:
        """A JSON-ready dict (arrays as nested lists of floats)."""
        out = {
            "kind": self.kind,
            "design": self.design,
            "estimate": self.estimate.tolist(),
            "n_samples": list(self.n_samples),
            "epsilon": list(self.epsilon),
            "delta": list(self.delta),
            "tau_site": list(self.tau_site),
            "tau_agg": self.tau_agg,
            "scheme": self.scheme,
            "dropped": list(self.dropped),
        }
        if self.subspace is not None and self.eigenvalues is not None:
            out["subspace"] = self.subspace.tolist()
            out["eigenvalues"] = self.eigenvalues.tolist()
        return out

    @classmethod
    def from_json(cls, data: dict) -> Release:
        """The inverse of :meth:`to_json` (floats round-trip exactly through JSON)."""
        opt = {k: np.array(data[k]) for k in ("subspace", "eigenvalues") if k in data}
        return cls(
            kind=data["kind"],
            design=data["design"],
            estimate=np.array(data["estimate"], dtype=float),
            n_samples=tuple(data["n_samples"]),
            epsilon=tuple(data["epsilon"]),
            delta=tuple(data["delta"]),
            tau_site=tuple(data["tau_site"]),
            tau_agg=float(data["tau_agg"]),
            scheme=data.get("scheme", "helper"),
            dropped=tuple(data.get("dropped", ())),
            **opt,
        )

    def statement(self) -> str:
        """The privacy statement of this release in the aggregator's joint view.

        With the paper's design the joint view meets no site's ε (the statement then says
        EXCEEDED); the joint-view-safe design meets every site's (docs/privacy.md).
        """
        made = make_design(self.kind, self.design, self.tau_site, self.n_samples)
        z = view_noise_multipliers(
            made,
            sensitivity=mean_sensitivity(np.asarray(self.n_samples)),
            view="aggregator's joint view",
        )
        # ε is accounted at δ_s; 1e-9 relative slack absorbs the rounding of a design that
        # meets ε_s exactly (the joint-view-safe one), which would read as EXCEEDED otherwise.
        ledger = PrivacyLedger(
            budget=np.array(self.epsilon) * (1 + 1e-9), delta=np.array(self.delta)
        )
        what = "mean of its rows" if self.kind == "mean" else "second-moment matrix X_sᵀX_s/N_s"
        if self.dropped:
            gone = [d - 1 for d in self.dropped]
            drop = dropout_analysis(made, gone)
            return (
                f"Sites {', '.join(map(str, self.dropped))} dropped out. The noise generator's "
                f"remedy (c = Σ_D μ_d (E_d + H_d)) gives the renormalised release a noise std "
                f"of {drop.std['cape']:.4g} per entry, at least the {drop.required_std:.4g} the "
                f"remaining sites need (dpcore.analysis.views.dropout_analysis); the remaining "
                f"sites' worst joint-view noise is {drop.joint_std['cape']:.3f} τ_s."
            )
        return privacy_statement(
            ledger.add(z, label=f"CAPE {self.kind} ({self.design} design)"),
            calibration=CALIBRATION,
            design=self.design,
            statistic=f"each site's {what}",
        )


def finish(
    kind: str,
    design_kind: str,
    released: NDArray[np.float64],
    f: NDArray[np.float64],
    design: CapeDesign,
    *,
    n_samples: Sequence[int],
    epsilon: Sequence[float],
    delta: Sequence[float],
    k: int,
    scheme: str = "helper",
) -> Release:
    """The aggregator's last step: Σ μ_s (Â_s − F_s) (Alg. 1 step 8), then top-K for PCA."""
    estimate = aggregate_step(released, f, design.weights)
    return _release(kind, design_kind, estimate, design, n_samples, epsilon, delta, k, scheme)


REMEDY_STREAM = 100_000  # party_rng's spawn keys are 0, 1 and 2 + s < 10⁴ + 2


def remedy_rng(seed: int) -> np.random.Generator:
    """The noise generator's stream of the H_d of a dropout remedy (seed ≥ 0), apart from
    every :func:`dpcore.protocol.cape.party_rng` stream of the same seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(REMEDY_STREAM,)))


def finish_after_dropout(
    kind: str,
    design_kind: str,
    released: NDArray[np.float64],
    f: NDArray[np.float64],
    design: CapeDesign,
    correction: NDArray[np.float64],
    dropped: Sequence[int],
    *,
    n_samples: Sequence[int],
    epsilon: Sequence[float],
    delta: Sequence[float],
    k: int,
) -> Release:
    """The aggregator's last step when the sites ``dropped`` (0-based) sent nothing:
    (Σ_R μ_t (Â_t − F_t) + c) / W with W = Σ_R μ_t and the noise generator's correction c
    (the privacy explorer's remedy, :func:`dpcore.analysis.views.dropout_run`).

    Raises
    ------
    Refusal
        If the remedied aggregate would carry less noise than the remaining sites need.
    """
    analysis = dropout_analysis(design, dropped)
    if not analysis.meets["cape"]:
        raise Refusal(
            "aggregator",
            f"after the dropout of sites {[d + 1 for d in dropped]} the aggregate noise "
            f"{analysis.std['cape']:.4g} is below the {analysis.required_std:.4g} required",
        )
    keep = np.array([s for s in range(design.n_sites) if s not in set(dropped)])
    mu = design.weights
    partial = aggregate_step(released[keep], f[keep], mu[keep])
    estimate = (partial + correction) / float(mu[keep].sum())
    out = _release(kind, design_kind, estimate, design, n_samples, epsilon, delta, k, "helper")
    return replace(out, tau_agg=analysis.std["cape"], dropped=tuple(int(d) + 1 for d in dropped))


def _release(kind, design_kind, estimate, design, n_samples, epsilon, delta, k, scheme) -> Release:
    sub = vals = None
    if kind == "pca":
        vals, sub = top_k_eigh(estimate, k)
    return Release(
        kind=kind,
        design=design_kind,
        estimate=estimate,
        n_samples=tuple(int(n) for n in n_samples),
        epsilon=tuple(float(e) for e in epsilon),
        delta=tuple(float(d) for d in delta),
        tau_site=tuple(float(t) for t in design.tau_site),
        tau_agg=design.tau_agg,
        subspace=sub,
        eigenvalues=vals,
        scheme=scheme,
    )


def simulate(
    paths: Sequence[str | Path],
    *,
    kind: str,
    design: str,
    epsilon: Sequence[float],
    delta: Sequence[float],
    seed: int,
    k: int = 2,
    scheme: str = "helper",
    dropped: Sequence[int] = (),
) -> Release:
    """The same protocol in one process: ``dpcore.cape_average`` (or, for the pairwise
    scheme, ``dpcore.protocol.pairwise.pairwise_average``) on the sites' CSVs.

    The reference a distributed run with the same seed, files and (ε_s, δ_s) must equal.
    With ``dropped`` (0-based sites that send nothing; helper scheme) the noise generator's
    remedy, its H_d drawn from :func:`remedy_rng`.
    """
    values = []
    n = []
    for p in paths:
        x = read_site_csv(p)
        values.append(site_statistic(x, kind))
        n.append(x.shape[0])
    tau = site_tau(n, epsilon, delta)
    made = make_design(kind, design, tau, n)
    symmetric = kind == "pca"
    if dropped and scheme != "helper":
        raise ValueError(
            f"dropped needs scheme='helper' (the remedy's noise generator); got {scheme!r}"
        )
    if dropped:
        e, f, _, released = site_releases(
            np.stack(values), made, symmetric=symmetric, rng=np.random.default_rng(seed)
        )
        c = dropout_correction(e, made, dropped, symmetric=symmetric, rng=remedy_rng(seed))
        return finish_after_dropout(
            kind,
            design,
            released,
            f,
            made,
            c,
            dropped,
            n_samples=n,
            epsilon=epsilon,
            delta=delta,
            k=k,
        )
    if scheme == "pairwise":
        run = pairwise_average(np.stack(values), made, seed=seed, symmetric=symmetric)
    else:
        run = cape_average(np.stack(values), tau, design=made, symmetric=symmetric, rng=seed)
    return _release(kind, design, run.estimate, made, n, epsilon, delta, k, scheme)


def write_result(path: str | Path, result: dict) -> None:
    """Write the run's outcome (a release or a refusal) as JSON, atomically."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(path)


# --- the manifest against relayed numbers (#48) ------------------------------------------------


def manifest_tau(manifest: Manifest) -> NDArray[np.float64]:
    """τ_s of every pinned site, from the manifest's N_s, ε_s and δ_s alone."""
    return site_tau(manifest.n, manifest.epsilon, manifest.delta)


def relayed_problem(
    fields: dict, manifest: Manifest, digest: str, own_site: int | None = None
) -> str | None:
    """Why the numbers the aggregator relayed differ from the pinned manifest (None if they
    agree): its digest, the list of sites, every N_s and τ_s, and each release's design and
    scheme. ``own_site`` (1-based) words a wrong τ of the checking site as its own."""
    if fields.get("manifest") != digest:
        named = str(fields.get("manifest"))[:16]
        return f"the run names manifest {named}…; this party pins {digest[:16]}…"
    n_relayed = [int(n) for n in fields["n"]]
    pinned = manifest.n
    if len(n_relayed) != len(pinned):
        extra = f" (site {len(pinned) + 1} is not in it)" if len(n_relayed) > len(pinned) else ""
        return f"the run lists {len(n_relayed)} sites; the manifest pins {len(pinned)}{extra}"
    for s, (got, want) in enumerate(zip(n_relayed, pinned, strict=True)):
        if got != want:
            return f"site {s + 1}'s N_s is relayed as {got}; the manifest pins {want}"
    for s, (got, want) in enumerate(zip(fields["tau"], manifest_tau(manifest), strict=True)):
        if float(got) != float(want):
            if own_site == s + 1:
                return f"the design uses τ = {float(got)!r}; this site needs {float(want)!r}"
            return (
                f"site {s + 1}'s τ is relayed as {float(got)!r}; "
                f"its pinned promise needs {float(want)!r}"
            )
    for item in fields["releases"]:
        _, design, scheme = str(item).split(":")
        if design not in manifest.designs or scheme not in manifest.schemes:
            return (
                f"release {item} is not allowed by the manifest (designs {list(manifest.designs)}, "
                f"schemes {list(manifest.schemes)})"
            )
    return None
