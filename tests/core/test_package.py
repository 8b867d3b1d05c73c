"""dpcore's own namespace (issue #51): a lazy table of its public names.

``dpcore.__all__`` is static; the ``TYPE_CHECKING`` imports of ``dpcore/__init__.py`` say where
each name lives (mypy reads them, ``dpcore.__getattr__`` reads the same statements), so the
two must hold the same names, and ``import dpcore`` imports none of the floors.
"""

from __future__ import annotations

import subprocess
import sys

import dpcore


def test_the_table_and_dunder_all_hold_the_same_names():
    table = set(dpcore._exports())
    assert table == set(dpcore.__all__) - {"PCA_ALGORITHMS", "OTD_ALGORITHMS"}


def test_every_public_name_is_the_object_of_its_module():
    import importlib

    for name, (module, attr) in dpcore._exports().items():
        assert getattr(dpcore, name) is getattr(importlib.import_module(module), attr), name


def test_import_dpcore_imports_no_floor():
    code = (
        "import sys, dpcore\n"
        "floors = [m for m in sys.modules if m.startswith('dpcore.') and m.count('.') == 1]\n"
        "print(sorted(floors))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['dpcore._compat', 'dpcore.version']"


def test_dir_lists_the_public_names_and_an_unknown_name_is_an_attribute_error():
    assert set(dpcore.__all__) <= set(dir(dpcore))
    assert not hasattr(dpcore, "no_such_name") and not hasattr(dpcore, "../etc")
