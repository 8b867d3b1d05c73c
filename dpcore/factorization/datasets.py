"""Data sets as pools of samples, and how a run splits them over sites.

A :class:`Dataset` is a pool of samples (rows = samples, shape (n, D)) normalised once so
that ‖x‖₂ ≤ 1, plus the reference matrix against which captured energy is measured.
Normalising by the pool's maximum sample norm looks at the data and is **not**
differentially private; the paper does the same (Sec. 6.1) and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpcore._validation import RngLike, as_float_array, check_int, check_rng, show
from dpcore.resources import MAX_MEMORY

MAX_SITES = 10_000  # the paper goes to 50; a sizes array and its rounding stay instant
MAX_SAMPLES_PER_SITE = 10**9  # S·N_s stays far inside int64
# as for real data (dpcore.experiments.realdata.MAX_DIM): D³ eigendecompositions
MAX_SYNTHETIC_DIM = 1000


@dataclass(frozen=True, eq=False)
class Dataset:
    """A pool of samples and its reference second-moment matrix.

    Attributes
    ----------
    name : str
    samples : ndarray, shape (n, D)
        Rows are samples, every ‖x‖₂ ≤ 1.
    reference : ndarray, shape (D, D)
        Symmetric PSD matrix A for captured energy tr(V̂ᵀ A V̂): the generating covariance
        for synthetic data, the pool's second-moment matrix for real data.
    description : str
    """

    name: str
    samples: NDArray[np.float64]
    reference: NDArray[np.float64]
    description: str = ""

    def __post_init__(self) -> None:
        for field in ("name", "description"):
            if not isinstance(getattr(self, field), str):
                raise TypeError(f"{field} must be a str; got {type(getattr(self, field)).__name__}")
        x = as_float_array(self.samples, "samples")
        a = as_float_array(self.reference, "reference")
        if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
            raise ValueError(f"samples must have shape (n >= 2, D >= 1); got {x.shape}")
        if a.shape != (x.shape[1], x.shape[1]):
            d = x.shape[1]
            raise ValueError(
                f"reference must have shape (D, D) = ({d}, {d}) for samples of shape {x.shape}; "
                f"got {a.shape}"
            )
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(a))):
            raise ValueError("samples and reference must be finite")
        for arr in (x, a):
            arr.setflags(write=False)
        object.__setattr__(self, "samples", x)
        object.__setattr__(self, "reference", a)

    @property
    def dim(self) -> int:
        """D."""
        return int(self.samples.shape[1])

    @property
    def n_samples(self) -> int:
        """Size of the pool."""
        return int(self.samples.shape[0])


def normalise_to_unit_ball(samples: NDArray[np.float64]) -> NDArray[np.float64]:
    """Divide every sample by the largest sample norm, so that ‖x‖₂ ≤ 1 (non-private)."""
    top = float(np.max(np.linalg.norm(samples, axis=1)))
    return samples / top if top > 0 else samples.copy()


def synthetic_covariance(
    dim: int = 200, k: int = 50, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """The paper's synthetic covariance: diag(linspace(10, 1, K), 0.5·U(0, 1) × (D − K)).

    References
    ----------
    Imtiaz & Sarwate, Sec. 6.1; the authors' code (``shared/paper-experiments.md``).
    """
    dim = check_int(dim, "dim", low=1)
    k = check_int(k, "k", low=1, high=dim)
    spectrum = np.concatenate([np.linspace(10.0, 1.0, k), 0.5 * rng.uniform(0.0, 1.0, dim - k)])
    return np.diag(spectrum)


def synthetic_dataset(
    *, dim: int = 200, k: int = 50, n_samples: int = 60_000, rng: RngLike = None
) -> Dataset:
    """Zero-mean Gaussian pool with :func:`synthetic_covariance`, scaled into the unit ball.

    Parameters
    ----------
    dim, k : int
        D ≥ 1 and 1 ≤ K ≤ D.
    n_samples : int
        Pool size, ≥ 2 (paper: 60,000).
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7).

    Returns
    -------
    Dataset
        ``reference`` is the generating covariance (the paper's A for synthetic data).
    """
    n_samples = check_int(n_samples, "n_samples", low=2)
    rng = check_rng(rng)
    dim = check_int(dim, "dim", low=1, high=MAX_SYNTHETIC_DIM)
    if 16.0 * n_samples * dim > MAX_MEMORY:  # the pool and its scaled copy
        raise ValueError(
            f"a synthetic pool of n_samples × dim = {n_samples:,} × {dim} needs "
            f"{16 * n_samples * dim / 2**30:.1f} GiB; the limit is {MAX_MEMORY / 2**30:.0f} GiB"
        )
    cov = synthetic_covariance(dim, k, rng=rng)
    samples = rng.standard_normal((n_samples, cov.shape[0])) * np.sqrt(np.diag(cov))
    return Dataset(
        name="synthetic",
        samples=normalise_to_unit_ball(samples),
        reference=cov,
        description=(
            f"Gaussian, D={dim}: eigenvalues linspace(10, 1, {k}) then 0.5·U(0,1); "
            f"{n_samples:,} samples divided by the largest sample norm (non-private)."
        ),
    )


def split_sizes(
    n_per_site: int, sites: int, shares: Sequence[float] | None = None
) -> NDArray[np.int64]:
    """Sizes N_s of S sites holding S·n_per_site samples in total.

    Parameters
    ----------
    n_per_site : int
        Average N_s, ≥ 1.
    sites : int
        S, ≥ 1.
    shares : sequence of float, optional
        Relative site sizes (> 0); default equal. Rounded by largest remainder so the sizes
        sum to S·n_per_site; every site keeps at least one sample.
    """
    n_per_site = check_int(n_per_site, "n_per_site", low=1, high=MAX_SAMPLES_PER_SITE)
    sites = check_int(sites, "sites", low=1, high=MAX_SITES)
    total = n_per_site * sites
    if shares is None:
        return np.full(sites, n_per_site, dtype=np.int64)
    w = as_float_array(shares, "shares")
    if w.shape != (sites,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(
            f"shares (a sweep's site_shares) must be {sites} positive finite numbers, one per "
            f"site; got {show(shares)}"
        )
    w = w / w.max()  # shares near 1e308 would sum to inf
    ideal = total * w / w.sum()
    sizes: NDArray[np.int64] = np.floor(ideal).astype(np.int64)
    sizes[np.argsort(sizes - ideal, kind="stable")[: total - sizes.sum()]] += 1
    while np.any(sizes < 1):  # every site keeps one sample, taken from the largest
        sizes[np.argmin(sizes)] += 1
        sizes[np.argmax(sizes)] -= 1
    return sizes


def draw_sites(
    dataset: Dataset, sizes: NDArray[np.int64], *, rng: np.random.Generator
) -> list[NDArray[np.float64]]:
    """Draw N = Σ N_s samples without replacement, centre them, split into contiguous blocks.

    After centring, a sample may leave the unit ball; the draw is rescaled (only if needed)
    so that ‖x‖₂ ≤ 1 holds, as the sensitivity Δ = 1/N_s assumes.

    Returns
    -------
    list of ndarray
        One (N_s, D) block per site.
    """
    total = int(np.sum(sizes))
    if total > dataset.n_samples:
        raise ValueError(
            f"sites * n_per_site must be at most the pool size {dataset.n_samples}; got {total}"
        )
    x = dataset.samples[rng.choice(dataset.n_samples, size=total, replace=False)]
    x = x - x.mean(axis=0)
    top = float(np.max(np.linalg.norm(x, axis=1)))
    if top > 1.0:
        x /= top
    return np.split(x, np.cumsum(sizes)[:-1])


def second_moments(blocks: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    """A_s = X_sᵀ X_s / N_s for every site (rows are samples): shape (S, D, D)."""
    return np.stack([b.T @ b / b.shape[0] for b in blocks])
