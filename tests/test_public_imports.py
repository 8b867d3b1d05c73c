"""Code outside dpcore imports only ``dpcore.__all__`` (issue #51; docs/architecture.md, "The
public API").

Every Python file of the project outside ``dpcore/`` and ``tests/core/`` (the core's own tests,
which may import internals) is parsed; an import from a dpcore module (``from
dpcore.analysis.views import party_views``, ``import dpcore.cluster``), a name imported from
``dpcore`` that is not in ``__all__`` (``from dpcore import cluster``) or an attribute of
``dpcore`` that is not (``dpcore.analysis.views``) is a reach past the API. The few files
that read or patch an internal on purpose are listed in :data:`ALLOWED` with the reason and
exactly what they reach; ``python scripts/public_imports.py`` rewrites the rest.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

import dpcore

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = frozenset(dpcore.__all__) | {"__version__"}

# file → (why it reaches past the API, what it reaches; None: any internal)
ALLOWED: dict[str, tuple[str, frozenset[str] | None]] = {
    "docs/quoted_numbers.py": (
        "checks that the docs quote the core's internal ceilings, timeouts and tables",
        None,
    ),
    "benchmarks/pairwise_noise.py": (
        "measures the pairwise scheme's views with the core's own joint-std kernel",
        frozenset({"dpcore.analysis.views._joint_std"}),
    ),
    "benchmarks/scale.py": (
        "times the LAPACK subset eigensolver where the core chooses it",
        frozenset({"dpcore.factorization.lapack.use_subset"}),
    ),
    "tests/app/test_bounds.py": (
        "white-box: drives the cluster runner's connection and failure tables",
        frozenset({"dpcore.cluster"}),
    ),
    "tests/test_packaging.py": (
        "white-box: the version's derivation from git (dpcore.version)",
        frozenset({"dpcore.version"}),
    ),
    "tests/test_sigma_trace.py": (
        "white-box: counts every σ a page computes by wrapping the calibration's kernels",
        frozenset({"dpcore.mechanisms.calibration"}),
    ),
    "tests/app/test_app.py": (
        "lowers the heavy-job threshold that dpcore.is_heavy reads",
        frozenset({"dpcore.experiments.limits"}),
    ),
    "tests/app/test_hostile.py": (
        "lowers the heavy-job threshold that dpcore.is_heavy reads",
        frozenset({"dpcore.experiments.limits"}),
    ),
    "tests/test_doc_numbers.py": (
        "changes a resource ceiling to see a quoted number follow it",
        frozenset({"dpcore.resources"}),
    ),
}


def project_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the project outside the core and its own tests: the files the
    codemod rewrites (scripts/public_imports.py's walk, one list for both)."""
    return list(_codemod().project_files(root))


def reaches(source: str, public: frozenset[str] = PUBLIC) -> list[str]:
    """What one file takes from dpcore past its public names ("dpcore.x.y[.name]")."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("dpcore."):
                found += [f"{node.module}.{a.name}" for a in node.names]
            elif node.module == "dpcore":
                found += [f"dpcore.{a.name}" for a in node.names if a.name not in public]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("dpcore.")]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "dpcore"
            and node.attr not in public
            and not node.attr.startswith("__")
        ):
            found.append(f"dpcore.{node.attr}")
    return found


def _allowed(rel: str, reach: str) -> bool:
    entry = ALLOWED.get(rel)
    if entry is None:
        return False
    allowed = entry[1]
    return allowed is None or any(reach == a or reach.startswith(a + ".") for a in allowed)


def test_code_outside_dpcore_imports_only_its_public_names():
    past = []
    for path in project_files():
        rel = path.relative_to(ROOT).as_posix()
        past += [
            f"{rel}: {r}" for r in reaches(path.read_text(encoding="utf-8")) if not _allowed(rel, r)
        ]
    assert past == [], "run python scripts/public_imports.py, or add the name to dpcore"


def test_every_allowance_is_still_needed():
    # an allowance nobody uses any more goes: the list says only what is true (and names only
    # files the check reads: the core's own tests, tests/core/, may import internals anyway)
    checked = {p.relative_to(ROOT).as_posix() for p in project_files()}
    for rel, (_, allowed) in ALLOWED.items():
        assert rel in checked, f"{rel} is not checked (dpcore/ or tests/core/): remove it"
        found = reaches((ROOT / rel).read_text(encoding="utf-8"))
        assert found, f"{rel} reaches no internal: remove it from ALLOWED"
        for name in allowed or ():
            assert any(r == name or r.startswith(name + ".") for r in found), (rel, name)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from dpcore.analysis.views import party_views as pv\n",
            ["dpcore.analysis.views.party_views"],
        ),
        ("import dpcore.cluster as cluster\n", ["dpcore.cluster"]),
        ("from dpcore import cluster, gaussian_sigma\n", ["dpcore.cluster"]),
        ("import dpcore\nx = dpcore.analysis.views.party_views\n", ["dpcore.analysis"]),
        ("def f():\n    from dpcore.experiments import paper\n", ["dpcore.experiments.paper"]),
        ("import dpcore\nfrom dpcore import Sites, __version__\ndpcore.Sites\n", []),
    ],
)
def test_a_reach_past_the_api_is_found(source, expected):
    assert reaches(source) == expected


def test_the_files_checked_include_the_app_and_exclude_the_core():
    rels = {p.relative_to(ROOT).as_posix() for p in project_files()}
    assert {"app.py", "ui/cached/sites.py", "tests/test_floors.py"} <= rels
    assert not any(r.startswith(("dpcore/", "tests/core/")) for r in rels)


# --- the codemod (scripts/public_imports.py) ---------------------------------------------------


@functools.cache
def _codemod():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "public_imports", ROOT / "scripts/public_imports.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["public_imports"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PLANTED = """\
from dpcore.analysis.views import party_views as pv
from dpcore.factorization import registry
from dpcore.experiments import limits


def f(views):
    views = {"a": 1}  # a local name, not the module
    limits.HEAVY_SECONDS = 0  # assigned: stays on the module
    return registry.get("cape"), pv, views.items()
"""
REWRITTEN = """\
from dpcore import party_views as pv
import dpcore
from dpcore.experiments import limits


def f(views):
    views = {"a": 1}  # a local name, not the module
    limits.HEAVY_SECONDS = 0  # assigned: stays on the module
    return dpcore.get_algorithm("cape"), pv, views.items()
"""


def test_the_codemod_rewrites_to_public_names_and_reports_the_rest():
    codemod = _codemod()
    result = codemod.rewrite(PLANTED, "planted.py")
    assert codemod.apply(PLANTED, result.edits) == REWRITTEN
    assert result.left == ["planted.py:8: dpcore.experiments.limits.HEAVY_SECONDS (assigned)"]
    again = codemod.rewrite(REWRITTEN, "planted.py")  # idempotent: nothing more to do
    assert codemod.apply(REWRITTEN, again.edits) == REWRITTEN
    assert reaches(REWRITTEN) == ["dpcore.experiments.limits"]


@pytest.mark.slow  # 1.6 CPU-s: the codemod resolves every dpcore import of the tree
def test_the_codemod_leaves_the_project_as_it_is():
    # the tree is rewritten already: a merge that brings an internal import fails here first
    codemod = _codemod()
    for path in project_files():
        text = path.read_text(encoding="utf-8")
        edits = codemod.rewrite(text, path.name).edits
        assert codemod.apply(text, edits) == text, path
