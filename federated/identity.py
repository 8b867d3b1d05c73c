"""Who is who in a federation: long-term identity keys and the manifest every party pins (#48).

Each party — the noise generator and every site — holds an Ed25519 identity key made once
(``python -m federated keys``), and every party keeps the same **federation manifest**
(``python -m federated manifest``): the noise generator's and every site's public identity key,
each site's N_s, ε_s and δ_s, and the designs and schemes the federation accepts. A run's
fresh X25519 keys are signed with the identity keys (:func:`sign_run_key`), so

* a site opens its E_s only from the pinned noise generator, and the noise generator seals
  only to pinned sites: a relaying aggregator can neither stand in for the noise generator
  nor invent a site (which would let it learn E's from the zero sum);
* every party builds the design from the manifest, never from numbers the aggregator relays:
  an aggregator that inflates the others' N_s to shrink a site's G is refused by name.

Ed25519 (RFC 8032) from ``cryptography``. The manifest is JSON; its digest (SHA-256 of its
canonical form, :func:`Manifest.digest`) is in every signature, so parties with different
manifests cannot be mixed in one run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

MANIFEST_VERSION = "cape-federation/1"
DESIGNS = ("joint", "cape")
SCHEMES = ("helper", "pairwise")
NOISE = "noise generator"
RAW = serialization.Encoding.Raw


def fingerprint(public: bytes) -> str:
    """The first 16 hex digits of SHA-256 of a raw public key, in groups of four."""
    digest = hashlib.sha256(public).hexdigest()[:16]
    return " ".join(digest[i : i + 4] for i in range(0, 16, 4))


def new_identity(path: str | Path) -> bytes:
    """Write a fresh Ed25519 private key to ``path`` (raw 32 bytes, hex, mode 600) and
    ``path`` + ``.pub`` (its raw public key, hex); return the public key.

    Raises
    ------
    FileExistsError
        If ``path`` exists: an identity is made once and kept.
    """
    path = Path(path)
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(raw.hex() + "\n")
    public = key.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)
    Path(f"{path}.pub").write_text(public.hex() + "\n")
    return public


def load_identity(path: str | Path) -> Ed25519PrivateKey:
    """The private identity key :func:`new_identity` wrote; ValueError naming the file if it
    does not hold one."""
    try:
        raw = bytes.fromhex(Path(path).read_text().strip())
        return Ed25519PrivateKey.from_private_bytes(raw)
    except ValueError as err:
        raise ValueError(f"{path} does not hold an Ed25519 identity key ({err})") from None


def public_of(key: Ed25519PrivateKey) -> bytes:
    """The raw public key of an identity."""
    return key.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)


def read_public(path: str | Path) -> bytes:
    """A raw public identity key from a ``.pub`` file (hex); ValueError naming the file."""
    try:
        raw = bytes.fromhex(Path(path).read_text().strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ValueError(f"{path} does not hold a 32-byte Ed25519 public key in hex")
    return raw


def _statement(digest: str, run_id: int, party: str, key: bytes) -> bytes:
    return f"cape-lab run key | manifest {digest} | run {run_id} | {party} | {key.hex()}".encode()


def sign_run_key(
    identity: Ed25519PrivateKey, digest: str, run_id: int, party: str, key: bytes
) -> bytes:
    """The identity's signature of a party's fresh X25519 key for one run of one manifest."""
    return identity.sign(_statement(digest, run_id, party, key))


def verify_run_key(
    public: bytes, signature: bytes, digest: str, run_id: int, party: str, key: bytes
) -> bool:
    """Whether ``signature`` is ``public``'s signature of ``key`` for this run and party."""
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(
            signature, _statement(digest, run_id, party, key)
        )
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class Site:
    """One site as the manifest pins it (1-based ``site``)."""

    site: int
    identity: bytes
    n: int
    epsilon: float
    delta: float


