"""Real-data loaders on small files the tests write; no test needs the real MNIST/Covertype."""

import gzip
import os
import struct

import numpy as np
import pytest

from dpcore import pca_sweep
from dpcore.experiments.realdata import (
    BUNDLED,
    MAX_DIM,
    dataset_from_array,
    load_bundled,
    load_covtype,
    load_csv,
    load_mnist,
    parse_idx,
)


def _idx(images: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, images.ndim]) + b"".join(struct.pack(">I", n) for n in images.shape)
    return header + images.astype(np.uint8).tobytes()


@pytest.fixture
def images():
    return np.random.default_rng(0).integers(0, 256, (40, 28, 28), dtype=np.uint8)


def _check_preprocessing(ds, n, d):
    x = ds.samples
    assert x.shape == (n, d)
    np.testing.assert_allclose(x.mean(axis=0), 0, atol=1e-12)  # centred
    assert np.max(np.linalg.norm(x, axis=1)) == pytest.approx(1.0)  # scaled into the ball
    np.testing.assert_allclose(ds.reference, x.T @ x / n, rtol=1e-12)


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_idx_plain_and_gzip(tmp_path, images, compress):
    raw = _idx(images)
    path = tmp_path / ("train-images-idx3-ubyte" + (".gz" if compress else ""))
    path.write_bytes(gzip.compress(raw) if compress else raw)
    ds = load_mnist(path)
    _check_preprocessing(ds, 40, 784)
    flat = images.reshape(40, -1).astype(float)
    centred = flat - flat.mean(axis=0)
    np.testing.assert_allclose(ds.samples * np.max(np.linalg.norm(centred, axis=1)), centred)


def test_mnist_npz_csv_and_environment_variable(tmp_path, images, monkeypatch):
    flat = images.reshape(40, -1)
    np.savez(tmp_path / "mnist.npz", x_train=images)
    labels = np.arange(40)[:, None] % 10
    np.savetxt(tmp_path / "mnist.csv", np.hstack([labels, flat]), fmt="%d", delimiter=",")
    a = load_mnist(tmp_path / "mnist.npz")
    b = load_mnist(tmp_path / "mnist.csv")  # label column dropped
    np.testing.assert_allclose(a.samples, b.samples)
    monkeypatch.setenv("CAPE_MNIST", str(tmp_path / "mnist.npz"))
    np.testing.assert_allclose(load_mnist().samples, a.samples)
    sub = load_mnist(tmp_path / "mnist.npz", max_rows=15, rng=np.random.default_rng(1))
    assert sub.n_samples == 15


def test_covtype_random_rows_and_label_dropped(tmp_path):
    rng = np.random.default_rng(2)
    table = np.hstack([rng.integers(0, 100, (300, 54)), rng.integers(1, 8, (300, 1))])
    text = "\n".join(",".join(str(v) for v in row) for row in table).encode()
    (tmp_path / "covtype.data.gz").write_bytes(gzip.compress(text))
    ds = load_covtype(tmp_path / "covtype.data.gz", rows=120, rng=np.random.default_rng(3))
    _check_preprocessing(ds, 120, 54)
    again = load_covtype(tmp_path / "covtype.data.gz", rows=120, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(ds.samples, again.samples)  # same seed, same rows


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p: load_mnist(p / "nope.idx"), "mnist file not found"),
        (lambda p: load_mnist(None), "CAPE_MNIST"),
        (lambda p: load_covtype(p / "nope.data", rng=np.random.default_rng()), "not found"),
    ],
)
def test_missing_files(tmp_path, monkeypatch, call, match):
    monkeypatch.delenv("CAPE_MNIST", raising=False)
    with pytest.raises(ValueError, match=match):
        call(tmp_path)


def test_wrong_formats(tmp_path, images):
    (tmp_path / "bad.idx").write_bytes(b"\x00\x01\x02\x03garbage")
    with pytest.raises(ValueError, match="magic number"):
        load_mnist(tmp_path / "bad.idx")
    (tmp_path / "short.idx").write_bytes(_idx(images)[:-5])
    with pytest.raises(ValueError, match="does not match its header"):
        load_mnist(tmp_path / "short.idx")
    (tmp_path / "small.idx").write_bytes(_idx(images[:, :10, :10]))
    with pytest.raises(ValueError, match="784 pixels"):
        load_mnist(tmp_path / "small.idx")
    (tmp_path / "covtype.data").write_text("1,2,3\n4,5,6\n")
    with pytest.raises(ValueError, match="55 comma-separated columns"):
        load_covtype(tmp_path / "covtype.data", rng=np.random.default_rng())
    (tmp_path / "fake.gz").write_bytes(b"\x1f\x8bnot really gzip")
    with pytest.raises(ValueError, match="gzip"):
        load_mnist(tmp_path / "fake.gz")


