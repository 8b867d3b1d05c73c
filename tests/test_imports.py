"""The import structure: no cycle inside dpcore, and the rooms import only what they may.

The graph is read from the source with ``ast``: every ``import`` and ``from … import``,
at module level and inside functions (a function-level import that closes a cycle only
hides it until the function runs), ``from . import x`` included. Imports under
``if TYPE_CHECKING:`` never run and are left out. Importing ``a.b.c`` runs the packages
``a`` and ``a.b`` first, so the edge goes to each of them too, except to the root ``dpcore``
package: its ``__init__`` gathers the public names from every submodule (so it is the one
module allowed to import them all), and no submodule may import it by name (checked).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[tuple[str, str]]:
    """Every (module, name) ``tree`` imports, relative ones resolved, at any depth.

    ``import a.b`` gives ("a.b", ""); ``from a import b`` gives ("a", "b"), where ``b`` may
    be a submodule or a name.
    """
    found: set[tuple[str, str]] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.update((target, alias.name) for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _sources(package_dir: Path) -> dict[str, Path]:
    root = package_dir.parent
    return {
        _module_name(p, root): p
        for p in sorted(package_dir.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module → the modules of the package that importing it runs.

    ``from a.b import c`` runs the package ``a.b`` and, if ``c`` is a submodule, ``a.b.c``.
    A package that contains the importing module is left out: it is already being
    initialised when its submodule runs (Python does not run it again).
    """
    sources = _sources(package_dir)
    graph: dict[str, set[str]] = {}
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges: set[str] = set()
        for target, name in _imports(tree, module, path.name == "__init__.py"):
            full = f"{target}.{name}" if name else target
            parts = full.split(".")
            for depth in range(1, len(parts) + 1):  # a.b.c runs a, a.b, a.b.c in turn
                prefix = ".".join(parts[:depth])
                ancestor = module == prefix or module.startswith(prefix + ".")
                if prefix in sources and not ancestor:
                    edges.add(prefix)
        graph[module] = edges
    return graph


def root_imports(package_dir: Path) -> dict[str, list[str]]:
    """Modules that import a name from the root package's ``__init__`` (not a submodule).

    The root imports every submodule, so such an import only works while the root happens
    to be initialised already: a cycle the graph above cannot see.
    """
    sources = _sources(package_dir)
    top = package_dir.name
    out: dict[str, list[str]] = {}
    for module, path in sources.items():
        if module == top:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = [
            name or "import " + top
            for target, name in _imports(tree, module, path.name == "__init__.py")
            if target == top and f"{top}.{name}" not in sources
        ]
        if names:
            out[module] = sorted(names)
    return out


def find_cycle(graph: dict[str, set[str]], *, skip: str = "") -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first = last), or None.

    ``skip`` is left out as a node (the root package's ``__init__``, see the module docstring).
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == skip:
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node != skip and node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_function_level_and_relative_cycles(tmp_path):
    # The old dpcore's cycle in miniature: noise imported limits inside a function, and
    # limits reached noise again through the registry; one import written relatively.
    pkg = tmp_path / "core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from core.noise import draw\n")
    (pkg / "noise.py").write_text("def draw():\n    from core.limits import MAX\n    return MAX\n")
    (pkg / "limits.py").write_text("from . import registry\nMAX = 1\n")
    (pkg / "registry.py").write_text("from core.noise import draw\n")
    (pkg / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core import noise\n"
    )
    (pkg / "cli.py").write_text("from core import draw\n")  # a name of the root __init__
    graph = import_graph(pkg)
    assert graph["core.noise"] == {"core.limits"}
    assert graph["core.limits"] == {"core.registry"}
    assert graph["core.leaf"] == set()  # TYPE_CHECKING imports never run
    cycle = find_cycle(graph, skip="core")
    assert cycle is not None and set(cycle) == {"core.noise", "core.limits", "core.registry"}
    assert root_imports(pkg) == {"core.cli": ["draw"]}
    # cut by a leaf module for the constant: no cycle
    (pkg / "resources.py").write_text("MAX = 1\n")
    (pkg / "noise.py").write_text("from core.resources import MAX\ndef draw():\n    return MAX\n")
    assert find_cycle(import_graph(pkg), skip="core") is None


def test_dpcore_has_no_import_cycle():
    graph = import_graph(ROOT / "dpcore")
    cycle = find_cycle(graph, skip="dpcore")
    assert cycle is None, "import cycle in dpcore: " + " → ".join(cycle or [])


def test_no_dpcore_module_imports_a_name_from_the_root_package():
    assert root_imports(ROOT / "dpcore") == {}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = _module_name(path, ROOT)
    names = _imports(tree, module, path.name == "__init__.py")
    return {target.split(".")[0] for target, _ in names if target}


@pytest.mark.parametrize(
    ("room", "forbidden"),
    [
        ("dpcore", {"ui", "streamlit", "plotly", "figures", "serving", "learning"}),
        ("paper", {"ui", "streamlit"}),
        ("benchmarks", {"ui"}),
        ("figures", {"ui", "streamlit"}),
        ("learning", {"ui", "streamlit"}),
        ("serving", {"ui"}),  # Streamlit's runtime, lazily (docs/architecture.md)
        ("federated", {"ui", "streamlit"}),
        ("deploy", {"ui"}),
    ],
)
def test_rooms_import_only_what_they_may(room, forbidden):
    offenders = {
        str(p.relative_to(ROOT)): sorted(_top_level_imports(p) & forbidden)
        for p in sorted((ROOT / room).rglob("*.py"))
    }
    offenders = {p: names for p, names in offenders.items() if names}
    assert offenders == {}, f"{room}/ imports what it must not: {offenders}"


def test_the_package_docstring_promises_nothing_that_is_already_there():
    # issue #39: it said "(and, later, tensor decomposition)"; the tensor sweep ships
    import dpcore

    doc = " ".join(dpcore.__doc__.split())
    assert "later" not in doc
    assert "tensor decomposition" in doc and callable(dpcore.otd_sweep)