@dataclass(frozen=True)
class Manifest:
    """The federation every party pins: who takes part and with which promises."""

    noise: bytes
    sites: tuple[Site, ...]
    designs: tuple[str, ...] = DESIGNS
    schemes: tuple[str, ...] = SCHEMES

    def to_json(self) -> dict:
        """The manifest as JSON-ready data (keys in hex)."""
        return {
            "version": MANIFEST_VERSION,
            "noise generator": self.noise.hex(),
            "sites": [
                {
                    "site": s.site,
                    "identity": s.identity.hex(),
                    "n": s.n,
                    "epsilon": s.epsilon,
                    "delta": s.delta,
                }
                for s in self.sites
            ],
            "designs": list(self.designs),
            "schemes": list(self.schemes),
        }

    def digest(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, no spaces), hex: the manifest's name
        in every signature."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def site(self, number: int) -> Site:
        """The pinned site ``number`` (1-based); KeyError if the manifest has none."""
        for s in self.sites:
            if s.site == number:
                return s
        raise KeyError(f"site {number} is not in the manifest")

    @property
    def n(self) -> list[int]:
        return [s.n for s in self.sites]

    @property
    def epsilon(self) -> list[float]:
        return [s.epsilon for s in self.sites]

    @property
    def delta(self) -> list[float]:
        return [s.delta for s in self.sites]

    @classmethod
    def from_json(cls, data: object, source: str = "the manifest") -> Manifest:
        """Parse and check a manifest; ValueError naming ``source`` and the first problem."""

        def bad(why: str) -> ValueError:
            return ValueError(f"{source}: {why}")

        if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
            raise bad(f"not a {MANIFEST_VERSION} manifest")
        noise = _key(data.get("noise generator"), "noise generator", bad)
        raw_sites = data.get("sites")
        if not isinstance(raw_sites, list) or len(raw_sites) < 2:
            raise bad("sites must list at least 2 sites")
        sites = []
        for i, entry in enumerate(raw_sites, start=1):
            if not isinstance(entry, dict) or entry.get("site") != i:
                raise bad(f"entry {i} of sites must be site {i}")
            n, eps, dlt = entry.get("n"), entry.get("epsilon"), entry.get("delta")
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 10**9:
                raise bad(f"site {i}: n must be an integer in [1, 10⁹]; got {n!r}")
            if not (_real(eps) and 0 < float(eps) <= 1e6):  # type: ignore[arg-type]
                raise bad(f"site {i}: epsilon must be in (0, 10⁶]; got {eps!r}")
            if not (_real(dlt) and 0 < float(dlt) < 1):  # type: ignore[arg-type]
                raise bad(f"site {i}: delta must be in (0, 1); got {dlt!r}")
            key = _key(entry.get("identity"), f"site {i}", bad)
            sites.append(Site(i, key, n, float(eps), float(dlt)))  # type: ignore[arg-type]
        keys = [noise, *(s.identity for s in sites)]
        if len(set(keys)) != len(keys):
            raise bad("every party needs an identity key of its own")
        designs = tuple(data.get("designs", DESIGNS))
        schemes = tuple(data.get("schemes", SCHEMES))
        if not designs or not set(designs) <= set(DESIGNS):
            raise bad(f"designs must be a non-empty list of {DESIGNS}; got {list(designs)}")
        if not schemes or not set(schemes) <= set(SCHEMES):
            raise bad(f"schemes must be a non-empty list of {SCHEMES}; got {list(schemes)}")
        return cls(noise, tuple(sites), designs, schemes)

    @classmethod
    def read(cls, path: str | Path) -> Manifest:
        """A manifest file; ValueError naming it if it cannot be read or is not one."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"{path}: cannot read the manifest ({err})") from None
        return cls.from_json(data, str(path))

    def write(self, path: str | Path) -> None:
        """Write the manifest as indented JSON."""
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")


def _real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _key(value: object, who: str, bad) -> bytes:
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise bad(f"{who}: identity must be a 32-byte Ed25519 public key in hex")
    return raw
