"""The module paths of release 0.1.0 answer until 0.4.0, with a warning (issue #51).

Each old path (``dpcore.calibration``, ``dpcore.privacy``, ``dpcore.sweeps.spec``, …) imports
with a ``DeprecationWarning`` that names its new path, and is the new module itself: the same
objects, one module in ``sys.modules`` under both names, its own spec kept.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings

import pytest

import dpcore
from dpcore._compat import MOVED, REMOVED_IN


def _fresh_import(old: str) -> tuple[object, list[warnings.WarningMessage]]:
    """Import ``old`` as if for the first time (its aliases dropped from sys.modules)."""
    for name in [n for n in sys.modules if n == old or n.startswith(old + ".")]:
        del sys.modules[name]
    parent = old.rpartition(".")[0]
    if parent in MOVED:
        sys.modules.pop(parent, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    return module, caught


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_old_path_imports_the_new_module_with_a_warning_naming_it(old):
    new = MOVED[old]
    module, caught = _fresh_import(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the new module keeps its own spec
    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert any(old in m and new in m and REMOVED_IN in m for m in messages), messages


def test_the_old_paths_are_the_flat_layout_of_0_1_0():
    # git show --name-status 3c1a311: 40 modules moved into the floors, sweeps/ with them
    assert len(MOVED) == 40 and MOVED["dpcore.privacy"] == "dpcore.analysis.views"
    assert all(importlib.util.find_spec(new) is not None for new in MOVED.values())


def test_from_an_old_path_import_gives_the_same_objects():
    with pytest.warns(DeprecationWarning, match=r"dpcore\.mechanisms\.calibration"):
        for name in [n for n in sys.modules if n == "dpcore.calibration"]:
            del sys.modules[name]
        from dpcore.calibration import gaussian_sigma
    assert gaussian_sigma is dpcore.gaussian_sigma


def test_an_old_module_never_hides_the_public_function_of_its_name():
    # dpcore.protocol_demo was a module in 0.1.0 and is a public function now
    _fresh_import("dpcore.protocol_demo")
    _fresh_import("dpcore.secagg_views")
    assert callable(dpcore.protocol_demo) and callable(dpcore.secagg_views)
    from dpcore.protocol_demo import ProtocolDemo

    assert ProtocolDemo is dpcore.ProtocolDemo


def test_a_new_path_and_a_public_name_do_not_warn():
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import dpcore, dpcore.mechanisms.calibration\n"
        "from dpcore import gaussian_sigma, register_accountant, RoundsSpec\n"
        "import sys; assert 'dpcore.calibration' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_path_that_never_existed_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("dpcore.no_such_module")


def test_a_users_script_sees_the_warning_at_its_own_import_line(tmp_path):
    # Python shows a DeprecationWarning by default only when it is attributed to __main__:
    # the warning skips the import system's frames and lands on the script's line
    script = tmp_path / "old_user.py"
    script.write_text("import numpy\nfrom dpcore.privacy import party_views\n")
    root = str(importlib.util.find_spec("dpcore").submodule_search_locations[0]).rsplit("/", 1)[0]
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"},
    )
    assert f"{script}:2: DeprecationWarning: dpcore.privacy is deprecated" in out.stderr
    assert "dpcore.analysis.views" in out.stderr
