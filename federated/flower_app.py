"""The Flower app: the ServerApp is the aggregator, each SuperNode a site or the noise generator.

Three rounds of Flower's Message API (``grid.send_and_receive``), Algorithm 1 of Imtiaz &
Sarwate (steps 1–8) with the noise generator of Alg. 5:

1. ``hello`` (aggregator → every node): each node answers its role, protocol version and a
   fresh X25519 public key; a site also its N_s, D and (ε_s, δ_s) — never its data.
2. ``noise`` (aggregator → noise generator): the sites' τ_s, N_s and public keys; it draws
   every E_s (Σ μ_s E_s = 0) and answers each sealed to its site (:mod:`federated.sealing`).
3. ``release`` (aggregator → site s): the sealed E_s (relayed, unreadable to the aggregator)
   and the aggregator's F_s; the site draws G_s and answers Â_s = a_s + E_s + F_s + G_s.

The aggregator then publishes Σ μ_s (Â_s − F_s) (and its top-K eigenvectors for capePCA),
or refuses, naming the party, if anything is missing or malformed: a missing Â_s would leave
its E_s uncancelled, so nothing is released rather than a value with the wrong noise.

Node config (``flower-supernode --node-config``): ``role`` ("site" or "noise"), and for a
site ``site`` (1-based index), ``data`` (its CSV), ``epsilon``, ``delta``; optional ``seed``
(≥ 0 reproduces the in-process run; secret in production, fresh entropy if absent).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from cryptography.exceptions import InvalidTag
from flwr.app import ConfigRecord, ConfigRecordValues, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from dpcore import (
    aggregator_step,
    dropout_analysis,
    dropout_correction,
    noise_generator_step,
    pair_noise_step,
    pair_rng,
    party_rng,
    site_step,
)
from federated import identity, sealing
from federated.protocol import (
    DESIGNS,
    KINDS,
    PROTOCOL_VERSION,
    SCHEMES,
    DataRuleError,
    Refusal,
    Release,
    check_release,
    finish,
    finish_after_dropout,
    from_bytes,
    make_design,
    read_site_csv,
    relayed_problem,
    remedy_rng,
    shape_of,
    site_statistic,
    site_tau,
    to_bytes,
    write_result,
)
from federated.runlog import RunLog

server_app = ServerApp()
client_app = ClientApp()
AGG = "aggregator"
NOISE = "noise generator"
REPLY_POLL = 0.1  # seconds between the aggregator's asks for replies
TEST_FAULTS = ("nan", "shape", "hang", "crash", "version", "impostor")
HANG_AFTER = 5.0  # a hanging site answers this many seconds after the aggregator's timeout
LATE_WAIT = 60.0  # how long the tests' dishonest aggregator waits for late releases


def _stream(seed: int, party: str, site: int = 0) -> np.random.Generator:
    """The party's noise stream: dpcore's for a seed ≥ 0, else fresh OS entropy."""
    return party_rng(seed, party, site) if seed >= 0 else np.random.default_rng()


def _message(fields: dict[str, Any], node: int, kind: str, ttl: float) -> Message:
    """A request that expires with its round: Flower's SuperLink drops a reply that would
    outlive it, and a site refuses to answer one past its deadline (:func:`past_deadline`)."""
    content = RecordDict({"cape": ConfigRecord(fields)})
    return Message(content, dst_node_id=node, message_type=kind, ttl=ttl)


def past_deadline(msg: Message, now: float | None = None) -> bool:
    """Whether the request's deadline (its creation time + its ttl) has passed."""
    meta = msg.metadata
    return (time.time() if now is None else now) > meta.created_at + meta.ttl


def _reply(fields: dict[str, Any], to: Message) -> Message:
    return Message(RecordDict({"cape": ConfigRecord(fields)}), reply_to=to)


def _fields(msg: Message) -> dict[str, Any]:
    return dict(msg.content["cape"])


# --- the aggregator ------------------------------------------------------------------------------


Spec = tuple[str, str, str]  # one release: (kind, design, scheme)


def parse_releases(text: str, kind: str, design: str, scheme: str) -> list[Spec]:
    """The run config's ``releases``: ``kind:design:scheme`` items, comma-separated; empty:
    the one release of ``kind``, ``design`` and ``scheme``. Raises ValueError naming a bad item."""
    items = [item.strip() for item in str(text).split(",") if item.strip()]
    specs = [tuple(item.split(":")) for item in items] or [(kind, design, scheme)]
    for spec in specs:
        if (
            len(spec) != 3
            or spec[0] not in KINDS
            or spec[1] not in DESIGNS
            or spec[2] not in SCHEMES
        ):
            raise ValueError(
                f"run config releases: each item must be kind:design:scheme with kind in {KINDS},"
                f" design in {DESIGNS} and scheme in {SCHEMES}; got {':'.join(spec)!r}"
            )
    return [(str(k), str(d), str(s)) for k, d, s in specs]


class _Settings:
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.sites = int(cfg["sites"])
        self.seed = int(cfg["seed"])
        self.k = int(cfg["k"])
        self.timeout = float(cfg["timeout"])
        self.log = str(cfg["log"])
        self.output = str(cfg["output"])
        self.fault = str(cfg.get("test-fault", ""))
        self.releases = parse_releases(
            str(cfg.get("releases", "")),
            str(cfg["kind"]),
            str(cfg["design"]),
            str(cfg.get("scheme", "helper")),
        )


