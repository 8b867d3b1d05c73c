"""Real data sets: bundled ones, the paper's MNIST and Covertype from local files, and CSV.

Every loader ends in :func:`dataset_from_array`, the paper's preprocessing for real data
(Sec. 6.1): centre the pool, divide every sample by the largest sample norm (so ‖x‖ ≤ 1),
and measure captured energy against the pool's own second-moment matrix. Looking at the
data to centre and scale it is **not** differentially private; the paper does the same, and
the app says so.

Nothing is downloaded: the bundled sets ship inside scikit-learn's wheel, MNIST and
Covertype are read from paths the user gives (or ``CAPE_MNIST`` / ``CAPE_COVTYPE``).
"""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpcore._validation import check_choice, check_int
from dpcore.datasets import Dataset, normalise_to_unit_ball

MAX_DIM = 1000  # D limit: eigendecompositions are O(D³); MNIST has 784
MAX_ROWS = 1_000_000
MIN_ROWS = 10
BUNDLED = ("digits", "breast_cancer", "wine")
ENV = {"mnist": "CAPE_MNIST", "covtype": "CAPE_COVTYPE"}
COVTYPE_ROWS = 60_000  # the paper's random subset of Covertype's 581,012 rows
MAX_FILE_BYTES = 300 * 2**20  # MNIST's IDX is 47 MB, covtype.data 75 MB


def dataset_from_array(
    x, *, name: str, description: str = "", max_rows: int | None = None, rng=None
) -> Dataset:
    """Centre, scale into the unit ball and wrap a samples × features array.

    Parameters
    ----------
    x : array_like, shape (n, D)
        Rows are samples; numeric and finite, MIN_ROWS ≤ n, 1 ≤ D ≤ MAX_DIM.
    name, description : str
    max_rows : int, optional
        Keep a uniformly random subset of this many rows (needs ``rng``), as the paper does
        for Covertype.
    rng : numpy.random.Generator, optional

    Returns
    -------
    Dataset
        ``reference`` is the second-moment matrix of the centred, scaled pool (the paper's
        sample covariance up to a constant, which leaves captured-energy ratios unchanged).
    """
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"data must be a 2-D table (rows = samples); got {arr.ndim} dimensions")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"data must be real numbers; got dtype {arr.dtype}")
    arr = arr.astype(float)
    n, d = arr.shape
    if d < 1 or d > MAX_DIM:
        raise ValueError(f"data must have between 1 and {MAX_DIM} columns (D); got {d}")
    if n < MIN_ROWS:
        raise ValueError(f"data must have at least {MIN_ROWS} rows (samples); got {n}")
    bad = ~np.isfinite(arr)
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise ValueError(
            f"data must be finite; {bad.sum()} NaN/inf values in {rows.size} rows "
            f"(first at row {rows[0] + 1})"
        )
    if max_rows is not None and n > max_rows:
        if rng is None:
            raise ValueError("max_rows needs an rng to choose the rows")
        arr = arr[np.sort(rng.choice(n, size=max_rows, replace=False))]
        n = max_rows
    if n > MAX_ROWS:
        raise ValueError(f"data must have at most {MAX_ROWS:,} rows (samples); got {n:,}")
    centred = arr - arr.mean(axis=0)
    if not np.any(centred):
        raise ValueError("data must vary: every row is the same after centring")
    samples = normalise_to_unit_ball(centred)
    return Dataset(
        name=name,
        samples=samples,
        reference=samples.T @ samples / n,
        description=description
        or f"{n:,} samples × {d} features, centred and divided by the largest sample norm "
        f"(non-private preprocessing, as in the paper).",
    )


def load_bundled(name: str) -> Dataset:
    """A small real data set shipped inside scikit-learn (no download).

    ``digits`` (1,797 × 64 handwritten digits, 8×8 pixels), ``breast_cancer`` (569 × 30
    tumour measurements), ``wine`` (178 × 13 chemical analyses). The features of the last
    two have very different units, so each is first divided by its standard deviation.
    """
    from sklearn import datasets  # imported lazily: only needed for these sets

    name = check_choice(name, "name", BUNDLED)
    loader = {
        "digits": datasets.load_digits,
        "breast_cancer": datasets.load_breast_cancer,
        "wine": datasets.load_wine,
    }[name]
    x = loader().data.astype(float)
    standardised = name != "digits"
    if standardised:
        x = x / np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    what = {
        "digits": "UCI handwritten digits (8×8 pixels)",
        "breast_cancer": "Wisconsin breast cancer (standardised features)",
        "wine": "UCI wine (standardised features)",
    }[name]
    return dataset_from_array(
        x,
        name=name,
        description=f"{what}: {x.shape[0]:,} samples × {x.shape[1]} features, bundled with "
        f"scikit-learn; centred and divided by the largest sample norm (non-private).",
    )


