"""Flower's own security for the CAPE federation (issue #48): ``python -m federated secure``.

Flower 1.42's SuperLink serves its Fleet API (SuperNodes), Control API (``flwr run``,
``flwr supernode register``) and Runtime API (SuperExec, ServerApp) on one HTTP port. Three of
its mechanisms close that port to outsiders, and :func:`make_material` makes what each needs:

- **TLS**: a CA of the consortium and the SuperLink's certificate, whose subject alternative
  names cover ``localhost``, 127.0.0.1 and the hostnames given (``--ssl-ca-certfile``,
  ``--ssl-certfile``, ``--ssl-keyfile`` on the SuperLink; ``--root-certificates`` everywhere
  else, ``root-certificates`` in the analyst's Flower config).
- **SuperNode authentication**: one ECDSA P-384 key pair per SuperNode in OpenSSH format, the
  format ``flower-supernode --auth-supernode-private-key`` loads (``load_ssh_private_key``) and
  ``flwr supernode register`` reads (``load_ssh_public_key``, a NIST curve); with
  ``flower-superlink --enable-supernode-auth`` the Fleet API refuses self-registration
  (``RegisterNode``) and admits only keys registered through the Control API.
- **SuperExec authentication**: a shared secret per machine, between its SuperLink or SuperNode
  and the SuperExec that claims its tasks (``--superexec-auth-secret-file``, read as raw bytes;
  ``AcquireTask`` must then carry an HMAC-SHA256 of the request under a key derived from it).
  Flower honours it only with ``--isolation process`` (it ignores the secret in the default
  ``subprocess`` mode), so the SuperExec is then started on its own. Each machine has its own
  secret: a site that knew the aggregator's could claim the ServerApp's task.

Everything here is the standard library and ``cryptography``.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_CERT = "ca.crt"
CA_KEY = "ca.key"
LINK_CERT = "superlink.crt"
LINK_KEY = "superlink.key"
NODE_KEY = "supernode.key"  # + ".pub"
SECRET = "superexec.secret"
DEFAULT_NAMES = ("localhost", "127.0.0.1")


@dataclass(frozen=True)
class Material:
    """Where :func:`make_material` wrote each party's files (``out``/<party>/…)."""

    out: Path
    sites: int

    def party(self, name: str) -> Path:
        """The directory of one party: ``aggregator``, ``noise``, ``site1``, …, ``ca``."""
        return self.out / name

    @property
    def nodes(self) -> list[str]:
        """The SuperNodes' party names: the noise generator, then site 1 … S."""
        return ["noise"] + [f"site{s}" for s in range(1, self.sites + 1)]

    @property
    def ca_cert(self) -> Path:
        return self.party("aggregator") / CA_CERT

    def node_key(self, node: str) -> Path:
        return self.party(node) / NODE_KEY

    def node_public(self, node: str) -> Path:
        """The public key the aggregator registers (a copy kept beside its own files)."""
        return self.party("aggregator") / "supernodes" / f"{node}.pub"

    def secret(self, party: str) -> Path:
        return self.party(party) / SECRET