def _exchange(
    grid: Grid,
    log: RunLog,
    sends: dict[int, tuple[str, dict[str, Any]]],
    what: str,
    timeout: float,
    shape: tuple[int, ...] | None = None,
    ttl: float | None = None,
    pending: set[str] | None = None,
) -> dict[int, Message]:
    """Send (and log) one message per node; the replies by node id (absent: no answer).

    Each request lives ``ttl`` seconds (default: the round's ``timeout``); the ids of the
    requests still unanswered at the timeout are added to ``pending``."""
    step = what.split(":")[0]
    msgs = []
    for node, (receiver, fields) in sends.items():
        log.message(step, AGG, receiver, what.split(":", 1)[1], fields, shape, node)
        msgs.append(_message(fields, node, f"query.{step}", timeout if ttl is None else ttl))
    replies, waiting = _send_and_receive(grid, msgs, timeout)
    if pending is not None:
        pending |= waiting
    return {r.metadata.src_node_id: r for r in replies}


def _send_and_receive(
    grid: Grid, msgs: list[Message], timeout: float
) -> tuple[list[Message], set[str]]:
    """``grid.send_and_receive``, but asking for the replies every 0.1 s (Flower: 3 s); also
    the ids of the requests left unanswered."""
    waiting = set(grid.push_messages(msgs))
    return _pull(grid, waiting, timeout)


def _pull(grid: Grid, waiting: set[str], timeout: float) -> tuple[list[Message], set[str]]:
    """Replies to the requests ``waiting`` for, asked every 0.1 s until all are in or
    ``timeout`` seconds passed; and the ids still unanswered."""
    end = time.monotonic() + timeout
    replies: list[Message] = []
    waiting = set(waiting)
    while waiting:
        got = list(grid.pull_messages(list(waiting)))
        replies += got
        waiting -= {r.metadata.reply_to_message_id for r in got}
        if not waiting or time.monotonic() > end:
            break
        time.sleep(REPLY_POLL)
    return replies, waiting


def _answer(
    reply: Message | None, party: str, step: str, timeout: float
) -> tuple[dict[str, Any] | None, str]:
    """The reply's fields, or None and why not (no answer, an error, a refusal)."""
    if reply is None:
        return None, f"did not answer the {step} request within {timeout:g} s"
    if reply.has_error():
        return None, f"failed in the {step} step: {reply.error.reason}"
    fields = _fields(reply)
    if "refused" in fields:
        return None, f"refused in the {step} step: {fields['refused']}"
    return fields, ""


def _name(node: int, reply: Message | None) -> str:
    fields = _fields(reply) if reply is not None and not reply.has_error() else {}
    if fields.get("role") == "noise":
        return NOISE
    return f"site {fields['site']}" if "site" in fields else f"node {node}"


def _wait_for_nodes(grid: Grid, count: int, timeout: float) -> list[int]:
    end = time.monotonic() + timeout
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= count:
            return nodes
        if time.monotonic() > end:
            raise Refusal("federation", f"{len(nodes)} of {count} nodes connected in {timeout:g} s")
        time.sleep(0.5)


class _Run:
    """What the hello round established: who is who, and the sites' public numbers."""

    def __init__(self, cfg: _Settings, nodes, name, info, run_id: int) -> None:
        self.cfg = cfg
        self.name = name
        self.info = info
        self.noise_nodes = [n for n in nodes if name[n] == NOISE]
        self.sites = sorted((n for n in nodes if name[n] != NOISE), key=lambda n: info[n]["site"])
        if len(self.noise_nodes) != 1 or [info[n]["site"] for n in self.sites] != list(
            range(1, cfg.sites + 1)
        ):
            roles = sorted(name.values())
            raise Refusal(
                "federation", f"needs one noise generator and sites 1..{cfg.sites}: {roles}"
            )
        dims = {int(info[n]["dim"]) for n in self.sites}
        if len(dims) != 1:
            raise Refusal("federation", f"the sites' data have different widths D: {sorted(dims)}")
        self.dim = dims.pop()
        self.n_samples = [int(info[n]["n"]) for n in self.sites]
        self.epsilon = [float(info[n]["epsilon"]) for n in self.sites]
        self.delta = [float(info[n]["delta"]) for n in self.sites]
        tau = site_tau(self.n_samples, self.epsilon, self.delta)
        self.designs = [make_design(k, d, tau, self.n_samples) for k, d, _ in cfg.releases]
        for (_, d, _), made in zip(cfg.releases, self.designs, strict=True):
            if not made.feasible:
                raise Refusal(AGG, f"the {d} design is infeasible for these sites")
        self.public = {
            "releases": [":".join(spec) for spec in cfg.releases],
            "dim": self.dim,
            "tau": [float(t) for t in tau],
            "n": self.n_samples,
            "run": int(run_id),
            "test-fault": cfg.fault,
            "timeout": cfg.timeout,
            "keys": [info[n]["key"] for n in self.sites],
            "sigs": [info[n]["sig"] for n in self.sites],
            "manifest": info[self.sites[0]]["manifest"],
        }
        self.public = _corrupted_public(self.public, cfg.fault, self.epsilon, self.delta)
        self.helper = [i for i, spec in enumerate(cfg.releases) if spec[2] == "helper"]
        self.run_id = int(run_id)
        self.silent: list[tuple[str, str]] = []  # (site, why) of the sites that never answered

    def shape(self, i: int) -> tuple[int, ...]:
        return shape_of(self.cfg.releases[i][0], self.dim)

    def one_shape(self) -> tuple[int, ...] | None:
        """The shape of every array a message carries, if the run makes one release."""
        return self.shape(0) if len(self.cfg.releases) == 1 else None

    def release(self, i: int, released, f, dropped=(), correction=None) -> Release:
        kind, design, scheme = self.cfg.releases[i]
        n, eps, dlt, k = self.n_samples, self.epsilon, self.delta, self.cfg.k
        if dropped:
            return finish_after_dropout(
                kind,
                design,
                released,
                f,
                self.designs[i],
                correction,
                dropped,
                n_samples=n,
                epsilon=eps,
                delta=dlt,
                k=k,
            )
        return finish(
            kind,
            design,
            released,
            f,
            self.designs[i],
            scheme=scheme,
            n_samples=n,
            epsilon=eps,
            delta=dlt,
            k=k,
        )


