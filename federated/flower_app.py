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
from flwr.app import ConfigRecord, ConfigRecordValues, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from dpcore.analysis.views import dropout_correction
from dpcore.protocol.cape import aggregator_step, noise_generator_step, party_rng, site_step
from dpcore.protocol.pairwise import pair_noise_step, pair_rng
from federated import sealing
from federated.protocol import (
    DESIGNS,
    KINDS,
    PROTOCOL_VERSION,
    SCHEMES,
    Refusal,
    Release,
    check_release,
    finish,
    finish_after_dropout,
    from_bytes,
    make_design,
    read_site_csv,
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
TEST_FAULTS = ("nan", "shape", "hang", "crash", "version")
HANG_AFTER = 5.0  # a hanging site answers this many seconds after the aggregator's timeout


def _stream(seed: int, party: str, site: int = 0) -> np.random.Generator:
    """The party's noise stream: dpcore's for a seed ≥ 0, else fresh OS entropy."""
    return party_rng(seed, party, site) if seed >= 0 else np.random.default_rng()


def _message(fields: dict[str, Any], node: int, kind: str) -> Message:
    return Message(RecordDict({"cape": ConfigRecord(fields)}), dst_node_id=node, message_type=kind)


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
) -> dict[int, Message]:
    """Send (and log) one message per node; the replies by node id (absent: no answer)."""
    step = what.split(":")[0]
    msgs = []
    for node, (receiver, fields) in sends.items():
        log.message(step, AGG, receiver, what.split(":", 1)[1], fields, shape, node)
        msgs.append(_message(fields, node, f"query.{step}"))
    return {r.metadata.src_node_id: r for r in _send_and_receive(grid, msgs, timeout)}


def _send_and_receive(grid: Grid, msgs: list[Message], timeout: float) -> list[Message]:
    """``grid.send_and_receive``, but asking for the replies every 0.1 s (Flower: 3 s)."""
    waiting = set(grid.push_messages(msgs))
    end = time.monotonic() + timeout
    replies: list[Message] = []
    while waiting:
        got = list(grid.pull_messages(list(waiting)))
        replies += got
        waiting -= {r.metadata.reply_to_message_id for r in got}
        if not waiting or time.monotonic() > end:
            break
        time.sleep(REPLY_POLL)
    return replies


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
        }
        self.helper = [i for i, spec in enumerate(cfg.releases) if spec[2] == "helper"]

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
    if problems:
        raise Refusal.of(problems)
    return _Run(cfg, nodes, name, info, run_id)


def run_cape(grid: Grid, cfg: _Settings, log: RunLog, run_id: int) -> list[dict[str, Any]]:
    """The aggregator's side of one CAPE run: one outcome per release (``ok`` and the
    release, or the refusing ``party`` and ``reason``); a Refusal if none can be made."""
    run = _hello(grid, cfg, log, run_id)
    sealed: dict[int, list[bytes]] = {}
    noise_key = b""
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
        for i in run.helper:
            msg[f"{i}.sealed"] = sealed[i][s]
            msg[f"{i}.f"] = to_bytes(f[i][s])
        sends[node] = (run.name[node], _corrupted(msg, cfg.fault, s + 1, run.helper))
    carried = ["sealed E_s (relayed) and F_s"] if run.helper else []
    if len(run.helper) < len(cfg.releases):
        carried.append("every site's public key (pairwise noise)")
    what = "release:" + "; ".join(carried)
    replies = _exchange(grid, log, sends, what, cfg.timeout, run.one_shape())
    released, dropped = _check_releases(run, replies, log)
    if not dropped:
        return [
            {"ok": True, "release": run.release(i, released[i], f[i]).to_json()}
            for i in range(len(cfg.releases))
        ]
    return _after_dropout(grid, run, log, released, f, dropped)


