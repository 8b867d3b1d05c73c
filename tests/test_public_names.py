"""Every public name ``dpcore`` exported before the floors refactor (issue #35) still imports
from ``dpcore`` itself, and is still in its ``__all__``.

``tests/public_names.json`` is ``sorted(dpcore.__all__ + ["__version__"])`` as written at
commit f2a76e0, before dpcore's modules moved into subpackages, plus the three names issue #39
added on its own branch meanwhile (``WorkBudget``, ``ExecutorLost``, ``rerun``), and ``Sites``
(the sites record, issue #35). A name may be added to ``dpcore`` later (and to the file);
removing one breaks its users and this test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dpcore

NAMES = json.loads(Path(__file__).with_name("public_names.json").read_text(encoding="utf-8"))


def missing_names(namespace: dict[str, object], names: list[str]) -> list[str]:
    """The names that ``from dpcore import <name>`` would not find, run in ``namespace``."""
    gone = []
    for name in names:
        try:
            exec(f"from dpcore import {name}", dict(namespace))
        except ImportError:
            gone.append(name)
    return gone


def test_the_fixture_is_the_whole_old_api():
    assert len(NAMES) == len(set(NAMES)) == 105 and "party_views" in NAMES and "rerun" in NAMES
    assert "Sites" in NAMES


def test_every_old_public_name_imports_from_dpcore():
    assert missing_names({}, NAMES) == []


def test_every_old_public_name_is_still_in_dunder_all():
    assert sorted(set(NAMES) - set(dpcore.__all__) - {"__version__"}) == []


def test_a_removed_name_is_reported():
    assert missing_names({}, [*NAMES[:3], "no_such_public_name"]) == ["no_such_public_name"]


@pytest.mark.parametrize("name", ["PCA_ALGORITHMS", "OTD_ALGORITHMS"])
def test_the_live_registry_names_still_resolve(name):
    assert "cape" in getattr(dpcore, name)