def _hello(grid: Grid, cfg: _Settings, log: RunLog, run_id: int) -> _Run:
    """Round 1: every node's role, version, public key (and a site's public numbers)."""
    nodes = _wait_for_nodes(grid, cfg.sites + 1, cfg.timeout)
    hello = {"version": PROTOCOL_VERSION, "test-fault": cfg.fault}
    sends = {n: (f"node {n}", hello) for n in nodes}
    replies = _exchange(grid, log, sends, "hello:protocol version", cfg.timeout)
    info: dict[int, dict[str, Any]] = {}
    name: dict[int, str] = {}
    problems: list[tuple[str, str]] = []  # every party's, so that the refusal names them all
    for node in nodes:
        name[node] = _name(node, replies.get(node))
        got, why = _answer(replies.get(node), name[node], "hello", cfg.timeout)
        if got is None:
            problems.append((name[node], why))
            continue
        log.message("hello", name[node], AGG, "public key, N_s, D, (ε_s, δ_s)", got, node=node)
        if got.get("version") != PROTOCOL_VERSION:
            why = f"speaks protocol {got.get('version')!r}; the aggregator {PROTOCOL_VERSION!r}"
            problems.append((name[node], why))
        info[node] = got
    digests = {got.get("manifest") for got in info.values()}
    if not problems and len(digests) > 1:  # one run, one federation
        first = info[nodes[0]].get("manifest")
        problems = [
            (name[node], "pins another manifest than the others")
            for node in nodes
            if info[node].get("manifest") != first
        ]
    if problems:
        raise Refusal.of(problems)
    return _Run(cfg, nodes, name, info, run_id)


def run_cape(grid: Grid, cfg: _Settings, log: RunLog, run_id: int) -> list[dict[str, Any]]:
    """The aggregator's side of one CAPE run: one outcome per release (``ok`` and the
    release, or the refusing ``party`` and ``reason``); a Refusal if none can be made."""
    run = _hello(grid, cfg, log, run_id)
    sealed: dict[int, list[bytes]] = {}
    noise_key = noise_sig = b""
    if run.helper:  # Round 2: the noise generator draws every E_s and seals each to its site.
        (ng,) = run.noise_nodes
        what = "noise:τ_s, N_s, site public keys"
        reply = _exchange(grid, log, {ng: (NOISE, run.public)}, what, cfg.timeout).get(ng)
        fields, why = _answer(reply, NOISE, "noise", cfg.timeout)
        if fields is None:
            raise Refusal(NOISE, why)
        log.message("noise", NOISE, AGG, "sealed E_s for every site", fields, run.one_shape(), ng)
        for i in run.helper:
            sealed[i] = list(fields.get(f"{i}.sealed", []))
            if len(sealed[i]) != cfg.sites:
                raise Refusal(NOISE, f"sent {len(sealed[i])} sealed E_s for {cfg.sites} sites")
        noise_key = fields["key"]
        noise_sig = fields["key-sig"]
    # Round 3: F_s from the aggregator's own stream (helper scheme); each site answers Â_s.
    f = {}
    for i, (kind, _, scheme) in enumerate(cfg.releases):
        shape = run.shape(i)
        f[i] = (
            aggregator_step(
                run.designs[i], shape, symmetric=kind == "pca", rng=_stream(cfg.seed, "aggregator")
            )
            if scheme == "helper"
            else np.zeros((cfg.sites, *shape))
        )
    sends = {}
    for s, node in enumerate(run.sites):
        msg = dict(run.public)
        if run.helper:
            msg["noise-key"] = noise_key
            msg["noise-key-sig"] = noise_sig
        for i in run.helper:
            msg[f"{i}.sealed"] = sealed[i][s]
            msg[f"{i}.f"] = to_bytes(f[i][s])
        sends[node] = (run.name[node], _corrupted(msg, cfg.fault, s + 1, run.helper))
    carried = ["sealed E_s (relayed) and F_s"] if run.helper else []
    if len(run.helper) < len(cfg.releases):
        carried.append("every site's public key (pairwise noise)")
    what = "release:" + "; ".join(carried)
    listen = "relay:listen" in _fault_items(cfg.fault)  # a dishonest aggregator, tests only
    pending: set[str] = set()
    replies = _exchange(
        grid, log, sends, what, cfg.timeout, run.one_shape(),
        ttl=LISTEN_TTL if listen else None, pending=pending,
    )  # fmt: skip
    answered, problems, dropped = _collect_releases(run, replies, log)
    remedy = bool(dropped) and not problems  # a run refused anyway gets no c
    keys: dict[int, list[bytes]] = {}
    corrections: dict[int, np.ndarray] = {}
    final_fields: dict[str, Any] | None = None
    if run.helper:  # Round 4: the noise generator hands over the keys (and c after a dropout).
        final_fields = _finalize(grid, run, log, sorted(answered), dropped, remedy)
        for i in run.helper:
            keys[i] = list(final_fields.get(f"{i}.keys", []))
            if len(keys[i]) != len(answered):
                raise Refusal(NOISE, f"sent {len(keys[i])} release keys for {len(answered)} sites")
            if remedy:
                corrections[i] = from_bytes(final_fields[f"{i}.correction"], run.shape(i))
    released = _open_releases(run, answered, keys, problems)
    if not dropped:
        outcomes = [
            {"ok": True, "release": run.release(i, released[i], f[i]).to_json()}
            for i in range(len(cfg.releases))
        ]
    else:
        outcomes = _after_dropout(run, released, f, dropped, corrections)
    if listen and final_fields is not None:
        attack = _listen_for_late_releases(grid, run, log, pending, sorted(answered), final_fields)
        outcomes = [{**o, "attack": attack} for o in outcomes]
    return outcomes