def _check_releases(run: _Run, replies: dict[int, Message], log: RunLog):
    """Every site's Â_s for every release, and the sites that never answered (0-based).

    A site that answered with an error, a refusal or a malformed value makes the whole run a
    refusal naming it (and every other such site): its Â_s cannot be used, and publishing
    without it would leave its E_s uncancelled.
    """
    cfg = run.cfg
    released = {i: np.empty((cfg.sites, *run.shape(i))) for i in range(len(cfg.releases))}
    problems: list[tuple[str, str]] = []
    silent: list[tuple[str, str]] = []
    dropped: list[int] = []
    for s, node in enumerate(run.sites):
        party = run.name[node]
        got, why = _answer(replies.get(node), party, "release", cfg.timeout)
        if got is None:
            (silent if replies.get(node) is None else problems).append((party, why))
            if replies.get(node) is None:
                dropped.append(s)
            continue
        carries = "Â_s = a_s + E_s + F_s + G_s (each release)"
        log.message("release", party, AGG, carries, got, run.one_shape(), node)
        for i, (kind, _, _) in enumerate(cfg.releases):
            try:
                value = from_bytes(got[f"{i}.released"], got[f"{i}.shape"])
                check_release(party, value, run.shape(i), kind == "pca")
            except (KeyError, ValueError) as err:
                problems.append((party, f"sent a malformed release: {err}"))
                break
            except Refusal as err:
                problems.append((err.party, err.reason))
                break
            released[i][s] = value
    if problems:  # a bad Â_s: release nothing, naming every party at fault or silent
        raise Refusal.of(problems + silent)
    if len(dropped) == cfg.sites:
        raise Refusal.of(silent)
    return released, dropped


def _after_dropout(grid, run: _Run, log: RunLog, released, f, dropped) -> list[dict[str, Any]]:
    """Sites that never answered: the privacy explorer's remedy for each helper release.

    The noise generator, told who dropped, sends c = Σ_D μ_d (E_d + H_d) with fresh
    H_d ~ N(0, τ_gd²) (:func:`dpcore.analysis.views.dropout_correction`); the aggregator
    publishes (Σ_R μ_t (Â_t − F_t) + c) / W, which carries the pooled noise again. A pairwise
    release has no helper to send c: it is refused, naming the silent sites.
    """
    cfg = run.cfg
    gone = ", ".join(run.name[run.sites[d]] for d in dropped)
    why = f"did not answer the release request within {cfg.timeout:g} s"
    corrections: dict[int, np.ndarray] = {}
    refused: dict[str, str] = {}
    if run.helper:
        (ng,) = run.noise_nodes
        ask = {**run.public, "dropped": [int(d) for d in dropped]}
        what = "remedy:who dropped out"
        reply = _exchange(grid, log, {ng: (NOISE, ask)}, what, cfg.timeout).get(ng)
        fields, failed = _answer(reply, NOISE, "remedy", cfg.timeout)
        if fields is None:
            refused = {"party": f"{gone}, {NOISE}", "reason": f"{gone}: {why}; {NOISE}: {failed}"}
        else:
            log.message(
                "remedy", NOISE, AGG, "c = Σ_D μ_d (E_d + H_d)", fields, run.one_shape(), ng
            )
            for i in run.helper:
                corrections[i] = from_bytes(fields[f"{i}.correction"], run.shape(i))
    outcomes = []
    for i, (_, _, scheme) in enumerate(cfg.releases):
        if i in corrections:
            try:
                made = run.release(i, released[i], f[i], dropped, corrections[i])
            except Refusal as err:
                outcomes.append({"ok": False, "party": err.party, "reason": err.reason})
            else:
                outcomes.append({"ok": True, "release": made.to_json()})
        elif scheme == "pairwise":
            reason = f"{why}; the pairwise scheme has no helper to make up its missing noise"
            outcomes.append({"ok": False, "party": gone, "reason": reason})
        else:
            outcomes.append({"ok": False, **refused})
    return outcomes


def _corrupted(msg: dict[str, Any], fault: str, site: int, helper: list[int]) -> dict[str, Any]:
    """A relayed message as a dishonest aggregator would change it, for the tests only:
    ``relay:tamper<s>`` flips a bit of site s's sealed E_s, ``relay:tau<s>`` halves the τ_s
    site s is told the design was made for (less E and F for it). The sites must refuse."""
    items = {item.strip() for item in fault.split(",")}
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
    site = context.node_config.get("site")
    for item in wanted.split(","):
        who, _, what = item.strip().partition(":")
        if who == f"site{site}" and what in TEST_FAULTS:
            return what
    return ""


