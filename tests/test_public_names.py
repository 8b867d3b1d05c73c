"""dpcore's public names are a checked contract (issues #35, #51).

``tests/public_names.json`` is every name of ``dpcore.__all__`` with what a caller relies on:
a function's or class's parameters (their names, kinds and which have a default; not the
default values), a constant's type. Removing, renaming or changing one fails here until the
file says so (``python tests/test_public_names.py --update``, and a CHANGELOG line: it breaks
users); adding one fails the same way, so the file is the reviewed list of the API.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import pytest

if __name__ == "__main__":  # python tests/test_public_names.py --update, from anywhere
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dpcore

FILE = Path(__file__).with_name("public_names.json")
NAMES: dict[str, str] = json.loads(FILE.read_text(encoding="utf-8"))


def describe(obj: object) -> str:
    """What a caller relies on: ``def(a, /, b, *, c=…)``, ``class(…)`` or a constant's type."""
    if inspect.isclass(obj) or callable(obj):
        kind = "class" if inspect.isclass(obj) else "def"
        try:
            signature = inspect.signature(obj)  # type: ignore[arg-type]
        except (TypeError, ValueError):  # a builtin without one
            return kind
        params = list(signature.parameters.values())
        parts, marked = [], False
        for i, p in enumerate(params):
            if p.kind is p.KEYWORD_ONLY and not marked:
                parts.append("*")
                marked = True
            if p.kind is p.VAR_POSITIONAL:
                parts.append(f"*{p.name}")
                marked = True
            elif p.kind is p.VAR_KEYWORD:
                parts.append(f"**{p.name}")
            else:
                parts.append(p.name + ("=…" if p.default is not p.empty else ""))
            if p.kind is p.POSITIONAL_ONLY and (
                i + 1 == len(params) or params[i + 1].kind != p.kind
            ):
                parts.append("/")
        return f"{kind}({', '.join(parts)})"
    return type(obj).__name__


def contract() -> dict[str, str]:
    """The contract of the code as it is: every public name, described."""
    return {name: describe(getattr(dpcore, name)) for name in sorted(dpcore.__all__)}


def missing_names(namespace: dict[str, object], names: list[str]) -> list[str]:
    """The names that ``from dpcore import <name>`` would not find, run in ``namespace``."""
    gone = []
    for name in names:
        try:
            exec(f"from dpcore import {name}", dict(namespace))
        except ImportError:
            gone.append(name)
    return gone


def test_the_public_names_are_the_checked_list():
    assert sorted(dpcore.__all__) == sorted(NAMES), "python tests/test_public_names.py --update"
    assert len(dpcore.__all__) == len(set(dpcore.__all__))  # no name twice


def test_each_public_name_is_as_the_list_describes_it():
    now = contract()
    changed = {n: (NAMES[n], now[n]) for n in NAMES if n in now and now[n] != NAMES[n]}
    assert changed == {}, "python tests/test_public_names.py --update (and a CHANGELOG line)"


def test_every_public_name_imports_from_dpcore():
    assert missing_names({}, [*NAMES, "__version__"]) == []


def test_the_names_users_asked_for_are_public():
    # issue #51: the registries, the sites' releases and the rounds sweep
    assert {"register_accountant", "Accountant", "SiteReleases", "RoundsSpec"} <= set(NAMES)


def test_a_removed_name_is_reported():
    names = list(NAMES)
    assert missing_names({}, [*names[:3], "no_such_public_name"]) == ["no_such_public_name"]


def test_a_changed_signature_is_seen():
    def before(a, /, b, *, c=1): ...

    def after(a, /, b, *, d=1): ...

    assert describe(before) == "def(a, /, b, *, c=…)" != describe(after)
    assert describe(dpcore.gaussian_sigma).startswith("def(") and describe((1,)) == "tuple"


@pytest.mark.parametrize("name", ["PCA_ALGORITHMS", "OTD_ALGORITHMS"])
def test_the_live_registry_names_still_resolve(name):
    assert "cape" in getattr(dpcore, name)


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    FILE.write_text(json.dumps(contract(), indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{FILE}: {len(dpcore.__all__)} public names")
