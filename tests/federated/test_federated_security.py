"""Flower's own security on the loopback federation (issue #48; federated.security).

The secured federation (``Federation(..., secure=True)``): TLS on the SuperLink, SuperNode
authentication with the nodes' keys registered through the Control API, and a SuperExec
secret per machine (``--isolation process``, each party's own SuperExec). An outside process
that knows the SuperLink's address and trusts its CA, like the attacker of issue #48, tries
to claim the ServerApp's task over the SuperLink's Runtime API while a run waits for it.
Ports 9600 (SuperLink) and 9601 (the nodes' runtime APIs at 127.0.0.2, …).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("flwr")
pytest.importorskip("cryptography")

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_ssh_private_key, load_ssh_public_key

from federated import launcher, security
from federated.__main__ import main
from federated.launcher import Federation, demo_data

PORT = 9600
START_LIMIT = 120.0
RUN_LIMIT = 120.0
ATTACK_SECONDS = 4.0

# An outsider: a plain Python process with Flower's own Runtime API client, as a SuperExec
# would call AcquireTask (flwr/supercore/superexec/run_superexec.py), and nothing of ours.
ATTACKER = r"""
import json, secrets, sys, time
import httpx
from flwr.proto.runtime_pb2 import AcquireTaskRequest, PullTaskInputRequest
from flwr.supercore.constant import TaskType
from flwr.supercore.error import FlowerError
from flwr.supercore.interceptors.http.runtime_token import RuntimeTokenHttpInterceptor
from flwr.supercore.interceptors.http.runtime_version import RuntimeVersionHttpInterceptor
from flwr.supercore.interceptors.http.superexec_auth import SuperExecAuthHttpInterceptor
from flwr.supercore.runtime.runtime_http_client import RuntimeHttpClient

address, ca, mode, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
interceptors = [RuntimeVersionHttpInterceptor(component_name="SuperExec")]
if mode == "wrong":
    secret = secrets.token_hex(32).encode()
elif mode.startswith("secret="):
    secret = open(mode[7:], "rb").read()
else:
    secret = None
if secret is not None:
    interceptors.append(SuperExecAuthHttpInterceptor(
        master_secret=secret, protected_methods={"/flwr.proto.Runtime/AcquireTask"}))
if mode == "token":
    interceptors.append(RuntimeTokenHttpInterceptor(secrets.token_urlsafe(32)))
client = RuntimeHttpClient.from_server_address(
    address, insecure=mode == "plain", root_certificates=None if mode == "plain" else ca,
    interceptors=interceptors)
out = []
end = time.monotonic() + seconds
while True:
    try:
        if mode == "token":
            res = client.PullTaskInput(PullTaskInputRequest())
            out.append({"ok": True, "run": res.run.run_id})
        else:
            res = client.AcquireTask(AcquireTaskRequest(supported_task_types=list(TaskType)))
            out.append({"ok": True, "task": res.HasField("task"), "token": bool(res.token)})
    except httpx.HTTPStatusError as err:
        flower = FlowerError.from_json(err.response.text)
        out.append({"ok": False, "status": err.response.status_code,
                    "code": int(flower.code) if flower else None})
    except httpx.HTTPError as err:
        out.append({"ok": False, "error": type(err).__name__})
    if time.monotonic() > end:
        break
    time.sleep(0.1)