def test_idx_round_trip():
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    np.testing.assert_array_equal(parse_idx(_idx(arr)), arr)


def _csv(rows) -> bytes:
    return "\n".join(rows).encode()


GOOD = ["a,b,c"] + [f"{i},{i * i % 7},{(3 * i) % 5}" for i in range(12)]


@pytest.mark.parametrize(
    "text",
    [
        _csv(GOOD),
        _csv([r.replace(",", ";") for r in GOOD]),
        _csv([r.replace(",", "\t") for r in GOOD]),
        _csv(GOOD[1:]),  # no header
        _csv([r.replace(",", " ") for r in GOOD[1:]]),  # whitespace-separated
    ],
    ids=["comma", "semicolon", "tab", "no-header", "spaces"],
)
def test_csv_accepted_layouts(text):
    ds = load_csv(text, name="t.csv")
    _check_preprocessing(ds, 12, 3)


# Issue #36: tables as spreadsheets in other locales save them. The same numbers, with a
# fractional part so that a decimal comma matters, must give the same data set.
FRACTIONS = ["a,b,c"] + [f"{i + 0.25},{i * i % 7 + 0.5},{(3 * i) % 5 - 0.75}" for i in range(12)]


def _decimal_comma(rows: list[str], sep: str) -> list[str]:
    return [r.replace(",", sep).replace(".", ",") for r in rows]


@pytest.mark.parametrize(
    "text",
    [
        _csv(_decimal_comma(FRACTIONS, ";")),
        _csv(_decimal_comma(FRACTIONS, "\t")),
        _csv(_decimal_comma(FRACTIONS[1:], ";")),  # no header: 0,25 is a number, not a name
    ],
    ids=["semicolon", "tab", "no-header"],
)
def test_decimal_comma_tables_are_read_as_numbers(text):
    want = load_csv(_csv(FRACTIONS), name="t.csv")
    got = load_csv(text, name="t.csv")
    np.testing.assert_array_equal(got.samples, want.samples)


def test_decimal_commas_that_cannot_be_read_get_a_hint():
    # comma-separated with quoted decimal commas: the delimiter and the decimal mark collide
    rows = [FRACTIONS[0]] + [",".join(f'"{c}"' for c in r.split(",")) for r in FRACTIONS[1:]]
    with pytest.raises(ValueError, match="non-numeric columns: a, b, c") as err:
        load_csv(_csv(_decimal_comma(rows, ",")).replace(b";", b","), name="t.csv")
    assert "decimal commas" in str(err.value) and "'.'" in str(err.value)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig", "utf-32"])
def test_unicode_tables_keep_their_column_names(encoding):
    # Excel's "Unicode text" is UTF-16 with a byte-order mark; utf-16-le/-be have none
    text = "\n".join(FRACTIONS).replace("a,b", "größe,b")
    got = load_csv(text.encode(encoding), name="t.csv")
    want = load_csv(text.encode("utf-8"), name="t.csv")
    np.testing.assert_array_equal(got.samples, want.samples)
    # the names reach the user in messages: a text column is named as written
    bad = text.replace("0.25,", "x,", 1).replace("größe", "größe")
    with pytest.raises(ValueError, match="non-numeric columns: größe"):
        load_csv(bad.encode(encoding), name="t.csv")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (b"", "empty"),
        (b"   \n\n", "empty"),
        (_csv(["a,b,c"]), "no data rows"),
        (_csv([r.replace(",", "|").replace("|", ":") for r in GOOD]), "could not split"),
        (_csv(["a,name,c"] + [f"{i},x{i},{i}" for i in range(12)]), "non-numeric columns: name"),
        (_csv([*GOOD[:5], "1,nan,2", *GOOD[5:]]), "NaN/inf"),
        (_csv([*GOOD[:5], "1,inf,2", *GOOD[5:]]), "NaN/inf"),
        (_csv([*GOOD[:5], "1,,2", *GOOD[5:]]), "NaN/inf"),
        (_csv(GOOD[:2]), "at least 10 rows"),
        (_csv(["a"] + [str(i) for i in range(12)]), "at least 2 numeric columns"),
        (_csv(["a,a,c", *GOOD[1:]]), "duplicate column names"),
        (_csv([",".join(["1"] * (MAX_DIM + 1))] * 12), f"at most {MAX_DIM} columns"),
        (_csv([*GOOD[:4], "1,2,3,4", *GOOD[4:]]), "could not be parsed"),
        (_csv(["a,b"] + ["1,1"] * 12), "must vary"),
    ],
    ids=[
        "empty",
        "blank",
        "header-only",
        "wrong-delimiter",
        "text-column",
        "nan",
        "inf",
        "empty-cell",
        "one-row",
        "one-column",
        "duplicate-header",
        "huge-D",
        "ragged",
        "constant",
    ],
)
def test_csv_rejected_with_a_clear_message(text, match):
    with pytest.raises(ValueError, match=match):
        load_csv(text, name="t.csv")