def _collect_releases(
    run: _Run, replies: dict[int, Message], log: RunLog
) -> tuple[dict[int, dict[str, Any]], list[tuple[str, str]], list[int]]:
    """The answering sites' fields (0-based site → fields), the sites that answered with an
    error or a refusal (party, why: the run will be refused, naming them), and the silent
    sites (0-based). A Refusal if no site sent a release."""
    cfg = run.cfg
    answered: dict[int, dict[str, Any]] = {}
    problems: list[tuple[str, str]] = []
    silent: list[tuple[str, str]] = []
    dropped: list[int] = []
    for s, node in enumerate(run.sites):
        party = run.name[node]
        got, why = _answer(replies.get(node), party, "release", cfg.timeout)
        if got is None:
            if replies.get(node) is None:
                silent.append((party, why))
                dropped.append(s)
            else:
                problems.append((party, why))
            continue
        carries = "Â_s = a_s + E_s + F_s + G_s (each release; helper releases sealed)"
        log.message("release", party, AGG, carries, got, run.one_shape(), node)
        answered[s] = got
    if not answered:
        raise Refusal.of(problems + silent)
    run.silent = silent
    return answered, problems, dropped


def _finalize(
    grid: Grid, run: _Run, log: RunLog, held: list[int], dropped: list[int], remedy: bool = True
) -> dict[str, Any]:
    """Round 4: tell the noise generator whose sealed releases the aggregator holds; it
    answers their keys and (``remedy``), for the others, c = Σ_D μ_d (E_d + H_d) — once
    per run."""
    (ng,) = run.noise_nodes
    ask = {**run.public, "held": [s + 1 for s in held], "remedy": remedy}
    what = "finalize:the sites whose sealed releases the aggregator holds"
    reply = _exchange(grid, log, {ng: (NOISE, ask)}, what, run.cfg.timeout).get(ng)
    fields, failed = _answer(reply, NOISE, "finalize", run.cfg.timeout)
    if fields is None:
        if dropped:
            gone = ", ".join(run.name[run.sites[d]] for d in dropped)
            why = f"did not answer the release request within {run.cfg.timeout:g} s"
            raise Refusal(f"{gone}, {NOISE}", f"{gone}: {why}; {NOISE}: {failed}")
        raise Refusal(NOISE, failed)
    carries = "release keys" + (" and c = Σ_D μ_d (E_d + H_d)" if dropped else "")
    log.message("finalize", NOISE, AGG, carries, fields, run.one_shape(), ng)
    return fields


def _open_releases(
    run: _Run,
    answered: dict[int, dict[str, Any]],
    keys: dict[int, list[bytes]],
    problems: list[tuple[str, str]],
) -> dict[int, np.ndarray]:
    """Every held Â_s, opened (helper releases) and checked: agreed shape, finite,
    symmetric for PCA. A site whose release is malformed or does not open makes the run a
    refusal naming it (and every silent site): a wrong Â_s would publish a value with the
    wrong noise, and leaving it out would leave its E_s uncancelled."""
    cfg = run.cfg
    released = {i: np.zeros((cfg.sites, *run.shape(i))) for i in range(len(cfg.releases))}
    problems = list(problems)
    for idx, (s, got) in enumerate(sorted(answered.items())):
        party = run.name[run.sites[s]]
        for i, (kind, _, scheme) in enumerate(cfg.releases):
            try:
                shape = tuple(int(n) for n in got[f"{i}.shape"])
                if scheme == "helper":
                    context_ = sealing.release_context(run.run_id, s + 1, shape, i)
                    data = sealing.open_with_key(keys[i][idx], got[f"{i}.sealed"], context_)
                else:
                    data = got[f"{i}.released"]
                value = from_bytes(data, shape)
                check_release(party, value, run.shape(i), kind == "pca")
            except InvalidTag:
                problems.append((party, "sent a sealed release that does not open with its key"))
                break
            except (KeyError, TypeError, ValueError) as err:
                problems.append((party, f"sent a malformed release: {err}"))
                break
            except Refusal as err:
                problems.append((err.party, err.reason))
                break
            released[i][s] = value
    if problems:
        raise Refusal.of(problems + run.silent)
    return released


