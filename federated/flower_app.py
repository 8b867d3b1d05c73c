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
from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from dpcore.protocol.cape import aggregator_step, noise_generator_step, party_rng, site_step
from dpcore.protocol.pairwise import pair_noise_step, pair_rng
from federated import sealing
from federated.protocol import (
    KINDS,
    PROTOCOL_VERSION,
    SCHEMES,
    Refusal,
    check_release,
    finish,
    from_bytes,
    make_design,
    read_site_csv,
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


class _Settings:
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.kind = str(cfg["kind"])
        self.design = str(cfg["design"])
        self.sites = int(cfg["sites"])
        self.seed = int(cfg["seed"])
        self.k = int(cfg["k"])
        self.timeout = float(cfg["timeout"])
        self.log = str(cfg["log"])
        self.output = str(cfg["output"])
        self.fault = str(cfg.get("test-fault", ""))
        self.scheme = str(cfg.get("scheme", "helper"))
        if self.kind not in KINDS:
            raise ValueError(f"run config kind must be one of {KINDS}; got {self.kind!r}")
        if self.scheme not in SCHEMES:
            raise ValueError(f"run config scheme must be one of {SCHEMES}; got {self.scheme!r}")


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


def run_cape(grid: Grid, cfg: _Settings, log: RunLog, run_id: int):
    """The aggregator's side of one CAPE run; a Release or a Refusal."""
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
    noise_nodes = [n for n in nodes if name[n] == NOISE]
    site_nodes = sorted((n for n in nodes if name[n] != NOISE), key=lambda n: info[n]["site"])
    if len(noise_nodes) != 1 or [info[n]["site"] for n in site_nodes] != list(
        range(1, cfg.sites + 1)
    ):
        roles = sorted(name.values())
        raise Refusal("federation", f"needs one noise generator and sites 1..{cfg.sites}: {roles}")
    dims = {int(info[n]["dim"]) for n in site_nodes}
    if len(dims) != 1:
        raise Refusal("federation", f"the sites' data have different widths D: {sorted(dims)}")
    shape = shape_of(cfg.kind, dims.pop())
    symmetric = cfg.kind == "pca"
    n_samples = [int(info[n]["n"]) for n in site_nodes]
    epsilon = [float(info[n]["epsilon"]) for n in site_nodes]
    delta = [float(info[n]["delta"]) for n in site_nodes]
    tau = site_tau(n_samples, epsilon, delta)
    design = make_design(cfg.kind, cfg.design, tau, n_samples)
    if not design.feasible:
        raise Refusal(AGG, f"the {cfg.design} design is infeasible for these sites")
    public = {
        "kind": cfg.kind,
        "design": cfg.design,
        "shape": list(shape),
        "tau": [float(t) for t in tau],
        "n": n_samples,
        "run": int(run_id),
        "test-fault": cfg.fault,
        "scheme": cfg.scheme,
    }
    if cfg.scheme == "pairwise":  # no noise generator: the sites agree pairwise noise
        keys = [info[n]["key"] for n in site_nodes]
        sends = {n: (name[n], {**public, "keys": keys}) for n in site_nodes}
        what = "release:every site's public key (pairwise noise)"
        f = np.zeros((cfg.sites, *shape))
        return _collect(grid, log, cfg, sends, what, shape, site_nodes, name, f, design, info)

    # Round 2: the noise generator draws every E_s and seals each to its site.
    (ng,) = noise_nodes
    ask = {**public, "keys": [info[n]["key"] for n in site_nodes]}
    what = "noise:τ_s, N_s, site public keys"
    reply = _exchange(grid, log, {ng: (NOISE, ask)}, what, cfg.timeout).get(ng)
    fields, why = _answer(reply, NOISE, "noise", cfg.timeout)
    if fields is None:
        raise Refusal(NOISE, why)
    log.message("noise", NOISE, AGG, "sealed E_s for every site", fields, shape, ng)
    sealed = list(fields["sealed"])
    if len(sealed) != cfg.sites:
        raise Refusal(NOISE, f"sent {len(sealed)} sealed E_s for {cfg.sites} sites")

    # Round 3: F_s from the aggregator's own stream; each site answers Â_s.
    f = aggregator_step(design, shape, symmetric=symmetric, rng=_stream(cfg.seed, "aggregator"))
    sends = {}
    for s, node in enumerate(site_nodes):
        msg = {**public, "sealed": sealed[s], "noise-key": fields["key"], "f": to_bytes(f[s])}
        sends[node] = (name[node], _corrupted(msg, cfg.fault, s + 1))
    what = "release:sealed E_s (relayed) and F_s"
    return _collect(grid, log, cfg, sends, what, shape, site_nodes, name, f, design, info)


def _corrupted(msg: dict[str, Any], fault: str, site: int) -> dict[str, Any]:
    """A relayed message as a dishonest aggregator would change it, for the tests only:
    ``relay:tamper<s>`` flips a bit of site s's sealed E_s, ``relay:tau<s>`` halves the τ_s
    site s is told the design was made for (less E and F for it). The sites must refuse."""
    items = {item.strip() for item in fault.split(",")}
    if f"relay:tamper{site}" in items:
        sealed = msg["sealed"]
        msg = {**msg, "sealed": sealed[:-1] + bytes([sealed[-1] ^ 1])}
    if f"relay:tau{site}" in items:
        tau = list(msg["tau"])
        tau[site - 1] /= 2.0
        msg = {**msg, "tau": tau}
    return msg


def _collect(grid, log, cfg, sends, what, shape, site_nodes, name, f, design, info):
    """The release round: send, check every Â_s, then publish Σ μ_s (Â_s − F_s) or refuse."""
    symmetric = cfg.kind == "pca"
    problems: list[tuple[str, str]] = []
    replies = _exchange(grid, log, sends, what, cfg.timeout, shape)
    released = np.empty((cfg.sites, *shape))
    for s, node in enumerate(site_nodes):
        got, why = _answer(replies.get(node), name[node], "release", cfg.timeout)
        if got is None:
            problems.append((name[node], why))
            continue
        carries = "Â_s = a_s + E_s + " + ("G_s" if cfg.scheme == "pairwise" else "F_s + G_s")
        log.message("release", name[node], AGG, carries, got, shape, node)
        try:
            value = from_bytes(got["released"], got["shape"])
            check_release(name[node], value, shape, symmetric)
        except (KeyError, ValueError) as err:
            problems.append((name[node], f"sent a malformed release: {err}"))
        except Refusal as err:
            problems.append((err.party, err.reason))
        else:
            released[s] = value
    if problems:  # a missing or bad Â_s would leave its E_s uncancelled: release nothing
        raise Refusal.of(problems)
    n_samples = [int(info[n]["n"]) for n in site_nodes]
    epsilon = [float(info[n]["epsilon"]) for n in site_nodes]
    delta = [float(info[n]["delta"]) for n in site_nodes]
    return finish(
        cfg.kind,
        cfg.design,
        released,
        f,
        design,
        n_samples=n_samples,
        epsilon=epsilon,
        delta=delta,
        k=cfg.k,
        scheme=cfg.scheme,
    )


@server_app.main()
def main(grid: Grid, context: Context) -> None:
    """Run CAPE once and write the release (or the refusal) to the run config's output."""
    cfg = _Settings(dict(context.run_config))
    log = RunLog(cfg.log)
    try:
        release = run_cape(grid, cfg, log, context.run_id)
    except Refusal as err:
        log.write(round="end", kind="refusal", party=err.party, reason=err.reason)
        write_result(cfg.output, {"ok": False, "party": err.party, "reason": err.reason})
        print(f"REFUSED — {err}", flush=True)
        return
    log.write(round="end", kind="release", shape=list(release.estimate.shape))
    write_result(cfg.output, {"ok": True, "release": release.to_json()})
    print("released", flush=True)


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


def _design(fields: dict[str, Any]):
    return make_design(fields["kind"], fields["design"], np.array(fields["tau"]), fields["n"])


@client_app.query("noise")
def noise(msg: Message, context: Context) -> Message:
    """The noise generator: every E_s with Σ μ_s E_s = 0, each sealed to its site (Alg. 5)."""
    if context.node_config["role"] != "noise":
        raise ValueError("only the noise generator draws E")
    fields = _fields(msg)
    design = _design(fields)
    shape = tuple(fields["shape"])
    rng = _stream(int(context.node_config.get("seed", -1)), NOISE)
    e = noise_generator_step(design, shape, symmetric=fields["kind"] == "pca", rng=rng)
    private, public = sealing.keypair()
    prints = ", ".join(
        f"site {s + 1} {sealing.fingerprint(k)}" for s, k in enumerate(fields["keys"])
    )
    print(f"noise generator: key {sealing.fingerprint(public)}; sealing to {prints}", flush=True)
    sealed = [
        sealing.seal(private, key, to_bytes(e[s]), sealing.context_for(fields["run"], s + 1, shape))
        for s, key in enumerate(fields["keys"])
    ]
    return _reply({"key": public, "sealed": sealed}, msg)


def _pairwise_e(fields, design, s: int, shape, private: bytes, seed: int):
    """E_s from the noise site s shares with every other site (:mod:`dpcore.protocol.pairwise`).

    Each pair's stream is seeded by their X25519 agreement (the keys relayed in the
    message), or, to reproduce the in-process run, by ``pair_rng(seed, s, t)``.
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
                else np.random.default_rng(sealing.pair_seed(private, key, fields["run"], s, t))
            )
    return pair_noise_step(design, s, shape, symmetric=fields["kind"] == "pca", streams=streams)


@client_app.query("release")
def release(msg: Message, context: Context) -> Message:
    """Site s: open E_s, draw G_s and answer Â_s = a_s + E_s + F_s + G_s (Alg. 1 steps 5–6)."""
    cfg = context.node_config
    s = int(cfg["site"]) - 1
    fields = _fields(msg)
    shape = tuple(fields["shape"])
    x = _site_data(context)
    value = site_statistic(x, fields["kind"])
    own_tau = site_tau([x.shape[0]], [float(cfg["epsilon"])], [float(cfg["delta"])])[0]
    if fields["tau"][s] != own_tau:  # the design must be made for this site's own promise
        raise ValueError(f"the design uses τ = {fields['tau'][s]!r}; this site needs {own_tau!r}")
    design = _design(fields)
    private = context.state["cape"]["private"]
    seed = int(cfg.get("seed", -1))
    if fields.get("scheme", "helper") == "pairwise":
        e = _pairwise_e(fields, design, s, shape, private, seed)
        f = np.zeros(shape)
    else:
        sealed = sealing.open_sealed(
            private,
            fields["noise-key"],
            fields["sealed"],
            sealing.context_for(fields["run"], s + 1, shape),
        )
        e = from_bytes(sealed, shape)
        f = from_bytes(fields["f"], shape)
    rng = _stream(seed, "site", s)
    _, out = site_step(
        value, e, f, float(design.tau_g[s]), symmetric=fields["kind"] == "pca", rng=rng
    )
    fault = _fault(msg, context)
    if fault == "hang":
        time.sleep(3600)
    if fault == "crash":
        os._exit(1)
    if fault == "nan":
        out = out.copy()
        out.flat[0] = np.nan
    if fault == "shape":
        out = out[..., :-1]
    return _reply({"released": to_bytes(out), "shape": list(out.shape)}, msg)