def test_csv_size_limit_and_type():
    with pytest.raises(ValueError, match="limit"):
        load_csv(b"1,2\n" * 100, max_bytes=10)
    with pytest.raises(TypeError, match="bytes"):
        load_csv("1,2\n3,4")


@pytest.mark.parametrize(
    "name",  # the 5,000 × 784 MNIST subset's PCA takes over a second (the fast lane's rule)
    [pytest.param(n, marks=pytest.mark.slow) if n == "mnist_5k" else n for n in BUNDLED],
)
def test_bundled_sets_and_pca_on_them(name):
    ds = load_bundled(name)
    assert ds.dim in (64, 30, 13, 784) and ds.n_samples >= 178
    _check_preprocessing(ds, ds.n_samples, ds.dim)
    # captured energy is measured against the pool's own second moment: with no noise the
    # pooled estimate of a large subsample captures nearly all of the optimum
    df = pca_sweep(
        data=ds,
        k=3,
        sites=2,
        n_per_site=ds.n_samples // 2,
        epsilon=1e6,
        runs=1,
        algorithms=["nonprivate"],
        calibration="analytic",
    )
    assert df.captured_energy_ratio.iloc[0] > 0.97


def test_dataset_from_array_rejects_non_numeric_and_wrong_shapes():
    with pytest.raises(ValueError, match="2-D"):
        dataset_from_array(np.zeros(20), name="x")
    with pytest.raises(ValueError, match="real numbers"):
        dataset_from_array(np.array([["a", "b"]] * 20), name="x")
    with pytest.raises(ValueError, match="needs an rng"):
        dataset_from_array(np.random.default_rng(0).normal(size=(30, 3)), name="x", max_rows=10)


def test_hostile_paths_and_oversized_files(tmp_path):
    from dpcore.experiments.realdata import _read_bytes

    with pytest.raises(ValueError, match="cannot be opened"):
        load_mnist("a" * 5000)  # found by the app fuzz test: OSError "name too long"
    with pytest.raises(ValueError, match="not found"):
        load_mnist(tmp_path)  # a directory
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * 2048)
    with pytest.raises(ValueError, match="larger than"):
        _read_bytes(big, limit=1024)
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"\0" * 4096))
    with pytest.raises(ValueError, match="decompresses to more than"):
        _read_bytes(bomb, limit=1024)