def _site_data(context: Context):
    return read_site_csv(str(context.node_config["data"]))


def _kept_bytes(value: object, name: str) -> bytes:
    """``value``, bytes this node kept in its local state under ``name``, refusing others."""
    if not isinstance(value, bytes):
        raise TypeError(f"state {name} must hold bytes; got {type(value).__name__}")
    return value


@client_app.query("hello")
def hello(msg: Message, context: Context) -> Message:
    """Role, version and a fresh public key (kept private key in the node's local state)."""
    private, public = sealing.keypair()
    context.state["cape"] = ConfigRecord({"private": private})
    cfg = context.node_config
    version = PROTOCOL_VERSION if _fault(msg, context) != "version" else "cape-flower/0"
    out: dict[str, Any] = {"role": str(cfg["role"]), "version": version, "key": public}
    who = "noise generator" if cfg["role"] == "noise" else f"site {cfg.get('site')}"
    print(f"{who}: X25519 key {sealing.fingerprint(public)} (compare out of band)", flush=True)
    if cfg["role"] == "site":
        out["site"] = int(cfg["site"])
        try:
            x = _site_data(context)
        except (OSError, ValueError) as err:
            out["refused"] = str(err)
            return _reply(out, msg)
        out.update(n=int(x.shape[0]), dim=int(x.shape[1]))
        out.update(epsilon=float(cfg["epsilon"]), delta=float(cfg["delta"]))
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


@client_app.query("noise")
def noise(msg: Message, context: Context) -> Message:
    """The noise generator: every E_s with Σ μ_s E_s = 0, each sealed to its site (Alg. 5),
    for every helper release of the run; it keeps them for a dropout's remedy."""
    if context.node_config["role"] != "noise":
        raise ValueError("only the noise generator draws E")
    fields = _fields(msg)
    seed = int(context.node_config.get("seed", -1))
    private, public = sealing.keypair()
    prints = ", ".join(
        f"site {s + 1} {sealing.fingerprint(k)}" for s, k in enumerate(fields["keys"])
    )
    print(f"noise generator: key {sealing.fingerprint(public)}; sealing to {prints}", flush=True)
    out: dict[str, Any] = {"key": public}
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
    return _reply(out, msg)


@client_app.query("remedy")
def remedy(msg: Message, context: Context) -> Message:
    """The noise generator, told who dropped out: c = Σ_D μ_d (E_d + H_d) for every helper
    release, with fresh H_d ~ N(0, τ_gd²) (the privacy explorer's remedy)."""
    if context.node_config["role"] != "noise":
        raise ValueError("only the noise generator knows the E's")
    fields = _fields(msg)
    seed = int(context.node_config.get("seed", -1))
    kept = context.state["cape-e"]
    dropped = [int(d) for d in fields["dropped"]]
    out: dict[str, Any] = {}
    for i, (kind, design, scheme) in enumerate(_specs(fields)):
        if scheme != "helper":
            continue
        shape = shape_of(kind, int(fields["dim"]))
        e = from_bytes(_kept_bytes(kept[str(i)], f"cape-e[{i}]"), (len(fields["n"]), *shape))
        c = dropout_correction(
            e,
            _design(fields, kind, design),
            dropped,
            symmetric=kind == "pca",
            rng=remedy_rng(seed) if seed >= 0 else np.random.default_rng(),
        )
        out[f"{i}.correction"] = to_bytes(c)
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
    cfg = context.node_config
    s = int(cfg["site"]) - 1
    fields = _fields(msg)
    x = _site_data(context)
    own_tau = site_tau([x.shape[0]], [float(cfg["epsilon"])], [float(cfg["delta"])])[0]
    if fields["tau"][s] != own_tau:  # the design must be made for this site's own promise
        raise ValueError(f"the design uses τ = {fields['tau'][s]!r}; this site needs {own_tau!r}")
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
        out[f"{i}.released"] = to_bytes(released)
        out[f"{i}.shape"] = list(released.shape)
    if fault == "hang":  # answers only after the aggregator stopped waiting for it
        time.sleep(float(fields["timeout"]) + HANG_AFTER)
    if fault == "crash":
        os._exit(1)
    return _reply(out, msg)
