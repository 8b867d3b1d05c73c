"""CAPE on Flower (#37): real SuperLink/SuperNode processes on 127.0.0.1.

Skipped without flwr (the `federated` extra; requirements-dev.txt has it, so CI runs them).
The federation (SuperLink, noise generator, 3 unequal sites) is started once per module; runs
are submitted to it with ``flwr run``. Every federation test is in one xdist group, so one
worker runs them in turn. Ports: 9190 (SuperLink) and 9191 (the nodes' runtime APIs, at
127.0.0.2, 127.0.0.3, …); the one command with 10 sites uses 9192 and 9193.
"""

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr")
pytest.importorskip("cryptography")

from cryptography.exceptions import InvalidTag

from dpcore.factorization.costs import communication_cost
from federated import sealing
from federated.launcher import ROOT, Federation, demo_data
from federated.protocol import (
    Refusal,
    check_release,
    from_bytes,
    read_site_csv,
    simulate,
    to_bytes,
)
from federated.runlog import payload_bytes, read_log
from learning.run_replay import replay_steps, site_count

SEED = 20240537
EPS = [0.5, 1.0, 2.0]  # unequal sites: N_s = 250, 350, 450 and three ε's
DELTA = [1e-5, 1e-5, 1e-6]
DIM = 4
PORT = 9190
START_LIMIT = 240.0  # this machine has 2 cores shared with other sessions
RUN_LIMIT = 240.0
# How long the aggregator waits for each round's answers in the fault tests: a sound round
# takes 1-8 s here (docs/federated.md, "Time"), even with other jobs loading both cores.
FAULT_TIMEOUT = 20.0


# --- without a network ---------------------------------------------------------------------


def test_sealed_e_opens_only_at_its_site_and_unchanged():
    """The aggregator (any other key) cannot open E_s; a changed byte or context fails."""
    ng_private, ng_public = sealing.keypair()
    site_private, site_public = sealing.keypair()
    agg_private, _ = sealing.keypair()
    e = to_bytes(np.array([0.25, -1.5, 3.0]))
    ctx = sealing.context_for(7, 2, (3,))
    sealed = sealing.seal(ng_private, site_public, e, ctx)
    assert sealing.open_sealed(site_private, ng_public, sealed, ctx) == e
    assert e not in sealed
    with pytest.raises(InvalidTag):
        sealing.open_sealed(agg_private, ng_public, sealed, ctx)
    with pytest.raises(InvalidTag):
        sealing.open_sealed(site_private, ng_public, sealed, sealing.context_for(7, 3, (3,)))
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(InvalidTag):
        sealing.open_sealed(site_private, ng_public, tampered, ctx)


def test_two_sites_derive_the_same_pair_seed_and_the_relay_cannot():
    """X25519: sites s and t get one seed from either end; another key, run or pair differs."""
    (a_priv, a_pub), (b_priv, b_pub), (c_priv, _) = (sealing.keypair() for _ in range(3))
    seed = sealing.pair_seed(a_priv, b_pub, 7, 0, 1)
    assert seed == sealing.pair_seed(b_priv, a_pub, 7, 1, 0)
    assert seed != sealing.pair_seed(c_priv, b_pub, 7, 0, 1)  # the aggregator's own key
    assert seed != sealing.pair_seed(a_priv, b_pub, 8, 0, 1)
    assert seed != sealing.pair_seed(a_priv, b_pub, 7, 0, 2)
    assert sealing.public_of(a_priv) == a_pub


