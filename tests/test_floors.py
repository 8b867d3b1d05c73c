"""dpcore's floors (issue #35, docs/architecture.md): each module imports only its own floor
and the floors below, and no module imports another module's private (``_``) name.

The floors, bottom up: the base (``_validation``, ``version``, ``parallel``, ``resources``),
``mechanisms``, ``protocol``, ``factorization``, ``analysis``, ``experiments``, and on top the
runtime (``cli``, ``paper_cli``, ``cluster``, ``__main__``). The root ``dpcore/__init__``
re-exports the public names of every floor and stands outside them. The import graph is the one
tests/test_imports.py reads (function-level imports included, ``TYPE_CHECKING`` ones not);
it also checks that the graph has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_imports import _imports, _sources, import_graph

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "dpcore"

# Bottom up. A floor is a subpackage, or the top-level modules named here.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # _build_info: written by setuptools-scm into a checkout that built a wheel (not in git)
    # _compat: the old module paths (issue #51). A base module by its imports (none of a
    # floor: it names the new modules as strings and imports one only when an old path is
    # asked for), so it creates no upward edge.
    ("base", ("_validation", "version", "parallel", "resources", "_build_info", "_compat")),
    ("mechanisms", ()),
    ("protocol", ()),
    ("factorization", ()),
    ("analysis", ()),
    ("experiments", ()),
    ("runtime", ("cli", "paper_cli", "cluster", "__main__")),
)
RANK = {name: rank for rank, (name, _) in enumerate(FLOORS)}


def floor_of(module: str, top: str = "dpcore") -> str | None:
    """The floor of a module of the package ``top`` (None: the root package itself).

    Raises ValueError for a module in no floor: a new top-level module must choose one.
    """
    parts = module.split(".")
    if parts == [top]:
        return None
    head = parts[1]
    if head in RANK and head not in ("base", "runtime"):
        return head
    for name, modules in FLOORS:
        if head in modules:
            return name
    raise ValueError(f"{module} is in no floor: add it to a subpackage or to FLOORS")


def upward_imports(graph: dict[str, set[str]], top: str = "dpcore") -> list[tuple[str, str]]:
    """(importer, imported) for every edge from a lower floor to a higher one."""
    found = []
    for module, targets in sorted(graph.items()):
        here = floor_of(module, top)
        if here is None:
            continue
        for target in sorted(targets):
            there = floor_of(target, top)
            if there is not None and RANK[there] > RANK[here]:
                found.append((module, target))
    return found


def private_imports(package_dir: Path) -> list[tuple[str, str]]:
    """(importer, "module._name") for every private name one module takes from another.

    Both ``from a.b import _x`` and ``b._x`` on a module bound by ``import a.b`` / ``from a
    import b`` count; a module's own private names and dunders do not.
    """
    sources = _sources(package_dir)
    found = []
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        bound: dict[str, str] = {}  # local name → a module of the package
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(node, module, path)
                for alias in node.names:
                    if f"{target}.{alias.name}" in sources:
                        bound[alias.asname or alias.name] = f"{target}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in sources:
                        bound[alias.asname] = alias.name
        for target, name in _imports(tree, module, path.name == "__init__.py"):
            if target != module and _private(name) and f"{target}.{name}" not in sources:
                found.append((module, f"{target}.{name}"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and bound.get(node.value.id, module) != module
            ):
                found.append((module, f"{bound[node.value.id]}.{node.attr}"))
    return sorted(set(found))


def _target(node: ast.ImportFrom, module: str, path: Path) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# --- the checks on dpcore ----------------------------------------------------------------------


def test_every_dpcore_module_is_on_a_floor():
    for module in _sources(CORE):
        floor_of(module)  # raises for a module in no floor


def test_the_floors_are_the_subpackages():
    packages = {p.parent.name for p in CORE.glob("*/__init__.py")}
    assert packages == {name for name, modules in FLOORS if not modules}


def test_no_floor_imports_a_floor_above_it():
    assert upward_imports(import_graph(CORE)) == []


def test_no_dpcore_module_imports_another_modules_private_name():
    assert private_imports(CORE) == []


@pytest.mark.parametrize("floor", [name for name, modules in FLOORS if not modules])
def test_each_floor_lists_its_modules_in_dunder_all(floor):
    import importlib

    package = importlib.import_module(f"dpcore.{floor}")
    modules = sorted(
        p.stem if p.suffix == ".py" else p.name
        for p in (CORE / floor).iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    )
    assert sorted(package.__all__) == modules


# --- each check fails on a planted violation ---------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "dpcore"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


def test_an_upward_import_is_found(tmp_path):
    # a mechanism reaching up to the protocol (a function-level import), a protocol module up
    # to the runtime, and a relative import from factorisation up to analysis
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "_validation.py": "",
            "cli.py": "from dpcore.protocol import cape\n",
            "mechanisms/__init__.py": "",
            "mechanisms/noise.py": "def f():\n    from dpcore.protocol.cape import g\n",
            "protocol/__init__.py": "",
            "protocol/cape.py": "from dpcore._validation import x\nimport dpcore.cli\n",
            "factorization/__init__.py": "",
            "factorization/pca.py": "from ..analysis import views\n",
            "analysis/__init__.py": "",
            "analysis/views.py": "from dpcore.factorization import pca\n",
        },
    )
    assert upward_imports(import_graph(pkg)) == [
        ("dpcore.factorization.pca", "dpcore.analysis"),
        ("dpcore.factorization.pca", "dpcore.analysis.views"),
        ("dpcore.mechanisms.noise", "dpcore.protocol"),
        ("dpcore.mechanisms.noise", "dpcore.protocol.cape"),
        ("dpcore.protocol.cape", "dpcore.cli"),
    ]


def test_a_module_in_no_floor_is_refused():
    with pytest.raises(ValueError, match=r"dpcore\.helpers is in no floor"):
        floor_of("dpcore.helpers")
    assert floor_of("dpcore.experiments.sweeps.spec") == "experiments"
    assert floor_of("dpcore._validation") == "base" and floor_of("dpcore.cli") == "runtime"


def test_a_private_import_is_found(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "mechanisms/__init__.py": "",
            "mechanisms/calibration.py": "def _delta_profile():\n    pass\n_X = 1\n",
            "analysis/__init__.py": "",
            "analysis/accounting.py": (
                "from dpcore.mechanisms.calibration import _delta_profile\n"
                "from dpcore.mechanisms import calibration as cal\n"
                "from dpcore import _validation\n"  # a private module, not a name: allowed
                "def f():\n    return cal._X, cal.__name__\n"
            ),
            "analysis/ledger.py": "def _own():\n    pass\ny = _own()\n",  # its own: allowed
            "_validation.py": "",
        },
    )
    assert private_imports(pkg) == [
        ("dpcore.analysis.accounting", "dpcore.mechanisms.calibration._X"),
        ("dpcore.analysis.accounting", "dpcore.mechanisms.calibration._delta_profile"),
    ]
