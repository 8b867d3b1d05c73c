"""A sweep's frame computed again from its ``attrs`` (see :mod:`.provenance`)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor

import pandas as pd

from dpcore.experiments.realdata import BUNDLED, load_bundled
from dpcore.experiments.sweeps.otd import otd_frame, run_otd_sweep
from dpcore.experiments.sweeps.pca import run_pca_sweep
from dpcore.experiments.sweeps.provenance import digest, generator_of
from dpcore.experiments.sweeps.spec import OtdSpec, PcaSpec
from dpcore.factorization.datasets import Dataset


def rerun(
    frame: pd.DataFrame,
    *,
    data: Dataset | None = None,
    workers: int | None = None,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """The sweep that made ``frame``, run again from ``frame.attrs``: the same frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        A frame of :func:`dpcore.pca_sweep` or :func:`dpcore.otd_sweep` (or one read back
        with its ``attrs``).
    data : Dataset, optional
        The data set of a PCA sweep on real data that is not bundled
        (:data:`dpcore.experiments.realdata.BUNDLED` ones are loaded by name); its samples must
        hash as recorded.
    workers, executor
        Where the tasks run (the frame is the same for any).

    Raises
    ------
    ValueError
        If ``frame.attrs`` holds no sweep, or ``data`` is missing or not the recorded one.

    Examples
    --------
    >>> from dpcore import pca_sweep
    >>> df = pca_sweep(epsilon=[0.5, 0.9], dim=8, k=2, runs=1, pool_size=500,
    ...                n_per_site=20, sites=3, rng=5)
    >>> rerun(df).equals(df)
    True
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    attrs = frame.attrs
    if attrs.get("sweep") not in ("pca", "otd") or not isinstance(attrs.get("spec"), Mapping):
        raise ValueError(
            "frame must carry a sweep's attrs ('sweep', 'spec', 'seed'), as pca_sweep and "
            f"otd_sweep make them; got attrs with keys {sorted(map(str, attrs))}"
        )
    if data is not None and not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset or None; got {type(data).__name__}")
    keywords = dict(attrs["spec"])
    recorded = keywords.pop("data_sha256", None)
    rng = generator_of(attrs.get("seed"))
    if attrs["sweep"] == "otd":
        spec = OtdSpec.build(**keywords)
        result = run_otd_sweep(spec, rng, workers=workers, executor=executor)
        return otd_frame(spec, result)
    if recorded is not None:
        if data is None and keywords["data"] in BUNDLED:
            data = load_bundled(keywords["data"])
        if data is None:
            raise ValueError(
                f"data must be the data set {keywords['data']!r} the frame was made from "
                "(it is not bundled); got None"
            )
        got = digest(data)
        if got != recorded:
            raise ValueError(
                f"data must be the data set the frame was made from (samples SHA-256 "
                f"{recorded[:12]}…); got {data.name!r} with {got[:12]}…"
            )
        keywords["data"] = data
    return run_pca_sweep(PcaSpec.build(**keywords), rng, workers=workers, executor=executor)