def _after_dropout(run: _Run, released, f, dropped, corrections) -> list[dict[str, Any]]:
    """Sites that never answered: the sealed remedy for each helper release.

    The noise generator, told whose releases the aggregator holds, sent c = Σ_D μ_d (E_d + H_d)
    with fresh H_d ~ N(0, τ_gd²) (:func:`dpcore.analysis.views.dropout_correction`) and never
    the dropped sites' keys; the aggregator publishes (Σ_R μ_t (Â_t − F_t) + c) / W, which
    carries the pooled noise again. A pairwise release has no helper to send c: it is
    refused, naming the silent sites.
    """
    cfg = run.cfg
    gone = ", ".join(run.name[run.sites[d]] for d in dropped)
    why = f"did not answer the release request within {cfg.timeout:g} s"
    outcomes = []
    for i, (_, _, scheme) in enumerate(cfg.releases):
        if scheme == "pairwise":
            reason = f"{why}; the pairwise scheme has no helper to make up its missing noise"
            outcomes.append({"ok": False, "party": gone, "reason": reason})
            continue
        try:
            made = run.release(i, released[i], f[i], dropped, corrections[i])
        except Refusal as err:
            outcomes.append({"ok": False, "party": err.party, "reason": err.reason})
        else:
            outcomes.append({"ok": True, "release": made.to_json()})
    return outcomes


LISTEN_TTL = 3600.0  # the dishonest aggregator's requests live an hour, not a round


def _listen_for_late_releases(
    grid: Grid, run: _Run, log: RunLog, pending: set[str], held: list[int], first: dict
) -> dict[str, Any]:
    """A dishonest aggregator, for the tests only (``relay:listen``): after the remedy it
    keeps waiting for the dropped sites' late releases, asks the noise generator again for
    the same sites (hoping for fresh H's to average) and then for the late sites' keys too.

    Returns what it got: ``late`` (1-based sites whose late release arrived), ``repeat``
    ("same answer" or what differed), ``keys for the late sites`` (the noise generator's
    answer or refusal) and ``opened`` (late sites whose release it could open).
    """
    replies, _ = _pull(grid, pending, LATE_WAIT)
    late: dict[int, dict[str, Any]] = {}
    for reply in replies:
        node = reply.metadata.src_node_id
        got, _ = _answer(reply, run.name.get(node, f"node {node}"), "release", 0)
        if got is not None and node in run.sites:
            s = run.sites.index(node)
            log.message("release", run.name[node], AGG, "a late sealed Â_s", got, node=node)
            late[s] = got
    try:
        again = _finalize(grid, run, log, held, [])
        repeat = "same answer" if again == first else f"another answer: {sorted(again)}"
    except Refusal as err:
        repeat = f"refused: {err.reason}"
    wanted = sorted({*held, *late})
    try:
        more = _finalize(grid, run, log, wanted, [])
    except Refusal as err:
        return {"late": [s + 1 for s in late], "repeat": repeat, "keys": err.reason, "opened": []}
    opened = []
    for s, got in late.items():
        for i in run.helper:
            key = more[f"{i}.keys"][wanted.index(s)]
            shape = tuple(int(n) for n in got[f"{i}.shape"])
            context_ = sealing.release_context(run.run_id, s + 1, shape, i)
            try:
                sealing.open_with_key(key, got[f"{i}.sealed"], context_)
                opened.append(s + 1)
            except InvalidTag:
                pass
    return {"late": [s + 1 for s in late], "repeat": repeat, "keys": "answered", "opened": opened}


def _corrupted_public(
    public: dict[str, Any], fault: str, epsilon: list[float], delta: list[float]
) -> dict[str, Any]:
    """The public fields as a dishonest aggregator would relay them, for the tests only:
    ``relay:n<s>`` triples site s's N_s (and relays the τ's that would follow: a smaller G
    for the others), ``relay:invent`` adds a site of its own with a key it signed itself.
    The noise generator and the sites must refuse, naming what differs from the manifest."""
    items = _fault_items(fault)
    public = dict(public)
    n, eps, dlt = list(public["n"]), list(epsilon), list(delta)
    for s in range(len(n)):
        if f"relay:n{s + 1}" in items:
            n[s] *= 3
    if "relay:invent" in items:
        _, key = sealing.keypair()
        stranger = identity.Ed25519PrivateKey.generate()
        party = f"site {len(n) + 1}"
        run_id = int(public["run"])
        sig = identity.sign_run_key(stranger, str(public["manifest"]), run_id, party, key)
        public["keys"] = [*public["keys"], key]
        public["sigs"] = [*public["sigs"], sig]
        n, eps, dlt = [*n, 300], [*eps, 1.0], [*dlt, 1e-5]
    if n != list(public["n"]):
        public["n"] = n
        public["tau"] = [float(t) for t in site_tau(n, eps, dlt)]
    return public


def _fault_items(fault: str) -> set[str]:
    return {item.strip() for item in fault.split(",")}