print(json.dumps(out))
"""


def _attack(fed, mode, seconds=ATTACK_SECONDS, address=f"127.0.0.1:{PORT}"):
    """Run the outsider against ``address`` for ``seconds``; each attempt's outcome."""
    script = fed.workdir / "attacker.py"
    script.write_text(ATTACKER)
    ca = fed.material.party("analyst") / security.CA_CERT
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not our checkout
    done = subprocess.run(
        [sys.executable, str(script), address, str(ca), mode, str(seconds)],
        capture_output=True, text=True, timeout=60 + seconds, env=env, cwd=fed.workdir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _runs(fed):
    """The SuperLink's runs and their status, from the Control API (``flwr ls``)."""
    done = subprocess.run(
        [fed._bin("flwr"), "ls", "cape", "--format", "json"],
        env=fed.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)["runs"]


def _new_run(fed, known):
    """The id of the run submitted after ``known`` once the SuperLink lists it."""
    deadline = time.monotonic() + RUN_LIMIT
    while not (new := [r["run-id"] for r in _runs(fed) if r["run-id"] not in known]):
        assert time.monotonic() < deadline, "the submitted run never appeared"
        time.sleep(0.2)
    (run_id,) = new
    return run_id


# --- the command, without a network ----------------------------------------------------------


def test_the_secure_command_makes_what_flower_loads(tmp_path, capsys):
    """Every file exists once, private ones 0600; the certificate names localhost, 127.0.0.1
    and the host given and is signed by the CA; the node keys are the P-384 OpenSSH keys
    Flower's SuperNode and ``flwr supernode register`` load; the secrets differ per machine."""
    from flwr.supercore.primitives.asymmetric import uses_nist_ec_curve

    out = tmp_path / "fed"
    assert main(["secure", "--out", str(out), "--host", "agg.example", "10.1.2.3", "--sites",
                 "2"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    material = security.Material(out, 2)
    for path in out.rglob("*"):
        if path.is_file():
            assert str(path.relative_to(out)) in printed
            private = path.suffix in (".key", ".secret")
            assert (path.stat().st_mode & 0o777) == (0o600 if private else 0o644), path
    assert "kept by the aggregator only" in printed and "offline" in printed
    ca = x509.load_pem_x509_certificate(material.ca_cert.read_bytes())
    cert = x509.load_pem_x509_certificate(
        (material.party("aggregator") / security.LINK_CERT).read_bytes()
    )
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost", "agg.example"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == [
        "127.0.0.1",
        "10.1.2.3",
    ]
    for node in material.nodes:
        key = load_ssh_private_key(material.node_key(node).read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp384r1"
        public = load_ssh_public_key(material.node_public(node).read_bytes())
        assert isinstance(public, ec.EllipticCurvePublicKey) and uses_nist_ec_curve(public)
        assert public.public_numbers() == key.public_key().public_numbers()
    secrets = {material.secret(p).read_bytes() for p in ["aggregator", *material.nodes]}
    assert len(secrets) == 4 and all(len(s) == 64 for s in secrets)
    # then every machine's commands, built by the functions the secured launcher uses
    assert printed.rstrip().endswith(security.recipe(2, "10.1.2.3"))
    # never overwrites: a second call refuses, one line and rc 2
    assert main(["secure", "--out", str(out), "--sites", "2"]) == 2
    assert "File exists" in capsys.readouterr().err


def test_the_documented_recipe_is_the_commands_output():
    """docs/federated.md's recipe block is what ``secure --host agg.example --sites 2`` prints."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "federated.md").read_text()
    assert "```\n" + security.recipe(2, "agg.example") + "\n```" in doc


# --- the secured federation ----------------------------------------------------------------


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    work = tmp_path_factory.mktemp("flower-secure")
    data = demo_data(work / "data", 3, dim=4, seed=2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(launcher, "PORT_RANGE", (9600, 9699), raising=False)
        fed = Federation(data, [1.0] * 3, [1e-5] * 3, seed=5, port=PORT, workdir=work,
                         secure=True)  # fmt: skip
    with fed:
        fed.start(time.monotonic() + START_LIMIT)
        yield fed


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_an_outsider_cannot_claim_the_serverapp_task(secured):
    """The ServerApp's SuperExec is held (SIGSTOP) while a run is submitted, so the run's
    ServerApp task waits, pending, for whoever claims it first. An outsider that trusts the
    CA asks the SuperLink's Runtime API for it (AcquireTask) every 0.1 s for 4 s with no
    secret, then with a wrong one, then tries a guessed task token: every attempt is refused
    (401, Flower's RUNTIME_AUTHENTICATION_FAILED) and the run stays pending; a plain-HTTP
    client gets no HTTP answer at all; site 1's runtime API refuses a request without its
    secret too. The SuperExec resumed, the run releases. The control:
    the same outsider with the aggregator's secret is answered, and claims the pending task
    (and its token) of a second run, which is then stopped."""
    fed = secured
    fed.pause("superexec aggregator")
    try:
        output, _ = fed.submit(kind="mean", design="joint", timeout=60.0, tag="attacked")
        run_id = _new_run(fed, set())
        (run,) = [r for r in _runs(fed) if r["run-id"] == run_id]
        assert "pending" in run["status"].lower(), run
        for mode in ("none", "wrong", "token"):
            attempts = _attack(fed, mode)
            assert len(attempts) >= 10, (mode, attempts)
            assert all(a == {"ok": False, "status": 401, "code": 1008} for a in attempts), mode
        plain = _attack(fed, "plain", seconds=1.0)
        assert plain and all(not a["ok"] and "error" in a for a in plain), plain
        # a SuperNode's runtime API (plain HTTP on its loopback address) wants its own secret
        host, port = fed.node_address(1)
        node = _attack(fed, "plain", seconds=0.5, address=f"{host}:{port}")
        assert node and all(a == {"ok": False, "status": 401, "code": 1008} for a in node), node
        (run,) = [r for r in _runs(fed) if r["run-id"] == run_id]
        assert "pending" in run["status"].lower(), run  # nobody claimed it
    finally:
        fed.pause("superexec aggregator", resume=True)
    result = fed.wait(output, time.monotonic() + RUN_LIMIT, tag="attacked")
    assert result["ok"], result
    (run,) = [r for r in _runs(fed) if r["run-id"] == run_id]  # the real ServerApp's
    assert run["status"].split(":")[0] in ("running", "finished"), run
    # the control: the same outsider holding the aggregator's secret claims a pending task
    secret = f"secret={fed.material.secret('aggregator')}"
    assert _attack(fed, secret, seconds=0.0) == [{"ok": True, "task": False, "token": False}]
    fed.pause("superexec aggregator")
    try:
        fed.submit(kind="mean", design="joint", timeout=60.0, tag="control")
        second = _new_run(fed, {run_id})
        claimed = _attack(fed, secret, seconds=0.0)
        assert claimed == [{"ok": True, "task": True, "token": True}], claimed
        stop = [fed._bin("flwr"), "stop", second, "cape"]
        subprocess.run(stop, env=fed.env, capture_output=True, timeout=60, check=True)
    finally:
        fed.pause("superexec aggregator", resume=True)


def _supernode(fed, tmp_path, key_args, name):
    """Start a SuperNode outside the registry against the secured SuperLink; (code, log)."""
    log = tmp_path / f"{name}.log"
    args = [
        fed._bin("flower-supernode"),
        "--root-certificates", str(fed.material.party("analyst") / security.CA_CERT),
        "--superlink", f"127.0.0.1:{PORT}",
        "--host", "127.0.0.40", "--port", str(PORT + 1),
        "--max-retries", "1", "--max-wait-time", "20",
        *key_args,
    ]  # fmt: skip
    with log.open("w") as out:
        done = subprocess.run(args, env=fed.env, stdout=out, stderr=subprocess.STDOUT,
                              timeout=90, cwd=tmp_path)  # fmt: skip
    return done.returncode, log.read_text(errors="replace")


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_an_unregistered_supernode_cannot_join(secured, tmp_path):
    """A SuperNode with a valid P-384 key that nobody registered is refused at activation
    (FLEET_NODE_ACTIVATION_FAILED, 2004); one without a key, which would register itself,
    is refused registration (FLEET_SUPERNODE_REGISTRATION_DISABLED, 2001). Neither joins."""
    private, _ = security.node_keypair()
    key = tmp_path / "stranger.key"
    key.write_bytes(private)
    key.chmod(0o600)
    before = _node_ids(secured)
    code, log = _supernode(secured, tmp_path, ["--auth-supernode-private-key", str(key)], "k")
    assert code != 0 and "Failed to initialize the connection" in log and "2004" in log, log
    code, log = _supernode(secured, tmp_path, [], "nokey")
    assert code != 0 and "Failed to initialize the connection" in log and "2001" in log, log
    assert _node_ids(secured) == before


def _node_ids(fed):
    done = subprocess.run(
        [fed._bin("flwr"), "supernode", "ls", "cape", "--format", "json"],
        env=fed.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted(n["node-id"] for n in json.loads(done.stdout)["nodes"])


# An outsider on the Control API: no account, no key, not even the CA (verification off).
REGISTRAR = r"""
import json, sys
from cryptography.hazmat.primitives.serialization import load_ssh_public_key
from flwr.proto.control_pb2 import RegisterNodeRequest
from flwr.supercore.control import ControlHttpClient
from flwr.supercore.primitives.asymmetric import public_key_to_bytes

client = ControlHttpClient(f"https://{sys.argv[1]}", verify=False)
key = public_key_to_bytes(load_ssh_public_key(open(sys.argv[2], "rb").read()))
node = client.RegisterNode(RegisterNodeRequest(public_key=key)).node_id
print(json.dumps({"node-id": str(node)}))
"""


@pytest.mark.slow
@pytest.mark.xdist_group("federated")
def test_the_control_api_admits_whoever_reaches_the_port(secured, tmp_path):
    """What TLS and node authentication do not stop, in open-source Flower 1.42: the
    Control API has no authentication (flwr/superlink/config_loader.py: a no-op plugin
    unless Flower's OIDC plugin is installed), so an outsider that reaches the SuperLink's
    port, without an account and without checking its certificate, registers a SuperNode
    key of its own. The recipe's answer is the firewall (docs/federated.md)."""
    _, public = security.node_keypair()
    (tmp_path / "outsider.pub").write_bytes(public)
    (tmp_path / "registrar.py").write_text(REGISTRAR)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "registrar.py"), f"127.0.0.1:{PORT}",
         str(tmp_path / "outsider.pub")],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    node = json.loads(done.stdout.strip().splitlines()[-1])["node-id"]
    try:
        assert node in _node_ids(secured)
    finally:
        unregister = [secured._bin("flwr"), "supernode", "unregister", node, "cape"]
        subprocess.run(unregister, env=secured.env, capture_output=True, timeout=60, check=True)