def _write(path: Path, data: bytes, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL  # never overwrite a key
    fd = os.open(path, flags, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    names: Sequence[str],
    days: int,
) -> x509.Certificate:
    """A CA certificate (``issuer`` None: self-signed) or a server certificate for ``names``."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, signer = issuer if issuer else (name, key)
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()),
            critical=False,
        )
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.BasicConstraints(ca=True, path_length=0), critical=True
        ).add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
    else:
        builder = (
            builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.SubjectAlternativeName([_general_name(n) for n in names]), critical=False
            )
        )
    return builder.sign(signer, hashes.SHA384())


def node_keypair() -> tuple[bytes, bytes]:
    """A SuperNode authentication key pair: (OpenSSH private key, OpenSSH public key line),
    ECDSA on P-384, as ``ssh-keygen -t ecdsa -b 384 -N ""`` makes it."""
    key = ec.generate_private_key(ec.SECP384R1())
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private, public + b"\n"


def make_material(
    out: Path, hosts: Sequence[str], sites: int, *, days: int = 365
) -> tuple[Material, list[tuple[Path, str, str]]]:
    """Write the secured recipe's files under ``out``, one directory per machine.

    ``hosts``: the names the SuperLink is reached by (besides localhost and 127.0.0.1).
    Returns the layout and, for each file, (path, what it is for, who keeps it). Refuses to
    overwrite any file (FileExistsError)."""
    if not 2 <= sites <= 100:
        raise ValueError(f"sites must be in [2, 100]; got {sites}")
    material = Material(Path(out), sites)
    names = list(dict.fromkeys([*DEFAULT_NAMES, *hosts]))
    rows: list[tuple[Path, str, str]] = []

    def put(path: Path, data: bytes, private: bool, what: str, who: str) -> None:
        _write(path, data, private)
        rows.append((path, what, who))

    ca_key = ec.generate_private_key(ec.SECP384R1())
    ca = _certificate("CAPE federation CA", ca_key, None, (), days)
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    put(material.party("ca") / CA_KEY, _pem_key(ca_key), True,
        "signs the SuperLink's certificate; needed only to make a new one",
        "the consortium, offline (on no machine of the federation)")  # fmt: skip
    link_key = ec.generate_private_key(ec.SECP384R1())
    link = _certificate(names[-1], link_key, (ca.subject, ca_key), names, days)
    agg = material.party("aggregator")
    put(
        agg / LINK_CERT,
        link.public_bytes(serialization.Encoding.PEM),
        False,
        f"the SuperLink's TLS certificate (names: {', '.join(names)})",
        "the aggregator",
    )
    put(agg / LINK_KEY, _pem_key(link_key), True,
        "the SuperLink's TLS private key", "the aggregator only")  # fmt: skip
    for party in ["aggregator", *material.nodes, "analyst"]:
        put(
            material.party(party) / CA_CERT,
            ca_pem,
            False,
            "the CA certificate every client verifies the SuperLink with",
            "everyone",
        )
    put(material.secret("aggregator"), secrets.token_hex(32).encode(), True,
        "SuperExec secret: the SuperLink's and its ServerApp SuperExec's",
        "the aggregator only")  # fmt: skip
    for node in material.nodes:
        who = "the noise generator" if node == "noise" else f"site {node[4:]}"
        private, public = node_keypair()
        put(
            material.node_key(node),
            private,
            True,
            "the SuperNode's authentication key (--auth-supernode-private-key)",
            f"{who} only",
        )
        put(material.party(node) / f"{NODE_KEY}.pub", public, False,
            "its public key", f"{who}; sent to the aggregator")  # fmt: skip
        put(
            material.node_public(node),
            public,
            False,
            f"{who}'s public key, registered with flwr supernode register",
            "the aggregator",
        )
        put(
            material.secret(node),
            secrets.token_hex(32).encode(),
            True,
            "SuperExec secret: this SuperNode's and its ClientApp SuperExec's",
            f"{who} only",
        )
    return material, rows


def superlink_args(material: Material) -> list[str]:
    """``flower-superlink`` options of the secured recipe (besides ``--host``/``--port``)."""
    agg = material.party("aggregator")
    return [
        "--ssl-ca-certfile", str(agg / CA_CERT),
        "--ssl-certfile", str(agg / LINK_CERT),
        "--ssl-keyfile", str(agg / LINK_KEY),
        "--enable-supernode-auth",
        "--isolation", "process",
        "--superexec-auth-secret-file", str(material.secret("aggregator")),
    ]  # fmt: skip


def supernode_args(material: Material, node: str) -> list[str]:
    """``flower-supernode`` options of the secured recipe for ``node`` (``noise``, ``site1``…)."""
    return [
        "--root-certificates", str(material.party(node) / CA_CERT),
        "--auth-supernode-private-key", str(material.node_key(node)),
        "--isolation", "process",
        "--superexec-auth-secret-file", str(material.secret(node)),
    ]  # fmt: skip


def superexec_args(material: Material, party: str, runtime: str) -> list[str]:
    """``flower-superexec`` options for ``party``'s own SuperExec at ``runtime`` (host:port):
    TLS to the SuperLink for the aggregator; a node's runtime API listens on loopback only."""
    tls = (
        ["--root-certificates", str(material.party(party) / CA_CERT)]
        if party == "aggregator"
        else ["--insecure"]
    )
    secret = ["--superexec-auth-secret-file", str(material.secret(party))]
    return ["--runtime-api-address", runtime, *tls, *secret]


def flower_config(address: str, ca_cert: Path) -> str:
    """The analyst's ``$FLWR_HOME/config.toml``: the SuperLink ``cape`` over TLS."""
    return (
        '[superlink]\ndefault = "cape"\n\n[superlink.cape]\n'
        f'address = "{address}"\nroot-certificates = "{ca_cert}"\n'
    )


def describe(rows: Sequence[tuple[Path, str, str]], out: Path) -> str:
    """The command's table: every file, what it is for and who keeps it."""
    lines = []
    for path, what, who in rows:
        lines.append(f"  {path.relative_to(out)}\n      {what}; kept by {who}")
    return "\n".join(lines)


def _shell(words: Sequence[str], width: int = 96) -> str:
    """One command, its options kept with their values, wrapped with backslashes."""
    groups: list[str] = [words[0]]
    for word in words[1:]:
        if word.startswith("--") or groups[-1].count(" ") or not groups[-1].startswith("--"):
            groups.append(word)
        else:
            groups[-1] += " " + word
    lines = [groups[0]]
    for group in groups[1:]:
        if len(lines[-1]) + 1 + len(group) + 2 > width:
            lines[-1] += " \\"
            lines.append("    " + group)
        else:
            lines[-1] += " " + group
    return "\n".join(lines)


def recipe(sites: int, host: str, port: int = 9091) -> str:
    """The secured recipe's commands, each run in the directory holding that machine's files
    (``aggregator/``, ``noise/``, ``site1/`` …): the SuperLink on ``host``:``port``, the
    SuperNodes' runtime APIs on their own 127.0.0.1:``port`` + 10 + i (noise generator i = 0)."""
    here = Material(Path("."), sites)

    def local(party: str, words: list[str]) -> list[str]:
        return [w.removeprefix(f"{party}/") for w in words]

    agg = "aggregator"
    out = [
        "# aggregator: the SuperLink (TLS, SuperNode and SuperExec authentication), its own",
        "# SuperExec (it starts the ServerApps), then every SuperNode's key registered",
        _shell(
            [
                "flower-superlink",
                *local(agg, superlink_args(here)),
                "--host",
                "0.0.0.0",
                "--port",
                str(port),
                "--disable-runtime-dependency-installation",
            ]
        ),
        _shell(["flower-superexec", *local(agg, superexec_args(here, agg, f"127.0.0.1:{port}"))]),
    ]
    for node in here.nodes:
        public = str(here.node_public(node)).removeprefix(f"{agg}/")
        out.append(f"flwr supernode register {public} cape")
    for index, node in enumerate(here.nodes):
        runtime = port + 10 + index
        if node == "noise":
            out.append(
                "# the noise generator (its own machine, or the aggregator's if you trust that)"
            )
            config = "role='noise' identity='noise.key' manifest='federation.json'"
        else:
            out.append(
                f"# site {index}: its own machine and CSV (rows of norm ≤ 1), ε and δ as pinned"
            )
            config = (
                f"role='site' site={index} data='/data/{node}.csv' epsilon=1.0 delta=1e-5 "
                f"identity='{node}.key' manifest='federation.json'"
            )
        out.append(
            _shell(
                [
                    "flower-supernode",
                    *local(node, supernode_args(here, node)),
                    "--superlink",
                    f"{host}:{port}",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(runtime),
                    "--node-config",
                    f'"{config}"',
                ]
            )
        )
        out.append(
            _shell(
                [
                    "flower-superexec",
                    *local(node, superexec_args(here, node, f"127.0.0.1:{runtime}")),
                ]
            )
        )
    out.append("# the analyst: $FLWR_HOME/config.toml (ca.crt from analyst/), then flwr run")
    out += [
        "#   " + line
        for line in flower_config(f"{host}:{port}", Path("/path/to/ca.crt")).splitlines()
        if line
    ]
    out.append(
        _shell(
            [
                "flwr",
                "run",
                "federated/app",
                "cape",
                "--run-config",
                f"\"kind='pca' design='joint' sites={sites} k=2 "
                "output='/srv/cape/release.json' log='/srv/cape/run-log.jsonl'\"",
            ]
        )
    )
    return "\n".join(out)


def command(out: Path, hosts: Sequence[str], sites: int, days: int = 365, port: int = 9091) -> int:
    """``python -m federated secure``: make the files, print what each is for; 0, or 2."""
    try:
        _, rows = make_material(out, hosts, sites, days=days)
    except (FileExistsError, OSError, ValueError) as err:
        print(f"secure: {err}", file=sys.stderr)
        return 2
    print(f"Flower security material in {out}, one directory per machine:")
    print(describe(rows, Path(out)))
    print(
        "\nCopy each directory to its machine (aggregator/, noise/, site1/ … , analyst/) over a"
        "\nchannel you trust and keep ca/ offline. Then, each in the directory holding that"
        '\nmachine\'s files (docs/federated.md, "Recipe for three machines"):\n'
    )
    print(recipe(sites, hosts[-1] if hosts else "localhost", port))
    return 0