def _corrupted(msg: dict[str, Any], fault: str, site: int, helper: list[int]) -> dict[str, Any]:
    """A relayed message as a dishonest aggregator would change it, for the tests only:
    ``relay:tamper<s>`` flips a bit of site s's sealed E_s, ``relay:tau<s>`` halves the τ_s
    site s is told the design was made for (less E and F for it). The sites must refuse."""
    items = _fault_items(fault)
    msg = dict(msg)
    if f"relay:tamper{site}" in items:
        for i in helper:
            sealed = msg[f"{i}.sealed"]
            msg[f"{i}.sealed"] = sealed[:-1] + bytes([sealed[-1] ^ 1])
    if f"relay:tau{site}" in items:
        tau = list(msg["tau"])
        tau[site - 1] /= 2.0
        msg["tau"] = tau
    return msg


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """Run CAPE and write the outcome to the run config's output: for one release its
    ``ok`` and release (or refusal); for several also ``outcomes``, one per release."""
    cfg = _Settings(dict(context.run_config))
    log = RunLog(cfg.log)
    try:
        outcomes = run_cape(grid, cfg, log, context.run_id)
    except Refusal as err:
        outcomes = [{"ok": False, "party": err.party, "reason": err.reason}] * len(cfg.releases)
    for outcome in outcomes:
        if outcome["ok"]:
            shape = list(np.shape(outcome["release"]["estimate"]))
            log.write(round="end", kind="release", shape=shape)
        else:
            log.write(round="end", kind="refusal", party=outcome["party"], reason=outcome["reason"])
    result: dict[str, Any] = (
        dict(outcomes[0]) if len(outcomes) == 1 else {"ok": all(o["ok"] for o in outcomes)}
    )
    result["outcomes"] = outcomes
    write_result(cfg.output, result)
    print("released" if result["ok"] else f"REFUSED — {outcomes}", flush=True)


# --- the sites and the noise generator -----------------------------------------------------------


def _fault(msg: Message, context: Context) -> str:
    """A fault to act out, for the tests only: the node must allow it in its node config.

    The run config's ``test-fault`` lists ``site<s>:<fault>`` items, comma-separated.
    """
    if not context.node_config.get("allow-test-faults", False):
        return ""
    wanted = str(msg.content["cape"].get("test-fault", "")) if "cape" in msg.content else ""
    me = (
        "noise"
        if context.node_config["role"] == "noise"
        else f"site{context.node_config.get('site')}"
    )
    for item in wanted.split(","):
        who, _, what = item.strip().partition(":")
        if who == me and what in TEST_FAULTS:
            return what
    return ""


def _pinned(context: Context) -> tuple[identity.Manifest, str, Any, str]:
    """The node's pinned manifest, its digest, the node's identity key and its party name.

    Raises
    ------
    ValueError
        If the node's identity is not the one the manifest pins for its role.
    """
    cfg = context.node_config
    manifest = identity.Manifest.read(str(cfg["manifest"]))
    key = identity.load_identity(str(cfg["identity"]))
    if cfg["role"] == "noise":
        party, pinned = NOISE, manifest.noise
    else:
        party, pinned = f"site {int(cfg['site'])}", manifest.site(int(cfg["site"])).identity
    if identity.public_of(key) != pinned:
        raise ValueError(f"this node's identity key is not the one the manifest pins for {party}")
    return manifest, manifest.digest(), key, party


def _signature(key, digest: str, run_id: int, party: str, public: bytes, fault: str) -> bytes:
    """The identity's signature of this run's X25519 key (``impostor``: a stranger's, for the
    tests: a node that claims the role without the pinned key)."""
    if fault == "impostor":
        key = identity.Ed25519PrivateKey.generate()
    return identity.sign_run_key(key, digest, run_id, party, public)


def _site_data(context: Context):
    return read_site_csv(str(context.node_config["data"]))


def _kept_bytes(value: object, name: str) -> bytes:
    """``value``, bytes this node kept in its local state under ``name``, refusing others."""
    if not isinstance(value, bytes):
        raise TypeError(f"state {name} must hold bytes; got {type(value).__name__}")
    return value


@client_app.query("hello")
def hello(msg: Message, context: Context) -> Message:
    """Role, version, the pinned manifest's digest and a fresh X25519 public key signed with
    the node's identity key (the private key kept in the node's local state); a site also
    its public numbers, which must be the manifest's."""
    private, public = sealing.keypair()
    context.state["cape"] = ConfigRecord({"private": private})
    cfg = context.node_config
    fault = _fault(msg, context)
    version = PROTOCOL_VERSION if fault != "version" else "cape-flower/0"
    out: dict[str, Any] = {"role": str(cfg["role"]), "version": version, "key": public}
    if cfg["role"] == "site":
        out["site"] = int(cfg["site"])
    try:
        manifest, digest, key, party = _pinned(context)
    except (OSError, KeyError, ValueError) as err:
        print(f"refused: {err}", flush=True)
        out["refused"] = f"its identity or manifest does not check out ({err})"
        return _reply(out, msg)
    out["manifest"] = digest
    out["sig"] = _signature(key, digest, context.run_id, party, public, fault)
    print(f"{party}: X25519 key {sealing.fingerprint(public)}, signed by identity "
          f"{identity.fingerprint(identity.public_of(key))}", flush=True)  # fmt: skip
    if cfg["role"] == "site":
        try:
            x = _site_data(context)
        except DataRuleError as err:  # the rule crosses the wire; the row and value stay here
            print(f"{party} refused its data: {err}", flush=True)
            out["refused"] = f"its data break a rule: {err.rule} (details in the site's own log)"
            return _reply(out, msg)
        pinned = manifest.site(int(cfg["site"]))
        if x.shape[0] != pinned.n:
            out["refused"] = f"its data have another N_s than the manifest pins ({pinned.n})"
            return _reply(out, msg)
        out.update(n=pinned.n, dim=int(x.shape[1]), epsilon=pinned.epsilon, delta=pinned.delta)
    return _reply(out, msg)


def _specs(fields: dict[str, Any]) -> list[Spec]:
    specs = [str(item).split(":") for item in fields["releases"]]
    return [(k, d, s) for k, d, s in specs]


