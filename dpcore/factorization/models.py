"""Latent-variable models with planted truth: mixture of Gaussians (MOG), single topic (STM).

References: Imtiaz & Sarwate, Appendix D (D.1 STM, D.2 MOG); Anandkumar et al., "Tensor
decompositions for learning latent variable models", JMLR 2014. Defaults from the authors'
code (``shared/paper-experiments.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr

from dpcore._validation import (
    RngLike,
    as_float_array,
    check_choice,
    check_int,
    check_real,
    check_rng,
)

MODELS = ("mog", "stm")


@dataclass(frozen=True, eq=False)
class MixtureModel:
    """A planted MOG or STM model.

    Attributes
    ----------
    kind : {"mog", "stm"}
    weights : ndarray, shape (K,)
        Mixing weights w_k > 0, Σ w_k = 1.
    components : ndarray, shape (D, K)
        a_k as columns: unit-norm means (MOG) or word-probability vectors (STM).
    sigma2 : float
        Spherical noise variance σ² of the MOG (0 for STM), in the unscaled data units.
    doc_length : int
        Words per document L ≥ 3 (STM only; the moments use words 1, 2, 3).
    """

    kind: str
    weights: NDArray[np.float64]
    components: NDArray[np.float64]
    sigma2: float = 0.0
    doc_length: int = 3

    def __post_init__(self) -> None:
        for name in ("weights", "components"):
            arr = np.array(as_float_array(getattr(self, name), name))
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def dim(self) -> int:
        """D."""
        return int(self.components.shape[0])

    @property
    def k(self) -> int:
        """K."""
        return int(self.components.shape[1])


def paper_weights(k: int) -> NDArray[np.float64]:
    """W = linspace(1, 10K, K) / sum — the authors' mixing weights."""
    w = np.linspace(1.0, 10.0 * k, k)
    return w / float(w.sum())


MAX_MODEL_DIM = 2000  # a D×D QR per model: 32 MB and well under a second at the bound


def _check_dims(dim: int, k: int) -> tuple[int, int]:
    dim = check_int(dim, "dim", low=1, high=MAX_MODEL_DIM)
    return dim, check_int(k, "k", low=1, high=dim)


def _random_orthonormal(dim: int, k: int, rng: RngLike) -> NDArray[np.float64]:
    q, r = np.linalg.qr(check_rng(rng).standard_normal((dim, dim)))
    return (q * np.sign(np.diag(r)))[:, :k]  # Haar-distributed orthogonal matrix, first K cols


def mog_model(
    dim: int = 10, k: int = 5, *, sigma2: float = 0.05, rng: RngLike = None
) -> MixtureModel:
    """Spherical mixture of Gaussians x = a_h + z, z ~ N(0, σ² I).

    Parameters
    ----------
    dim, k : int
        D ≥ 1 and 1 ≤ K ≤ D.
    sigma2 : float
        σ² in [0, ∞) (paper: 0.05).
    rng : int, numpy.random.Generator or None
        Seed or generator (SPEC 7).

    Returns
    -------
    MixtureModel
        Means: the first K columns of a random orthogonal D×D matrix (unit norm,
        orthogonal); weights :func:`paper_weights`.
    """
    dim, k = _check_dims(dim, k)
    sigma2 = check_real(sigma2, "sigma2", low=0.0, high_open=True)
    return MixtureModel("mog", paper_weights(k), _random_orthonormal(dim, k, rng), sigma2)


def stm_model(
    dim: int = 10, k: int = 5, *, doc_length: int = 3, rng: RngLike = None
) -> MixtureModel:
    """Single topic model: a document's L words are i.i.d. from the topic's word distribution.

    Topic-word vectors: the first K columns of a random orthogonal matrix, each column's
    sign chosen so that its entries sum to a positive number, negatives set to 0, and divided
    by its sum (the authors' construction plus the sign choice, which keeps every column a
    valid distribution).
    """
    dim, k = _check_dims(dim, k)
    doc_length = check_int(doc_length, "doc_length", low=3)
    q = _random_orthonormal(dim, k, rng)
    q = q * np.where(q.sum(axis=0) < 0, -1.0, 1.0)
    a = np.clip(q, 0.0, None)
    return MixtureModel("stm", paper_weights(k), a / a.sum(axis=0), 0.0, doc_length)


def make_model(
    kind: str,
    dim: int,
    k: int,
    *,
    sigma2: float = 0.05,
    doc_length: int = 3,
    rng: RngLike = None,
) -> MixtureModel:
    """:func:`mog_model` or :func:`stm_model` by name."""
    kind = check_choice(kind, "kind", MODELS)
    if kind == "mog":
        return mog_model(dim, k, sigma2=sigma2, rng=rng)
    return stm_model(dim, k, doc_length=doc_length, rng=rng)


def _topics(model: MixtureModel, u: NDArray[np.float64]) -> NDArray[np.intp]:
    """Latent h by inverse CDF of uniforms u."""
    return np.minimum(np.searchsorted(np.cumsum(model.weights), u, side="right"), model.k - 1)


def sample_mog(model: MixtureModel, n: int, *, rng: RngLike) -> NDArray[np.float64]:
    """N samples x = a_h + z as rows, shape (n, D).

    Each sample uses one contiguous row of D + 1 standard normals (the first picks h by
    inverse CDF), so drawing in chunks gives the same data whatever the chunk size.
    """
    z = check_rng(rng).standard_normal((n, model.dim + 1))
    h = _topics(model, ndtr(z[:, 0]))
    x: NDArray[np.float64] = model.components.T[h] + np.sqrt(model.sigma2) * z[:, 1:]
    return x


def sample_stm(model: MixtureModel, n: int, *, rng: RngLike) -> NDArray[np.intp]:
    """N documents as word indices, shape (n, L) (one-hot vectors t_l = e_word, not stored).

    One contiguous row of L + 1 uniforms per document (topic, then words): chunk-invariant.
    """
    u = check_rng(rng).uniform(size=(n, model.doc_length + 1))
    h = _topics(model, u[:, 0])
    cdf = np.cumsum(model.components, axis=0).T  # (K, D)
    words = (u[:, 1:, None] >= cdf[h][:, None, :]).sum(axis=2)  # inverse CDF per word
    clipped: NDArray[np.intp] = np.minimum(words, model.dim - 1)
    return clipped
