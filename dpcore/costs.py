"""Communication cost: how many real numbers each party sends, per algorithm."""

from __future__ import annotations

from dpcore._validation import check_choice, check_int

_PCA = ("nonprivate", "cape", "conv", "local", "dpdis")
_OTD = ("nonprivate", "cape", "conv", "local_agn", "local_avn", "random")


def communication_cost(
    algorithm: str, *, problem: str, dim: int, k: int, sites: int, rank: int | None = None
) -> dict[str, int]:
    """Reals sent by the noise generator, the aggregator and all sites together.

    Parameters
    ----------
    algorithm : str
        A name from :data:`dpcore.PCA_ALGORITHMS` or :data:`dpcore.OTD_ALGORITHMS`.
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
    """
    problem = check_choice(problem, "problem", ("pca", "otd"))
    algorithm = check_choice(algorithm, "algorithm", _PCA if problem == "pca" else _OTD)
    d = check_int(dim, "dim", low=1)
    k = check_int(k, "k", low=1, high=d)
    s = check_int(sites, "sites", low=1)
    gen = agg = site = 0
    if problem == "pca":
        r = min(2 * k, d) if rank is None else check_int(rank, "rank", low=k, high=d)
        if algorithm in ("nonprivate", "cape", "conv"):
            site = s * d * d
        if algorithm == "cape":
            gen = agg = s * d * d
        if algorithm == "dpdis":
            site = s * d * r
    elif algorithm in ("nonprivate", "cape", "conv"):
        site = s * (d * d + k**3)
        agg = s * d * k
        if algorithm == "cape":
            gen = s * (d * d + d**3)
            agg += s * (d * d + d**3)
    return {"noise generator": gen, "aggregator": agg, "sites": site, "total": gen + agg + site}