def _design(fields: dict[str, Any], kind: str, design: str):
    return make_design(kind, design, np.array(fields["tau"]), fields["n"])


def _noise_e(fields: dict[str, Any], i: int, seed: int) -> np.ndarray:
    """Every E_s of release ``i`` (Σ μ_s E_s = 0), from the noise generator's stream."""
    kind, design, _ = _specs(fields)[i]
    shape = shape_of(kind, int(fields["dim"]))
    return noise_generator_step(
        _design(fields, kind, design), shape, symmetric=kind == "pca", rng=_stream(seed, NOISE)
    )


def _unsigned(fields: dict[str, Any], manifest, digest: str, run_id: int) -> str | None:
    """The first relayed site key that its pinned identity did not sign for this run."""
    for s, (key, sig) in enumerate(zip(fields["keys"], fields["sigs"], strict=True)):
        party = f"site {s + 1}"
        if not identity.verify_run_key(
            manifest.site(s + 1).identity, sig, digest, run_id, party, key
        ):
            return f"{party}'s run key is not signed by its pinned identity"
    return None


@client_app.query("noise")
def noise(msg: Message, context: Context) -> Message:
    """The noise generator: every E_s with Σ μ_s E_s = 0, each sealed to its site (Alg. 5),
    for every helper release of the run; it keeps them for a dropout's remedy."""
    if context.node_config["role"] != "noise":
        raise ValueError("only the noise generator draws E")
    fields = _fields(msg)
    manifest, digest, key, _ = _pinned(context)
    problem = relayed_problem(fields, manifest, digest) or _unsigned(
        fields, manifest, digest, int(fields["run"])
    )
    if problem:  # the aggregator relayed another federation than the pinned one
        print(f"noise generator refused: {problem}", flush=True)
        return _reply({"refused": problem}, msg)
    seed = int(context.node_config.get("seed", -1))
    private, public = sealing.keypair()
    prints = ", ".join(
        f"site {s + 1} {sealing.fingerprint(k)}" for s, k in enumerate(fields["keys"])
    )
    print(f"noise generator: key {sealing.fingerprint(public)}; sealing to {prints}", flush=True)
    sig = _signature(key, digest, int(fields["run"]), NOISE, public, _fault(msg, context))
    out: dict[str, Any] = {"key": public, "key-sig": sig}
    kept: dict[str, ConfigRecordValues] = {}
    for i, (kind, _, scheme) in enumerate(_specs(fields)):
        if scheme != "helper":
            continue
        e = _noise_e(fields, i, seed)
        kept[str(i)] = to_bytes(e)
        shape = shape_of(kind, int(fields["dim"]))
        out[f"{i}.sealed"] = [
            sealing.seal(
                private, key, to_bytes(e[s]), sealing.context_for(fields["run"], s + 1, shape, i)
            )
            for s, key in enumerate(fields["keys"])
        ]
    context.state["cape-e"] = ConfigRecord(kept)
    # what the finalize round needs, as this noise round saw it: never the relayed numbers
    context.state["cape-ng"] = ConfigRecord(
        {
            "private": private,
            "keys": list(fields["keys"]),
            "releases": list(fields["releases"]),
            "tau": [float(t) for t in fields["tau"]],
            "n": [int(n) for n in fields["n"]],
            "dim": int(fields["dim"]),
            "run": int(fields["run"]),
        }
    )
    return _reply(out, msg)


def _held_sites(value: object, n_sites: int) -> list[int]:
    """The finalize request's ``held``: distinct 1-based sites, in order; ValueError else."""
    if not isinstance(value, list) or not all(isinstance(h, int) for h in value):
        raise ValueError(f"held must be a list of site numbers; got {value!r}")
    if not value or value != sorted(set(value)) or value[0] < 1 or value[-1] > n_sites:
        raise ValueError(f"held must name distinct sites of 1..{n_sites} in order; got {value}")
    return value


@client_app.query("finalize")
def finalize(msg: Message, context: Context) -> Message:
    """The noise generator, told whose sealed releases the aggregator holds: their release
    keys and, for every other site, the remedy c = Σ_D μ_d (E_d + H_d) with fresh
    H_d ~ N(0, τ_gd²) — once per run.

    The same request again gets the same answer (a retry learns nothing new: no fresh H to
    average); a request for another set of sites is refused, so no aggregator can hold both
    c for a site and that site's opened release (docs/federated.md, "Dropouts")."""
    if context.node_config["role"] != "noise":
        raise ValueError("only the noise generator knows the E's")
    fields = _fields(msg)
    kept: dict[str, Any] = dict(context.state["cape-ng"])
    n_sites = len(kept["n"])
    try:
        held = _held_sites(fields.get("held"), n_sites)
    except ValueError as err:
        return _reply({"refused": str(err)}, msg)
    if "cape-final" in context.state:
        done: dict[str, Any] = dict(context.state["cape-final"])
        before = list(done.pop("held"))
        if before == held:
            return _reply(done, msg)
        why = f"this run was finalised for sites {before}; a second request, for sites {held}"
        return _reply({"refused": f"{why}, is refused (one answer per run)"}, msg)
    seed = int(context.node_config.get("seed", -1))
    private = _kept_bytes(kept["private"], "cape-ng[private]")
    # no c when the aggregator will refuse anyway (a site's release was bad)
    dropped = [s for s in range(n_sites) if s + 1 not in held] if fields.get("remedy") else []
    out: dict[str, Any] = {}
    for i, (kind, design_kind, scheme) in enumerate(_specs(kept)):
        if scheme != "helper":
            continue
        if dropped:
            shape = shape_of(kind, int(kept["dim"]))
            e = from_bytes(_kept_bytes(context.state["cape-e"][str(i)], f"cape-e[{i}]"),
                           (n_sites, *shape))  # fmt: skip
            design = _design(kept, kind, design_kind)
            if not dropout_analysis(design, dropped).meets["cape"]:
                why = (
                    f"the remedy for sites {[d + 1 for d in dropped]} would carry too little noise"
                )
                return _reply({"refused": why}, msg)
            c = dropout_correction(
                e,
                design,
                dropped,
                symmetric=kind == "pca",
                rng=remedy_rng(seed) if seed >= 0 else np.random.default_rng(),
            )
            out[f"{i}.correction"] = to_bytes(c)
        out[f"{i}.keys"] = [
            sealing.release_key(private, _kept_bytes(kept["keys"][h - 1], "key"), kept["run"], h, i)
            for h in held
        ]
    context.state["cape-final"] = ConfigRecord({"held": held, **out})
    return _reply(out, msg)


