"""One peer library's PCA fits, run inside the peers environment (``scripts/peers_env.sh``).

    <peers-venv>/bin/python benchmarks/peers_worker.py LIB DRAWS.npz EPSILON K RUNS SEED

:mod:`benchmarks.peers` starts it once per (library, ε) and reads its standard output: a first
line ``{"ready": …}`` once the library has imported (import time is not a fit's time), then
one JSON line per fit, ``{"draw", "run", "seconds", "components"}``, or ``{"error": …}``.
It imports numpy and the peer library only (never dpcore): diffprivlib 0.6.6 needs
scikit-learn < 1.8, which the project's environment does not have.

Each library at its best settings, under its own replace-one ε-DP guarantee:

- diffprivlib: ``diffprivlib.models.PCA(centered=True, data_norm=1, bounds=(-1, 1))`` — the
  data are centred in advance (as for every row of the table), so no ε goes to a private
  mean, and the norm bound is given, so nothing is read from the data; its eigenvalue Laplace
  noise has sensitivity 2 (one row replaced) and its eigenvectors come from the Bingham
  sampler (Amin, Dick, Kulesza, Medina & Vassilvitskii, ICML 2019).
- OpenDP: the measurement behind ``opendp.extras.sklearn.decomposition.PCA``,
  ``make_private_pca``, on an ``array2_domain`` with the norm bound and the origin given
  (the class itself has no origin parameter and then spends ε/3 on a private mean). Its
  input metric is the symmetric distance on data sets of a known size: a replaced row is
  distance 2, and the worker checks ``measurement.map(2) ≤ ε`` before any fit.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np


def _diffprivlib(dim: int, n: int, k: int, epsilon: float):
    from diffprivlib.models import PCA

    bounds = (-np.ones(dim), np.ones(dim))  # unused when centred; given so none is read

    def fit(x: np.ndarray, seed: int) -> np.ndarray:
        model = PCA(n_components=k, epsilon=epsilon, data_norm=1.0, centered=True,
                    bounds=bounds, random_state=seed)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a PrivacyLeakWarning would mean a setting is missing
            model.fit(x.copy())
        return np.asarray(model.components_, dtype=float)

    return fit


def _opendp(dim: int, n: int, k: int, epsilon: float):
    import opendp.prelude as dp
    from opendp.extras.sklearn.decomposition import make_private_pca

    dp.enable_features("contrib", "idealized-numerics")  # as make_private_pca requires
    domain = dp.numpy.array2_domain(norm=1.0, p=2, origin=np.zeros(dim), size=n, T=float)
    measurement = make_private_pca(domain, dp.symmetric_distance(), epsilon, num_components=k)
    if measurement.map(2) > epsilon * (1 + 1e-12):  # one row replaced = symmetric distance 2
        raise ValueError(f"OpenDP's map(2) = {measurement.map(2)} exceeds ε = {epsilon}")

    def fit(x: np.ndarray, seed: int) -> np.ndarray:  # OpenDP draws from OS entropy: no seed
        return np.asarray(measurement(x).Vt, dtype=float)[:k]

    return fit


def main(argv: list[str]) -> int:
    lib, path, epsilon, k, runs, seed = argv
    draws = np.load(path)
    xs = [draws[f"x{i}"] for i in range(len(draws.files))]
    try:
        make = {"diffprivlib": _diffprivlib, "opendp": _opendp}[lib]
        fit = make(xs[0].shape[1], xs[0].shape[0], int(k), float(epsilon))
    except Exception as err:  # any failure: the parent turns it into the row's reason
        print(json.dumps({"error": f"{type(err).__name__}: {str(err).splitlines()[0][:120]}"}))
        return 0
    print(json.dumps({"ready": lib}), flush=True)
    for d, x in enumerate(xs):
        for r in range(int(runs)):
            start = time.perf_counter()
            components = fit(x, int(seed) * 1000 + d * int(runs) + r)
            seconds = time.perf_counter() - start
            line = {"draw": d, "run": r, "seconds": seconds, "components": components.tolist()}
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
