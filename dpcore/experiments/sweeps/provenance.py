"""What a sweep's frame carries about itself (``DataFrame.attrs``), and its rerun.

A frame made by :func:`dpcore.pca_sweep` or :func:`dpcore.otd_sweep` (or their ``run_*``
forms) holds, in ``frame.attrs``:

- ``"sweep"``: ``"pca"`` or ``"otd"``;
- ``"spec"``: every keyword of the spec's ``build``, JSON-safe (lists for tuples; a data
  set by its name, with ``"data_sha256"`` of its samples);
- ``"seed"``: the ``rng`` it ran from, as an int seed, or for a Generator that is not a
  plain seed the state of its :class:`numpy.random.SeedSequence`;
- ``"version"`` and ``"commit"``: the code (:mod:`dpcore.version`);
- ``"kernels"``: the BLAS libraries and CPU kernels the numbers were computed with
  (:func:`kernels`): a last-bit difference between two machines is explained by them.

:func:`dpcore.rerun` (:mod:`dpcore.experiments.sweeps.rerun`) computes the frame again from them: a
saved frame (pickle, Parquet) can be reproduced without its script.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpcore.factorization.datasets import Dataset
from dpcore.parallel import blas_libraries
from dpcore.version import __version__, source_commit

Seed = int | dict[str, Any] | None


def seed_of(rng: np.random.Generator) -> Seed:
    """What rebuilds ``rng`` before it is spawned from: an int, a SeedSequence's state, None.

    Every sweep only spawns children from its Generator (``rng.spawn``), which reads the
    SeedSequence alone: its entropy, spawn key and children spawned so far say everything.
    None for a Generator without one (made from a bit generator's raw state).

    Examples
    --------
    >>> seed_of(np.random.default_rng(7))
    7
    >>> child = np.random.default_rng(7).spawn(1)[0]
    >>> seed_of(child)["spawn_key"]
    [0]
    """
    bits = rng.bit_generator
    sequence = bits.seed_seq
    if not isinstance(sequence, np.random.SeedSequence):
        return None
    entropy = sequence.entropy
    if entropy is None:  # never after construction; for the type checker
        return None
    plain = not sequence.spawn_key and sequence.n_children_spawned == 0
    if plain and isinstance(entropy, int) and type(bits) is np.random.PCG64:
        return entropy
    return {
        "entropy": entropy if isinstance(entropy, int) else [int(e) for e in entropy],
        "spawn_key": [int(k) for k in sequence.spawn_key],
        "n_children_spawned": int(sequence.n_children_spawned),
        "bit_generator": type(bits).__name__,
    }


def generator_of(seed: Seed) -> np.random.Generator:
    """The Generator :func:`seed_of` described (a fresh one: spawning it gives the same).

    Raises
    ------
    ValueError
        For None (the frame's Generator had no SeedSequence) or a malformed description.
    """
    if isinstance(seed, int) and not isinstance(seed, bool):
        return np.random.default_rng(seed)
    if not isinstance(seed, Mapping):
        raise ValueError(
            f"seed must be an int or a SeedSequence's state (frame.attrs['seed']); got {seed!r}"
        )
    try:
        sequence = np.random.SeedSequence(
            seed["entropy"],
            spawn_key=tuple(seed["spawn_key"]),
            n_children_spawned=seed["n_children_spawned"],
        )
        bits = getattr(np.random, seed["bit_generator"])
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"seed is not a SeedSequence's state ({err!r}); got {seed!r}") from None
    return np.random.Generator(bits(sequence))


def _plain(value: Any) -> Any:
    """``value`` as JSON-safe Python: lists for tuples, Python numbers for NumPy's."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def digest(data: Dataset) -> str:
    """SHA-256 of a data set's samples (float64, C order)."""
    return hashlib.sha256(np.ascontiguousarray(data.samples, dtype=np.float64).data).hexdigest()


def frame_attrs(sweep: str, keywords: Mapping[str, Any], seed: Seed) -> dict[str, Any]:
    """The ``attrs`` of a sweep's frame (see the module docstring)."""
    spec = {name: _plain(value) for name, value in keywords.items()}
    data = keywords.get("data")
    if isinstance(data, Dataset):
        spec["data"] = data.name
        spec["data_sha256"] = digest(data)
    return {
        "sweep": sweep,
        "spec": spec,
        "seed": seed,
        "version": __version__,
        "commit": source_commit(),
        "kernels": kernels(),
    }


def _cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else :func:`platform.processor`."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


@functools.cache
def _cpu() -> dict[str, Any]:
    """The machine, its CPU and the SIMD kernels NumPy dispatches to on it (fixed per run)."""
    simd: dict[str, Any] = {}
    try:
        simd = dict(np.show_config(mode="dicts")["SIMD Extensions"])
    except (KeyError, TypeError, ValueError):  # an older NumPy, or a build without the table
        pass
    return {
        "machine": platform.machine(),
        "model": _cpu_model(),
        "numpy_simd_baseline": list(simd.get("baseline", [])),
        "numpy_simd_found": list(simd.get("found", [])),
    }


def kernels() -> dict[str, Any]:
    """The BLAS libraries and CPU kernels of this process, JSON-safe, for a run's provenance.

    ``"blas"``: the loaded BLAS and OpenMP libraries with their version, threading layer and
    the CPU kernels they chose (:func:`dpcore.parallel.blas_libraries`, from threadpoolctl);
    ``"cpu"``: the machine, the CPU model and the SIMD extensions NumPy uses on it.

    Examples
    --------
    >>> info = kernels()
    >>> sorted(info), any(lib["user_api"] == "blas" for lib in info["blas"])
    (['blas', 'cpu'], True)
    """
    return {"blas": blas_libraries(), "cpu": dict(_cpu())}
