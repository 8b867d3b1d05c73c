"""End-to-end encryption of the noise generator's E_s to site s (#37).

X25519 key agreement (RFC 7748), HKDF-SHA256 (RFC 5869) and ChaCha20-Poly1305 (RFC 8439)
from ``cryptography``. The aggregator relays the public keys and the ciphertexts; without a
private key it cannot read an E_s, and the AEAD tag makes any change to a ciphertext, or
sending it to another site or run (the associated data), fail to open.

Trust: the aggregator is honest but curious. It could substitute its own public keys for
the sites' (a man in the middle); :func:`fingerprint` lets parties compare keys out of band.
"""

from __future__ import annotations

import hashlib
import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

INFO = b"cape-lab federated E_s, X25519-HKDF-SHA256-ChaCha20Poly1305"
NONCE = 12
RAW = serialization.Encoding.Raw


def keypair() -> tuple[bytes, bytes]:
    """A fresh X25519 (private, public) key pair, 32 raw bytes each."""
    private = X25519PrivateKey.generate()
    raw_private = private.private_bytes(
        RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return raw_private, private.public_key().public_bytes(RAW, serialization.PublicFormat.Raw)


def public_of(private: bytes) -> bytes:
    """The raw public key of a raw X25519 private key."""
    key = X25519PrivateKey.from_private_bytes(private).public_key()
    return key.public_bytes(RAW, serialization.PublicFormat.Raw)


def fingerprint(public: bytes) -> str:
    """The first 16 hex digits of SHA-256 of a public key, to compare out of band."""
    return hashlib.sha256(public).hexdigest()[:16]


def _derive(private: bytes, peer_public: bytes, info: bytes, length: int = 32) -> bytes:
    """HKDF-SHA256 of the X25519 secret of ``private`` and ``peer_public``, bound to ``info``
    (both ends derive the same bytes; the relaying aggregator cannot)."""
    shared = X25519PrivateKey.from_private_bytes(private).exchange(
        X25519PublicKey.from_public_bytes(peer_public)
    )
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(shared)


def seal(private: bytes, peer_public: bytes, plaintext: bytes, context: bytes) -> bytes:
    """Nonce ‖ ChaCha20-Poly1305(plaintext), bound to ``context`` (associated data)."""
    return seal_with_key(_derive(private, peer_public, INFO), plaintext, context)


def open_sealed(private: bytes, peer_public: bytes, sealed: bytes, context: bytes) -> bytes:
    """The plaintext of :func:`seal`; ``cryptography``'s InvalidTag if anything was changed."""
    return open_with_key(_derive(private, peer_public, INFO), sealed, context)


def context_for(run_id: int, site: int, shape: tuple[int, ...], release: int = 0) -> bytes:
    """The associated data of site ``site``'s E_s for release ``release`` of run ``run_id``
    (one run may make several releases; no E_s can be moved to another one undetected)."""
    return f"run {run_id} | release {release} | site {site} | E shape {shape}".encode()


def pair_seed(
    private: bytes, peer_public: bytes, run_id: int, s: int, t: int, release: int = 0
) -> int:
    """The seed sites s and t share for release ``release`` of run ``run_id`` (pairwise
    scheme): HKDF of their X25519 secret, 128 bits; the same at both ends, unknown to the
    relaying aggregator, and another for every release (their noises are independent)."""
    lo, hi = sorted((s, t))
    info = f"cape-lab pairwise noise | run {run_id} | release {release} | sites {lo} {hi}"
    return int.from_bytes(_derive(private, peer_public, info.encode(), length=16), "big")


def release_key(private: bytes, peer_public: bytes, run_id: int, site: int, release: int) -> bytes:
    """The key site ``site``'s release ``release`` of run ``run_id`` is sealed under.

    HKDF-SHA256 of the site's and the noise generator's X25519 secret (both ends derive it),
    bound to the run, the release and the site. The aggregator holds the sealed release but
    not this key: the noise generator hands it over only for the sites the aggregator has
    not declared dropped, once per run (the sealed remedy, docs/federated.md, "Dropouts").
    """
    info = f"cape-lab release key | run {run_id} | release {release} | site {site}"
    return _derive(private, peer_public, info.encode())


def seal_with_key(key: bytes, plaintext: bytes, context: bytes) -> bytes:
    """Nonce ‖ ChaCha20-Poly1305(plaintext) under a 32-byte key, bound to ``context``."""
    nonce = os.urandom(NONCE)
    return nonce + ChaCha20Poly1305(key).encrypt(nonce, plaintext, context)


def open_with_key(key: bytes, sealed: bytes, context: bytes) -> bytes:
    """The plaintext of :func:`seal_with_key`; InvalidTag if anything was changed."""
    return ChaCha20Poly1305(key).decrypt(sealed[:NONCE], sealed[NONCE:], context)


def release_context(run_id: int, site: int, shape: tuple[int, ...], release: int = 0) -> bytes:
    """The associated data of site ``site``'s sealed Â_s for release ``release``."""
    return f"run {run_id} | release {release} | site {site} | Â shape {shape}".encode()