def _path(path: str | os.PathLike | None, kind: str) -> Path:
    if path is None or str(path) == "":
        path = os.environ.get(ENV[kind], "")
        if not path:
            raise ValueError(
                f"no {kind} file given: enter a path or set the {ENV[kind]} environment variable"
            )
    p = Path(str(path)).expanduser()
    try:
        found = p.is_file()
    except (OSError, ValueError) as err:  # e.g. a name too long, a NUL byte
        raise ValueError(f"{kind} file cannot be opened: {type(err).__name__}") from err
    if not found:
        raise ValueError(f"{kind} file not found: {str(p)[:200]}")
    return p


def _read_bytes(p: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes (gunzipped if needed), refusing more than ``limit`` either way."""
    try:
        with p.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as err:
        raise ValueError(f"{p.name} cannot be read: {type(err).__name__}") from err
    if len(raw) > limit:
        raise ValueError(f"{p.name} is larger than {limit / 2**20:.0f} MiB")
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                raw = gz.read(limit + 1)  # bounded: a gzip bomb cannot exhaust memory
        except (OSError, EOFError) as err:
            raise ValueError(f"{p.name} looks gzip-compressed but cannot be read: {err}") from err
        if len(raw) > limit:
            raise ValueError(f"{p.name} decompresses to more than {limit / 2**20:.0f} MiB")
    return raw


def parse_idx(raw: bytes) -> NDArray:
    """An IDX array (the MNIST file format): magic 0x0000 type ndim, big-endian sizes."""
    types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in types:
        raise ValueError("not an IDX file: the magic number is wrong")
    ndim = raw[3]
    if ndim < 1 or len(raw) < 4 + 4 * ndim:
        raise ValueError("not an IDX file: truncated header")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(types[raw[2]])
    body = raw[4 + 4 * ndim :]
    if len(body) != int(np.prod(shape)) * dtype.itemsize:
        raise ValueError(f"IDX file size does not match its header shape {shape}")
    return np.frombuffer(body, dtype=dtype).reshape(shape)


def load_mnist(path=None, *, max_rows: int | None = None, rng=None) -> Dataset:
    """MNIST images from a local file: IDX (``train-images-idx3-ubyte``, optionally .gz),
    NPZ (arrays ``x_train``, ``X`` or the first one) or CSV (785 columns: label first).

    The paper's preprocessing follows (D = 784; centred; divided by the max sample norm).
    """
    p = _path(path, "mnist")
    raw = _read_bytes(p)
    suffixes = "".join(p.suffixes).lower()
    if ".npz" in suffixes:
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
                key = next((k for k in ("x_train", "X", "x") if k in npz), npz.files[0])
                x = npz[key]
        except (ValueError, OSError, IndexError) as err:
            raise ValueError(f"{p.name} is not a readable NPZ file: {err}") from err
    elif ".csv" in suffixes:
        x = _parse_numeric_csv(raw, p.name, show_names=False).to_numpy()
        if x.shape[1] == 785:  # the common "label, pixel0 … pixel783" layout
            x = x[:, 1:]
    else:
        x = parse_idx(raw)
    x = np.asarray(x)
    if x.ndim == 3:
        x = x.reshape(x.shape[0], -1)
    if x.ndim != 2 or x.shape[1] != 784:
        raise ValueError(f"MNIST images must have 784 pixels (28×28); got shape {x.shape}")
    return dataset_from_array(
        x,
        name="mnist",
        max_rows=max_rows,
        rng=rng,
        description=f"MNIST from {p.name}: 28×28 images as 784 features; centred and divided "
        f"by the largest sample norm (non-private, as in the paper).",
    )


def load_covtype(path=None, *, rows: int = COVTYPE_ROWS, rng) -> Dataset:
    """UCI Covertype from ``covtype.data`` (or ``.gz``): 54 features and a label per row.

    The paper's preprocessing: a random ``rows`` (60,000) of the 581,012 rows, the label
    dropped, centred, divided by the largest sample norm.
    """
    p = _path(path, "covtype")
    rows = check_int(rows, "rows", low=MIN_ROWS)
    table = _parse_numeric_csv(_read_bytes(p), p.name, header=None, show_names=False)
    if table.shape[1] != 55:
        raise ValueError(
            f"covtype.data must have 55 comma-separated columns (54 features and the cover "
            f"type); got {table.shape[1]}"
        )
    x = table.to_numpy()[:, :54]
    return dataset_from_array(
        x,
        name="covtype",
        max_rows=rows,
        rng=rng,
        description=f"Covertype from {p.name}: {min(rows, x.shape[0]):,} random rows of "
        f"{x.shape[0]:,} × 54 features; centred and divided by the largest sample norm "
        f"(non-private, as in the paper).",
    )


MISSING = {"", "nan", "na", "n/a", "null", "none", "inf", "-inf", "+inf", "infinity"}


def _parse_numeric_csv(
    raw: bytes, source: str, header: str | None = "infer", *, show_names: bool = True
) -> pd.DataFrame:
    """Parse CSV text into an all-numeric table (NaN/inf kept), or explain what is wrong.

    The delimiter is the most frequent of , ; tab | in the first line (whitespace if none);
    a first row with a non-number in it is a header. Cells are only converted to numbers.
    """
    text = raw.decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise ValueError(f"{source} is empty")
    first = text.strip().splitlines()[0]
    sep = max([",", ";", "\t", "|"], key=first.count)
    if first.count(sep) == 0:
        sep = r"\s+" if len(first.split()) > 1 else ","
    try:
        cells = pd.read_csv(
            io.StringIO(text.strip()),
            sep=sep,
            header=None,
            dtype=str,
            engine="python",
            keep_default_na=False,
            skip_blank_lines=True,
        )
    except (pd.errors.ParserError, ValueError) as err:
        raise ValueError(f"{source} could not be parsed as a table: {err}") from err
    cells = cells.apply(lambda col: col.str.strip())
    first_row = [str(c) for c in cells.iloc[0]]
    if header == "infer" and not all(_is_number(c) or c.lower() in MISSING for c in first_row):
        dupes = sorted({c for c in first_row if first_row.count(c) > 1})
        if dupes:
            raise ValueError(
                f"{source} has duplicate column names: {dupes if show_names else len(dupes)}"
            )
        names, cells = first_row, cells.iloc[1:]
    else:
        names = [f"column {i + 1}" for i in range(cells.shape[1])]
    if cells.empty:
        raise ValueError(f"{source} has a header but no data rows")
    numbers = cells.apply(pd.to_numeric, errors="coerce")
    missing = cells.isna() | cells.apply(lambda col: col.str.lower().isin(MISSING))
    text_cells = numbers.isna() & ~missing
    bad = [names[i] for i in range(cells.shape[1]) if text_cells.iloc[:, i].any()]
    if bad:
        if cells.shape[1] == 1:
            raise ValueError(
                f"{source}: could not split the rows into numeric columns; use a comma, "
                f"semicolon, tab or | as the delimiter"
            )
        shown = ", ".join(bad[:5]) + (" …" if len(bad) > 5 else "")
        if not show_names:  # a file on the server: say how many, not what it contains
            shown = f"{len(bad)} of {cells.shape[1]}"
        raise ValueError(
            f"{source} has non-numeric columns: {shown}. Keep only numeric features "
            f"(rows = samples), e.g. drop label or name columns."
        )
    numbers.columns = names
    return numbers.astype(float)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_csv(raw: bytes, *, name: str = "upload", max_bytes: int = 50 * 2**20) -> Dataset:
    """A user's numeric table (rows = samples, optional header) as a :class:`Dataset`.

    Raises ValueError, naming the problem, for an empty or oversized file, a table that
    cannot be split into columns, duplicate column names, non-numeric columns, NaN/inf,
    fewer than MIN_ROWS rows, or more than MAX_DIM columns. The text is only parsed as
    numbers; nothing is evaluated or unpickled.
    """
    if not isinstance(raw, (bytes, bytearray)):
        raise TypeError(f"raw must be bytes; got {type(raw).__name__}")
    if len(raw) > max_bytes:
        raise ValueError(
            f"{name} is {len(raw) / 2**20:.1f} MiB; the limit is {max_bytes / 2**20:.0f} MiB"
        )
    table = _parse_numeric_csv(bytes(raw), name)
    if table.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 numeric columns for PCA; got 1")
    if table.shape[1] > MAX_DIM:
        raise ValueError(f"{name} must have at most {MAX_DIM} columns (D); got {table.shape[1]}")
    return dataset_from_array(
        table.to_numpy(),
        name=name,
        description=f"your table {name}: {table.shape[0]:,} samples × {table.shape[1]} "
        f"features, centred and divided by the largest sample norm (non-private).",
    )
