"""The peers benchmark (issues #39, #52): `python -m benchmarks.peers` gives one replace-one
table of dpcore's PCA and the peer libraries, each peer run in its own interpreter; a peer that
cannot run, or runs past the time limit, is a row that says why."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from benchmarks import peers

ARGS = ["--data", "synthetic", "--draws", "2", "--runs", "1", "--sites", "2"]

# A stand-in worker speaking the real one's protocol: the exact top-K of XᵀX (score 1), or a
# sleep past the parent's timeout ("slow"), or an error line before any fit ("broken").
FAKE = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    lib, path, eps, k, runs, seed = sys.argv[1:]
    if lib == "opendp":
        print(json.dumps({"error": "ImportError: broken"}), flush=True); sys.exit(0)
    print(json.dumps({"ready": lib}), flush=True)
    draws = np.load(path)
    for d in range(len(draws.files)):
        x = draws[f"x{d}"]
        for r in range(int(runs)):
            if float(eps) > 100:
                time.sleep(30)
            vals, vecs = np.linalg.eigh(x.T @ x)
            top = vecs[:, np.argsort(vals)[::-1][: int(k)]].T
            print(json.dumps({"draw": d, "run": r, "seconds": 0.5, "components": top.tolist()}),
                  flush=True)
    """
)


def test_our_rows_are_replace_one_and_a_missing_environment_says_what_to_run(capsys, tmp_path):
    assert peers.main([*ARGS, "--epsilon", "1,1000", "--peers-python", str(tmp_path / "no")]) == 0
    out = capsys.readouterr().out
    assert "every row replace-one" in out
    rows = [
        line.split(" | ")
        for line in out.splitlines()
        if line.startswith("| ") and "---" not in line
    ]
    names = [r[0].strip("| ") for r in rows[1:]]
    assert sorted(names) == sorted([*peers.OURS, *peers.PEERS] * 2)
    assert out.count("`bash scripts/peers_env.sh` makes it") == 4  # two peers × two ε
    # the pure-ε rows come first at each ε and say so
    for r in rows[1:]:
        assert (r[1] == "ε-DP") == (r[0].strip("| ") in peers.PURE)


def test_at_a_huge_epsilon_ours_capture_the_optimum():
    args = peers.parse([*ARGS, "--epsilon", "1000", "--peers-python", "/nonexistent"])
    data = peers.draws("synthetic", 2, 2, 0)
    for name in peers.OURS:
        row = peers.ours(name, data, args, 1000.0)
        # DP-PCA's pass takes one Oja step per block: two blocks do not converge
        # (its noiseless convergence is tests/core/factorization/test_dppca.py's)
        floor = 0.6 if name == "dp_pca" else 0.99
        assert len(row.scores) == 2 and min(row.scores) > floor, (name, row)


@pytest.mark.slow  # three worker interpreters (numpy imports) and a 2 s timeout: ~9 s
def test_a_peer_is_scored_on_the_same_draws_and_a_slow_or_broken_one_says_why(
    tmp_path, monkeypatch
):
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE)
    monkeypatch.setattr(peers, "WORKER", worker)
    args = peers.parse(
        [*ARGS, "--epsilon", "1", "--peers-python", sys.executable, "--fit-timeout", "2"]
    )
    pytest.importorskip("sklearn")  # the bundled set: its reference is its rows' second moment
    data = peers.draws("wine", 2, 2, 0)
    exact = peers.peer("diffprivlib", data, args, 1.0)
    # each draw's own top-K against that draw's reference: the optimum, on both draws
    assert exact.why == "" and exact.seconds == 0.5
    np.testing.assert_allclose(exact.scores, [1.0, 1.0], atol=1e-9)
    broken = peers.peer("opendp", data, args, 1.0)
    assert broken.scores == () and broken.why == "not run: ImportError: broken"
    slow = peers.peer("diffprivlib", data, args, 1000.0)
    assert slow.scores == () and slow.why.startswith("no fit within 2 s at ε = 1000")


@pytest.mark.parametrize("name", ["wine"])
def test_a_data_draw_is_a_random_ninety_percent_of_the_rows_split_evenly(name):
    pytest.importorskip("sklearn")
    a, b = peers.draws(name, 2, 4, 0)
    assert a.n_samples == b.n_samples == 160  # ⌊0.9 · 178⌋ rounded down to a multiple of 4
    assert not np.allclose(a.reference, b.reference)
    assert np.linalg.norm(a.samples, axis=1).max() <= 1 + 1e-12
    np.testing.assert_allclose(a.samples.mean(axis=0), 0.0, atol=1e-12)
