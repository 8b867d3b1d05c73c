"""Identity keys and the federation manifest (issue #48; federated.identity, no network)."""

import json

import pytest

pytest.importorskip("cryptography")

from federated import identity
from federated.__main__ import main
from federated.protocol import manifest_tau, relayed_problem


@pytest.fixture
def parties(tmp_path):
    """Identity keys for a noise generator and three sites, and their manifest."""
    keys = {}
    for name in ("noise", "site1", "site2", "site3"):
        identity.new_identity(tmp_path / f"{name}.key")
        keys[name] = identity.load_identity(tmp_path / f"{name}.key")
    sites = tuple(
        identity.Site(s, identity.public_of(keys[f"site{s}"]), n, eps, 1e-5)
        for s, n, eps in ((1, 250, 0.5), (2, 350, 1.0), (3, 450, 2.0))
    )
    return keys, identity.Manifest(identity.public_of(keys["noise"]), sites)


def test_a_run_key_verifies_only_for_its_signer_run_party_and_manifest(parties):
    keys, manifest = parties
    digest = manifest.digest()
    key = bytes(range(32))
    sig = identity.sign_run_key(keys["site2"], digest, 7, "site 2", key)
    pinned = manifest.site(2).identity
    assert identity.verify_run_key(pinned, sig, digest, 7, "site 2", key)
    assert not identity.verify_run_key(manifest.site(1).identity, sig, digest, 7, "site 2", key)
    assert not identity.verify_run_key(pinned, sig, digest, 8, "site 2", key)  # another run
    assert not identity.verify_run_key(pinned, sig, digest, 7, "site 1", key)  # another party
    assert not identity.verify_run_key(pinned, sig, "0" * 64, 7, "site 2", key)
    assert not identity.verify_run_key(pinned, sig, digest, 7, "site 2", bytes(32))
    flipped = bytes([sig[0] ^ 1]) + sig[1:]  # one bit of R changed
    assert not identity.verify_run_key(pinned, flipped, digest, 7, "site 2", key)
    assert not identity.verify_run_key(b"short", sig, digest, 7, "site 2", key)


def test_the_manifest_round_trips_and_its_digest_names_its_content(parties, tmp_path):
    _, manifest = parties
    manifest.write(tmp_path / "fed.json")
    back = identity.Manifest.read(tmp_path / "fed.json")
    assert back == manifest and back.digest() == manifest.digest()
    data = manifest.to_json()
    data["sites"][1]["n"] = 351
    assert identity.Manifest.from_json(data).digest() != manifest.digest()


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d.update(version="x"), "not a cape-federation/1 manifest"),
        (lambda d: d["sites"].pop(), None),  # two sites remain: still a manifest
        (lambda d: d.update(sites=d["sites"][:1]), "sites must list at least 2 sites"),
        (lambda d: d["sites"][1].update(site=5), "entry 2 of sites must be site 2"),
        (lambda d: d["sites"][0].update(n=0), r"site 1: n must be an integer in \[1, 10⁹\]; got 0"),
        (lambda d: d["sites"][0].update(n=True), "site 1: n must be an integer"),
        (lambda d: d["sites"][2].update(epsilon=float("nan")), "site 3: epsilon must be in"),
        (lambda d: d["sites"][2].update(delta=1.0), r"site 3: delta must be in \(0, 1\); got 1.0"),
        (lambda d: d["sites"][1].update(identity="00"), "site 2: identity must be a 32-byte"),
        (lambda d: d["sites"][1].update(identity=d["noise generator"]), "every party needs an"),
        (lambda d: d.update(designs=["best"]), "designs must be a non-empty list"),
        (lambda d: d.update(schemes=[]), "schemes must be a non-empty list"),
    ],
)  # fmt: skip
def test_a_malformed_manifest_is_refused_with_its_first_problem(parties, change, why):
    _, manifest = parties
    data = json.loads(json.dumps(manifest.to_json()))
    change(data)
    if why is None:
        assert len(identity.Manifest.from_json(data).sites) == 2
        return
    with pytest.raises(ValueError, match=f"^fed.json: {why}"):
        identity.Manifest.from_json(data, "fed.json")


def test_an_identity_is_made_once_and_kept_private(tmp_path):
    identity.new_identity(tmp_path / "a.key")
    assert (tmp_path / "a.key").stat().st_mode & 0o077 == 0
    with pytest.raises(FileExistsError):
        identity.new_identity(tmp_path / "a.key")
    (tmp_path / "b.key").write_text("not hex\n")
    with pytest.raises(ValueError, match=r"b\.key does not hold an Ed25519 identity key"):
        identity.load_identity(tmp_path / "b.key")


def _fields(pinned, **changes):
    fields = {
        "manifest": pinned.digest(),
        "n": pinned.n,
        "tau": [float(t) for t in manifest_tau(pinned)],
        "releases": ["mean:joint:helper"],
    }
    return {**fields, **changes}


def test_relayed_numbers_are_checked_against_the_manifest(parties):
    _, m = parties
    d = m.digest()
    assert relayed_problem(_fields(m), m, d) is None
    tau = [float(t) for t in manifest_tau(m)]
    cases = {
        "the run names manifest 0000000000000000…": _fields(m, manifest="0" * 64),
        "the run lists 4 sites; the manifest pins 3 (site 4 is not in it)": _fields(
            m, n=[*m.n, 300]
        ),
        "the run lists 2 sites; the manifest pins 3": _fields(m, n=m.n[:2]),
        "site 2's N_s is relayed as 1050; the manifest pins 350": _fields(m, n=[250, 1050, 450]),
        "site 3's τ is relayed as": _fields(m, tau=[*tau[:2], tau[2] / 2]),
        "release mean:cape:pairwise is not allowed": _fields(m, releases=["mean:cape:pairwise"]),
    }
    narrow = identity.Manifest(m.noise, m.sites, designs=("joint",), schemes=("helper",))
    for why, fields in cases.items():
        manifest = narrow if "not allowed" in why else m
        fields = {**fields, "manifest": manifest.digest()} if "names" not in why else fields
        got = relayed_problem(fields, manifest, manifest.digest())
        assert got is not None and got.startswith(why), (why, got)
    own = relayed_problem(_fields(m, tau=[tau[0] / 2, *tau[1:]]), m, d, own_site=1)
    assert own.startswith("the design uses τ = ") and "this site needs" in own


def test_the_commands_make_keys_and_a_manifest(tmp_path, capsys):
    for name in ("noise", "s1", "s2"):
        assert main(["keys", "--out", str(tmp_path / f"{name}.key")]) == 0
    assert main(["keys", "--out", str(tmp_path / "s1.key")]) == 2  # never overwritten
    out = tmp_path / "fed.json"
    args = ["manifest", "--noise", str(tmp_path / "noise.key.pub"), "--sites",
            str(tmp_path / "s1.key.pub"), str(tmp_path / "s2.key.pub"), "--n", "250", "350",
            "--epsilon", "1", "1", "--delta", "1e-5", "1e-5", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    manifest = identity.Manifest.read(out)
    assert manifest.n == [250, 350] and manifest.designs == ("joint",)
    text = capsys.readouterr().out
    assert manifest.digest() in text
    assert identity.fingerprint(manifest.site(2).identity) in text
    assert main([*args[:-2], "--out", str(tmp_path / "x.json"), "--n", "250"]) == 2
    assert "need one value per site (2)" in capsys.readouterr().err