def test_bad_releases_are_refused_by_name():
    good = np.eye(2)
    check_release("site 1", good, (2, 2), True)
    cases = [
        (np.eye(3), "shape"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
    ]
    for value, match in cases:
        with pytest.raises(Refusal, match=f"site 2: .*{match}"):
            check_release("site 2", value, (2, 2), True)
    with pytest.raises(ValueError, match="shape"):
        from_bytes(b"\0" * 24, (2, 2))


def test_csv_row_of_norm_above_one_is_refused(tmp_path):
    path = tmp_path / "site.csv"
    path.write_text("0.1,0.2\n0.9,0.9\n")
    with pytest.raises(ValueError, match=r"site.csv: row 2 has norm 1.27"):
        read_site_csv(path)


def test_payload_bytes_counts_arrays_keys_and_numbers():
    assert payload_bytes({"a": b"x" * 32, "b": [1.0, 2.0], "c": "ab", "d": [b"yy", b"z"]}) == 53


# --- a real federation ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    work = tmp_path_factory.mktemp("flower")
    data = demo_data(work / "data", 3, dim=DIM, seed=1)
    fed = Federation(data, EPS, DELTA, seed=SEED, port=PORT, workdir=work, allow_test_faults=True)
    with fed:
        fed.start(time.monotonic() + START_LIMIT)
        yield fed


# Three configurations of unequal sites (N_s and the data differ; ε_s, δ_s are each site's
# node config, unequal): A is the fixture's demo data, B and C rewrite the sites' CSVs.
SITE_ROWS = {"A": None, "B": (40, 900, 120), "C": (1000, 30, 300)}
# Every (scheme, kind, design) once; each configuration sees both kinds and both designs.
CASES = [
    ("A", "helper", "mean", "joint"),
    ("A", "helper", "mean", "cape"),
    ("A", "helper", "pca", "joint"),
    ("A", "helper", "pca", "cape"),
    ("B", "pairwise", "mean", "joint"),
    ("B", "pairwise", "pca", "cape"),
    ("C", "pairwise", "mean", "cape"),
    ("C", "pairwise", "pca", "joint"),
]
RESULTS = {}  # (kind, design) -> (outcome, log entries): the log test reads a run made here


def _run(federation, *, kind="mean", design="joint", fault="", timeout=120.0, scheme="helper"):
    tag = f"{scheme}-{kind}-{design}-{fault.replace(':', '-').replace(',', '_')}"
    output, log = federation.submit(
        kind=kind, design=design, fault=fault, timeout=timeout, tag=tag, scheme=scheme
    )
    result = federation.wait(output, time.monotonic() + RUN_LIMIT, tag=tag)
    return result, read_log(log)


def _site_data(federation, config):
    """Rewrite the sites' CSVs for a configuration (rows of norm ≤ 1, unequal N_s)."""
    rows = SITE_ROWS[config]
    if rows is None:
        return
    rng = np.random.default_rng(len(config) + sum(rows))
    for path, n in zip(federation.data, rows, strict=True):
        x = rng.standard_normal((n, DIM)) * np.linspace(1.0, 0.3, DIM) + 0.2
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
        np.savetxt(path, x, delimiter=",", fmt="%.17g")


@pytest.fixture
def site_config(federation):
    """Give a test a configuration; the fixture's data (A) again afterwards."""
    saved = [p.read_text() for p in federation.data]
    yield lambda config: _site_data(federation, config)
    for path, text in zip(federation.data, saved, strict=True):
        path.write_text(text)


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
@pytest.mark.parametrize(("config", "scheme", "kind", "design"), CASES)
def test_distributed_release_equals_in_process_run(
    federation, site_config, config, scheme, kind, design
):
    """Same seed, files and (ε_s, δ_s): the release of dpcore.cape_average (helper) or
    dpcore.protocol.pairwise.pairwise_average (pairwise) to 1e-12 relative."""
    site_config(config)
    outcome = _run(federation, kind=kind, design=design, scheme=scheme)
    if config == "A":
        RESULTS[kind, design] = outcome
    result, entries = outcome
    assert result["ok"], result
    got = result["release"]
    ref = simulate(
        federation.data, kind=kind, design=design, epsilon=EPS, delta=DELTA, seed=SEED,
        scheme=scheme,
    )  # fmt: skip
    assert ref.n_samples == tuple(got["n_samples"])
    est = np.array(got["estimate"])
    scale = np.max(np.abs(ref.estimate))
    assert np.max(np.abs(est - ref.estimate)) <= 1e-12 * scale
    # and it is a noisy release, not the pooled value: the noise std is τ_agg > 0
    assert ref.tau_agg > 0 and got["tau_agg"] == ref.tau_agg
    if kind == "pca":
        sub = np.array(got["subspace"])
        np.testing.assert_allclose(sub @ sub.T, ref.subspace @ ref.subspace.T, atol=1e-12)
    # the pairwise scheme has no noise round: the noise generator is greeted, never asked
    noise_messages = [e for e in entries if e["round"] == "noise"]
    assert len(noise_messages) == (0 if scheme == "pairwise" else 2)


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_run_log_has_every_message_with_its_size(federation):
    """3 rounds: hello to 4 nodes and back, 2 noise messages, 3 releases out and back."""
    if ("pca", "joint") not in RESULTS:
        RESULTS["pca", "joint"] = _run(federation, kind="pca", design="joint")
    _, entries = RESULTS["pca", "joint"]
    messages = [e for e in entries if e["round"] != "end"]
    rounds = [e["round"] for e in messages]
    assert rounds.count("hello") == 8 and rounds.count("noise") == 2
    assert rounds.count("release") == 6
    assert entries[-1]["kind"] == "release"
    times = [e["time"] for e in entries]
    assert times == sorted(times)
    back = [e for e in messages if e["round"] == "release" and e["receiver"] == "aggregator"]
    # dpcore's cost model (Sec. 4): the sites send S D×D matrices in all, 8 bytes a real;
    # each Â_s message adds its shape (two numbers) to its D² reals
    reals = communication_cost("cape", problem="pca", dim=DIM, k=2, sites=3)
    assert sum(e["bytes"] - 16 for e in back) == 8 * reals["sites"]
    assert {e["sender"] for e in back} == {"site 1", "site 2", "site 3"}
    # the noise generator's sealed E_s: D² reals each + 12-byte nonce + 16-byte tag, + its key
    (sealed,) = [e for e in messages if e["round"] == "noise" and e["sender"] != "aggregator"]
    assert sealed["bytes"] == 8 * reals["noise generator"] + 3 * (12 + 16) + 32


def _refused(result, parties):
    assert not result["ok"] and "release" not in result, result
    assert result["party"] == ", ".join(parties), result


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_bad_releases_are_refused_naming_every_site(federation):
    """Site 1 sends NaN, site 2 a wrong shape (site 3 is sound): nothing released. With the
    pairwise scheme: the sound Â_3 alone would carry its uncancelled pair noise."""
    result, entries = _run(
        federation, fault="site1:nan,site2:shape", timeout=FAULT_TIMEOUT, scheme="pairwise"
    )
    _refused(result, ["site 1", "site 2"])
    assert "site 1: sent a value with NaN" in result["reason"]
    assert "site 2: sent a value of shape (3,)" in result["reason"]
    assert entries[-1]["kind"] == "refusal"
    # site 3's sound Â_s reached the aggregator and was not published alone
    assert any(e["sender"] == "site 3" and e["round"] == "release" for e in entries)


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_sites_refuse_a_tampered_e_and_a_lowered_tau_from_the_relay(federation):
    """The aggregator flips a bit of site 1's sealed E_1 (AEAD: it does not open) and tells
    site 2 its τ is half (less E and F for it): both sites refuse, nothing is released."""
    result, entries = _run(federation, fault="relay:tamper1,relay:tau2")
    _refused(result, ["site 1", "site 2"])
    assert "site 1: failed in the release step" in result["reason"]
    assert "site 2: failed in the release step" in result["reason"]
    assert "this site needs" in result["reason"]  # site 2 names the τ it needs
    assert entries[-1]["kind"] == "refusal"


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_row_of_norm_above_one_and_other_version_are_refused(federation):
    """Site 1's CSV gains a row of norm 1.136; site 3 speaks another protocol version."""
    path = federation.data[0]
    saved = path.read_text()
    try:
        path.write_text(saved + "0.8,0.8,0.1,0.0\n")
        result, _ = _run(federation, fault="site3:version")
    finally:
        path.write_text(saved)
    _refused(result, ["site 1", "site 3"])
    assert "row 251 has norm 1.13578" in result["reason"]
    assert "site 3: speaks protocol 'cape-flower/0'" in result["reason"]


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_crashed_silent_and_killed_sites_are_refused(federation):
    """Mid-round: site 1's ClientApp dies (os._exit), site 2's never answers, and site 3's
    SuperNode is SIGKILLed once the release requests are out. Runs last (site 3 is gone)."""
    started = time.monotonic()
    output, log = federation.submit(
        kind="mean", design="joint", fault="site1:crash,site2:hang", timeout=FAULT_TIMEOUT,
        tag="kill",
    )  # fmt: skip
    while not any(e["round"] == "release" for e in _entries(log)):
        assert time.monotonic() < started + RUN_LIMIT
        time.sleep(0.1)
    federation.kill("site 3")  # the release requests are out: site 3 dies mid-round
    result = federation.wait(output, started + RUN_LIMIT, tag="kill")
    _refused(result, ["site 1", "site 2", "site 3"])
    wait = f"did not answer the release request within {FAULT_TIMEOUT:g} s"
    assert f"site 2: {wait}" in result["reason"]
    assert f"site 3: {wait}" in result["reason"]


def _entries(path):
    return read_log(path) if path.exists() else []


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_the_one_command_with_ten_sites(tmp_path):
    """`python -m federated run --sites 10 --kind pca`: released, equal to the in-process
    run, and everything it started stopped.

    The log has 11 hellos each way, 2 noise messages and 10 releases each way, and the
    sites' Â_s carry the reals of dpcore's cost model for S = 10 (SD², Sec. 4).
    """
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "federated", "run", "--sites", "10", "--kind", "pca", "--seed", "3",
         "--port", str(PORT + 2), "--workdir", str(tmp_path), "--timeout", "200"],
        cwd=ROOT, capture_output=True, text=True, timeout=260,
    )  # fmt: skip
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    diff = re.search(r"max relative difference (\S+)", done.stdout)
    assert diff and float(diff.group(1)) <= 1e-12, done.stdout
    assert "Nothing was released" not in done.stdout
    entries = read_log(tmp_path / "run-log.jsonl")
    rounds = [e["round"] for e in entries]
    assert rounds.count("hello") == 22 and rounds.count("noise") == 2
    assert rounds.count("release") == 20 and entries[-1]["kind"] == "release"
    back = [e for e in entries if e["round"] == "release" and e["receiver"] == "aggregator"]
    reals = communication_cost("cape", problem="pca", dim=4, k=2, sites=10)
    assert sum(e["bytes"] - 16 for e in back) == 8 * reals["sites"]
    # the protocol stepper replays this real log: one step per message, every party named
    steps = replay_steps(entries)
    assert len(steps) == len(entries) and site_count(entries) == 10
    named = {p for st in steps if st.message for p in st.message[:2]}
    assert named == {"aggregator", "noise generator", *(f"site {s}" for s in range(1, 11))}
    # everything it started is gone: no process still has the work directory in its command
    assert not _processes_mentioning(str(tmp_path)), _processes_mentioning(str(tmp_path))
    print(f"10 sites: {wall:.1f} s for the whole command")


def _processes_mentioning(text):
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found