def test_server_files_are_not_echoed_in_errors(tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("password,token\n" + "\n".join("hunter2,abc" for _ in range(20)))
    with pytest.raises(ValueError) as err:
        load_mnist(secret)
    assert "hunter2" not in str(err.value) and "password" not in str(err.value)


# --- issue #12: the data directory, one refusal, no content echoed -------------------------


@pytest.fixture
def data_dir(tmp_path, images):
    root = tmp_path / "data"
    root.mkdir()
    (root / "mnist.idx").write_bytes(_idx(images))
    (root / "sub").mkdir()
    (root / "sub" / "inner.idx").write_bytes(_idx(images))
    (root / ".hidden.idx").write_bytes(_idx(images))
    (root / "inside-link.idx").symlink_to(root / "mnist.idx")
    outside = tmp_path / "outside.idx"
    outside.write_bytes(_idx(images))
    (root / "outside-link.idx").symlink_to(outside)
    (root / "passwd").symlink_to("/etc/passwd")
    os.mkfifo(root / "fifo.idx")
    return root


def test_only_regular_files_inside_the_data_directory_are_listed(data_dir):
    from dpcore.experiments.realdata import data_files

    assert data_files(data_dir) == ["inside-link.idx", "mnist.idx"]


def test_every_refusal_outside_the_data_directory_reads_the_same(data_dir, tmp_path):
    # Issue #12: missing and existing files got different messages, so anyone could probe
    # the disk. Inside the directory: the data set; anything else: one identical sentence.
    assert load_mnist("mnist.idx", data_dir=data_dir).dim == 784
    assert load_mnist("inside-link.idx", data_dir=data_dir).dim == 784
    names = [
        "missing.idx",
        "sub",
        "sub/inner.idx",
        "../outside.idx",
        str(tmp_path / "outside.idx"),
        "outside-link.idx",
        "passwd",
        "/etc/passwd",
        "/proc/kmsg",
        "fifo.idx",
        "~nosuchuser/x",
        "a\0b",
        "x" * 5000,
        ".",
        "",
        None,
    ]
    messages = set()
    for name in names:
        with pytest.raises(ValueError) as err:
            load_mnist(name or "missing", data_dir=data_dir)
        messages.add(str(err.value))
    with pytest.raises(ValueError) as err:
        load_covtype("/etc/passwd", data_dir=data_dir, rng=np.random.default_rng())
    assert len(messages) == 1, messages
    assert "passwd" not in str(err.value)


def test_locate_refuses_as_the_loader_does_without_reading(data_dir, monkeypatch):
    from dpcore.experiments.realdata import locate

    assert locate("mnist", "mnist.idx", data_dir=data_dir) == data_dir / "mnist.idx"
    for name in ("missing.idx", "../outside.idx", "/etc/passwd", "sub", "x" * 5000):
        with pytest.raises(ValueError) as located:
            locate("mnist", name, data_dir=data_dir)
        with pytest.raises(ValueError) as loaded:
            load_mnist(name, data_dir=data_dir)
        assert str(located.value) == str(loaded.value)
    with pytest.raises(ValueError, match="kind must be one of"):
        locate("wine", "x")
    # The app: a missing MNIST file is refused in the server, with no child process started
    # (the first Paper figures load on a fresh server paid ~2 s for one).
    from ui.cached import data as cached

    def no_child(*args, **kwargs):
        raise AssertionError("a child process was started for a missing file")

    monkeypatch.setattr(cached, "load_blocking", no_child)
    dataset, why = cached._load_outcome("mnist", "missing.idx", directory=str(data_dir))
    assert dataset is None and why.startswith("mnist file")


def test_a_fifo_never_blocks_a_read(tmp_path):
    # /proc/kmsg held a server thread forever: reads are non-blocking and regular files only
    import threading

    from dpcore.experiments.realdata import _read_bytes

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    errors = []

    def read():
        try:
            _read_bytes(fifo)
        except ValueError as err:
            errors.append(str(err))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive() and errors and "not a regular file" in errors[0]


def test_file_contents_never_reach_a_message(tmp_path):
    import io
    import zipfile

    secret = b"hunter2!"
    # an IDX-looking header whose sizes decode to the secret
    (tmp_path / "secret.idx").write_bytes(bytes([0, 0, 8, 3]) + secret + b"\0\0\0\x01x")
    # an .npz whose header declares 7 TiB, and one whose header is garbage
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**12, 784)}
    )
    for name, member in (("huge.npz", header.getvalue()), ("junk.npz", b"\x93NUMPY" + secret)):
        blob = io.BytesIO()
        with zipfile.ZipFile(blob, "w") as archive:
            archive.writestr("x.npy", member)
        (tmp_path / name).write_bytes(blob.getvalue())
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b\x08\x00" + secret * 10)
    numbers = [str(int.from_bytes(secret[i : i + 4], "big")) for i in (0, 4)]
    for name in ("secret.idx", "huge.npz", "junk.npz", "bad.gz"):
        with pytest.raises(ValueError) as err:
            load_mnist(tmp_path / name)
        message = str(err.value)
        assert "hunter2" not in message and not any(n in message for n in numbers), message


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (b"1," * 40_000 + b"1\n", "line of 80,001 bytes"),
        (b"\n".join([b",".join([b"1"] * 1001)] * 3), "at most 1000 columns"),
        (b"1,2\n" * 2_600_000, "the limit is 5,000,000 cells"),
    ],
    ids=["long-line", "wide", "many-cells"],
)
def test_upload_shape_is_checked_before_parsing(text, match):
    from dpcore.experiments.realdata import check_csv_bytes

    with pytest.raises(ValueError, match=match):
        check_csv_bytes(text, "t.csv")
    with pytest.raises(ValueError, match=match):
        load_csv(text, name="t.csv")
