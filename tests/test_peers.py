"""The peers benchmark (issue #39, item 4): `python -m benchmarks.peers` gives one table of
dpcore's central and distributed PCA and the optional peer libraries, skipping a peer that
does not import."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from benchmarks import peers

ARGS = ["--data", "synthetic", "--runs", "3", "--epsilon", "1,1000", "--sites", "2"]


def test_the_table_has_our_entries_and_skips_an_absent_peer(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)  # "not installed" (ImportError)
    monkeypatch.setitem(sys.modules, "opendp", None)
    assert peers.main(ARGS) == 0
    out = capsys.readouterr().out
    for name in peers.OURS:
        assert sum(line.split()[0] == name for line in out.splitlines()[1:] if line.split()) == 2
    assert out.count("skipped (") == 4  # two peers × two ε, one line each
    assert "No module named 'opendp" in out
    # at ε = 1000 the noise is negligible: every one of ours captures the optimum
    table = peers.table(peers_args(ARGS))
    big = table[(table.epsilon == 1000) & table.algorithm.isin(peers.OURS)]
    assert all(float(c.split(" ± ")[0]) > 0.99 for c in big.captured)


def peers_args(argv, data="synthetic"):
    import argparse

    ns = argparse.Namespace(data=data, delta=1e-5, k=2, sites=2, runs=3, seed=0)
    ns.epsilon = [float(e) for e in argv[argv.index("--epsilon") + 1].split(",")]
    return ns


def test_a_present_peer_is_scored_on_the_same_data(monkeypatch):
    # a stand-in diffprivlib whose PCA returns the exact top-K: the plumbing scores it 1
    class PCA:
        def __init__(self, n_components, **kwargs):
            self.k = n_components

        def fit(self, x):
            vals, vecs = np.linalg.eigh(x.T @ x)
            self.components_ = vecs[:, np.argsort(vals)[::-1][: self.k]].T
            return self

    fake = types.ModuleType("diffprivlib")
    fake.models = types.SimpleNamespace(PCA=PCA)
    monkeypatch.setitem(sys.modules, "diffprivlib", fake)
    monkeypatch.setitem(sys.modules, "diffprivlib.models", fake.models)
    monkeypatch.setitem(sys.modules, "opendp", None)
    pytest.importorskip("sklearn")  # the bundled set
    table = peers.table(peers_args(["--epsilon", "1"], data="wine"))
    (row,) = table[table.algorithm == "diffprivlib"].itertuples()
    # the pool's own top-K against its reference (the pool's second moment): the optimum
    assert row.captured == "1.000 ± 0.000"
    assert row.privacy == peers.NOTION["diffprivlib"]