def _pairwise_e(fields, design, s: int, shape, private: bytes, seed: int, release: int, kind: str):
    """E_s from the noise site s shares with every other site (:mod:`dpcore.protocol.pairwise`).

    Each pair's stream is seeded by their X25519 agreement (the keys relayed in the
    message; another seed for each release of the run), or, to reproduce the in-process
    run, by ``pair_rng(seed, s, t)``.
    """
    keys = list(fields["keys"])
    if keys[s] != sealing.public_of(private):
        raise ValueError("the relayed key list does not hold this site's own key")
    streams = {}
    for t, key in enumerate(keys):
        if t != s:
            streams[t] = (
                pair_rng(seed, s, t)
                if seed >= 0
                else np.random.default_rng(
                    sealing.pair_seed(private, key, fields["run"], s, t, release)
                )
            )
    return pair_noise_step(design, s, shape, symmetric=kind == "pca", streams=streams)


@client_app.query("release")
def release(msg: Message, context: Context) -> Message:
    """Site s: for every release of the run, open E_s (or make it with the other sites,
    pairwise), draw G_s and answer Â_s = a_s + E_s + F_s + G_s (Alg. 1 steps 5–6)."""
    if past_deadline(msg):  # the aggregator stopped waiting: a late answer only leaks
        return _reply({"refused": "the release request's deadline had passed"}, msg)
    cfg = context.node_config
    s = int(cfg["site"]) - 1
    fields = _fields(msg)
    x = _site_data(context)
    manifest, digest, _, _ = _pinned(context)
    run_id = int(fields["run"])
    # the design is the manifest's (never relayed numbers), and E_s comes from the pinned
    # noise generator only: its run key must carry the pinned identity's signature
    problem = relayed_problem(fields, manifest, digest, own_site=s + 1)
    if problem is None and any(spec[2] == "helper" for spec in _specs(fields)):
        if not identity.verify_run_key(
            manifest.noise, fields["noise-key-sig"], digest, run_id, NOISE, fields["noise-key"]
        ):
            problem = "the noise generator's run key is not signed by the pinned noise generator"
    if problem is None and any(spec[2] == "pairwise" for spec in _specs(fields)):
        problem = _unsigned(fields, manifest, digest, run_id)
    if problem:
        print(f"site {s + 1} refused: {problem}", flush=True)
        return _reply({"refused": problem}, msg)
    private = _kept_bytes(context.state["cape"]["private"], "cape[private]")
    seed = int(cfg.get("seed", -1))
    fault = _fault(msg, context)
    out: dict[str, Any] = {}
    for i, (kind, design_kind, scheme) in enumerate(_specs(fields)):
        shape = shape_of(kind, int(fields["dim"]))
        design = _design(fields, kind, design_kind)
        if scheme == "pairwise":
            e = _pairwise_e(fields, design, s, shape, private, seed, i, kind)
            f = np.zeros(shape)
        else:
            context_ = sealing.context_for(fields["run"], s + 1, shape, i)
            opened = sealing.open_sealed(
                private, fields["noise-key"], fields[f"{i}.sealed"], context_
            )
            e = from_bytes(opened, shape)
            f = from_bytes(fields[f"{i}.f"], shape)
        value = site_statistic(x, kind)
        _, released = site_step(
            value,
            e,
            f,
            float(design.tau_g[s]),
            symmetric=kind == "pca",
            rng=_stream(seed, "site", s),
        )
        if fault == "nan":
            released = released.copy()
            released.flat[0] = np.nan
        if fault == "shape":
            released = released[..., :-1]
        if scheme == "helper":  # sealed: its key comes only from the noise generator
            key = sealing.release_key(private, fields["noise-key"], fields["run"], s + 1, i)
            context_ = sealing.release_context(fields["run"], s + 1, released.shape, i)
            out[f"{i}.sealed"] = sealing.seal_with_key(key, to_bytes(released), context_)
        else:
            out[f"{i}.released"] = to_bytes(released)
        out[f"{i}.shape"] = list(released.shape)
    if fault == "hang":  # answers only after the aggregator stopped waiting for it
        time.sleep(float(fields["timeout"]) + HANG_AFTER)
    if fault == "crash":
        os._exit(1)
    if past_deadline(msg):
        return _reply({"refused": "the release request's deadline passed before the answer"}, msg)
    return _reply(out, msg)
