"""Communication cost: how many real numbers each party sends, per algorithm (from the registry)."""

from __future__ import annotations

from dpcore._validation import check_choice, check_int
from dpcore.factorization.registry import FAMILIES, CostShape, get


def communication_cost(
    algorithm: str, *, problem: str, dim: int, k: int, sites: int, rank: int | None = None
) -> dict[str, int]:
    """Reals sent by the noise generator, the aggregator and all sites together.

    Parameters
    ----------
    algorithm : str
        A registered name of the problem's family (:func:`dpcore.factorization.registry.names`).
    problem : {"pca", "otd"}
    dim, k, sites : int
        D ≥ 1, 1 ≤ K ≤ D, S ≥ 1.
    rank : int, optional
        R for DPdisPCA (default min(2K, D)).

    Returns
    -------
    dict
        Keys ``"noise generator"``, ``"aggregator"``, ``"sites"`` and ``"total"``.

    Notes
    -----
    capePCA: each of the three parties sends S D×D matrices, 3SD² in all (Sec. 4).
    capeAGN: 3SD² + 2SD³ + SDK + SK³ (Sec. 5): E2, E3 from the noise generator; F2, F3 and W
    from the aggregator; M̂2 (D×D) and M̃3 (K×K×K) from each site. ``nonprivate`` counts the
    same flow without noise; ``local`` and ``random`` send nothing. Matrices and tensors
    are counted in full, as in the paper (a symmetric one could be sent as its free entries).
    Each algorithm's count is its registry record's ``cost`` (:mod:`dpcore.factorization.registry`).

    Examples
    --------
    >>> communication_cost("cape", problem="pca", dim=10, k=2, sites=3)["total"]
    900
    """
    problem = check_choice(problem, "problem", FAMILIES)
    method = get(algorithm, problem).method(problem)
    d = check_int(dim, "dim", low=1)
    k = check_int(k, "k", low=1, high=d)
    s = check_int(sites, "sites", low=1)
    r = min(2 * k, d) if rank is None else check_int(rank, "rank", low=k, high=d)
    cost = method.cost(CostShape(dim=d, k=k, sites=s, rank=r))
    return {
        "noise generator": cost.noise_generator,
        "aggregator": cost.aggregator,
        "sites": cost.sites,
        "total": cost.noise_generator + cost.aggregator + cost.sites,
    }
