"""The app on the core's specs (issue #23): no page reaches the core through ``**`` of a dict
or ``*`` of a tuple (the sites are one ``dpcore.Sites``, issue #35), and a spec is a stable,
cheap cache key (docs/architecture.md, "slider → spec → mechanism"); and the tests mirror the
project: the core's floors (#35) and a folder per package (#51), each check shown failing on a
planted misplacement."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREEN = sorted(
    [*ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("learning/**/*.py")]
)
CORE = ("dpcore", "ui.cached")  # a call to anything imported from these is a core call

# (file, callee) pairs allowed a ** splat, each with why it cannot be avoided. Empty: none is
# needed today (ui.cached.call_core forwards its own **kwargs to `fn`, a parameter, which this
# check does not count as a core name).
ALLOWED: set[tuple[str, str]] = set()


def _is_cached(module: str) -> bool:
    """``ui.cached`` or one of its page families (``ui.cached.sites``, …)."""
    return module == "ui.cached" or module.startswith("ui.cached.")


def _core_names(tree: ast.Module, module: str) -> set[str]:
    """The names a file binds to the core: imports from dpcore or ui.cached (at any level,
    function-level imports included) and, in ui/cached/ itself, its own functions."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "dpcore" or _is_cached(alias.name):
                    names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "dpcore" or _is_cached(node.module):
                names.update(alias.asname or alias.name for alias in node.names)
            elif node.module == "ui" and any(a.name == "cached" for a in node.names):
                names.update(a.asname or a.name for a in node.names if a.name == "cached")
    if _is_cached(module):
        names.update(
            n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        )
    return names


def _root(func: ast.expr) -> str | None:
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.value if not isinstance(func, ast.Call) else func.func
    return func.id if isinstance(func, ast.Name) else None


def core_splats(source: str, module: str = "page") -> list[tuple[int, str]]:
    """(line, callee) of every call to a core name whose keywords hold a ``**`` expansion.

    A ``**`` inside a dict display (``{**a, "b": 1}``) is not a call's keyword: data may be
    merged for display, but a call into the core names each keyword.
    """
    tree = ast.parse(source)
    core = _core_names(tree, module)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or all(k.arg is not None for k in node.keywords):
            continue
        arguments = [*node.args, *(k.value for k in node.keywords)]
        callee = ast.unparse(node.func)
        # the callee itself, or a core function passed to a call (call_core(fn, **kw))
        if _root(node.func) in core or any(
            isinstance(a, (ast.Name, ast.Attribute)) and _root(a) in core for a in arguments
        ):
            found.append((node.lineno, callee))
    return sorted(found)


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_the_finder_flags_the_old_pca_page():
    # The PCA page before issue #23 (app_pages/pca.py at commit e5c6a54), reduced to its calls.
    old = (
        "from ui.cached import call_core, pca_job, pca_results\n"
        "from dpcore import cluster\n"
        "import dpcore\n"
        "params = {'dim': 50, **current}\n"  # a dict display: not a call
        "df = pca_job(source, gate='pca_run', **params)\n"
        "df = call_core(pca_results, source, **params)\n"
        "cluster.run(dpcore.pca_sweep, **params)\n"
        "label(**params)\n"  # not a core call
    )
    assert core_splats(old) == [(5, "pca_job"), (6, "call_core"), (7, "cluster.run")]


@pytest.mark.parametrize("path", SCREEN, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_calls_the_core_with_a_dict_splat(path):
    found = [
        (line, callee)
        for line, callee in core_splats(path.read_text(), _module(path))
        if (str(path.relative_to(ROOT)), callee) not in ALLOWED
    ]
    assert not found, (
        f"{path.relative_to(ROOT)} calls the core with ** of a dict at {found}: name each "
        "keyword, or pass the spec (docs/architecture.md)"
    )


def core_star_splats(source: str, module: str = "page") -> list[tuple[int, str]]:
    """(line, callee) of every call to a core name, or of a call handed a core function
    (``call_core(party_table, *args)``), whose positional arguments hold a ``*`` expansion.

    The sites-table pages passed their sites as a 5-tuple spread with ``*`` into the cached
    wrappers (issue #35); they pass one :class:`dpcore.Sites` now, and a call into the core
    names each argument, as it names each keyword. A ``*`` in a tuple or list display
    (``(*a, b)``) is data, not a call.
    """
    tree = ast.parse(source)
    core = _core_names(tree, module)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not any(isinstance(a, ast.Starred) for a in node.args):
            continue
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if _root(node.func) in core or any(
            isinstance(a, (ast.Name, ast.Attribute)) and _root(a) in core for a in arguments
        ):
            found.append((node.lineno, ast.unparse(node.func)))
    return sorted(found)


def test_the_star_finder_flags_the_old_sites_table_pages():
    # The Privacy explorer and a lesson before the Sites record (issue #35), reduced to calls.
    old = (
        "from ui.cached import call_core, party_table, averaging_design\n"
        "import dpcore\n"
        "args = site_args(table, calibration)\n"
        "design_args = (*args, 'cape')\n"  # a tuple display: not a call
        "noise = call_core(averaging_design, *args)\n"
        "table = party_table(*args)\n"
        "dpcore.party_views(*made)\n"
        "print(*args)\n"  # not a core call
        "call_core(party_table, the_sites, 'cape')\n"  # one record: fine
    )
    flagged = [(5, "call_core"), (6, "party_table"), (7, "dpcore.party_views")]
    assert core_star_splats(old) == flagged


@pytest.mark.parametrize("path", SCREEN, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_spreads_a_tuple_into_the_core(path):
    found = core_star_splats(path.read_text(), _module(path))
    assert not found, (
        f"{path.relative_to(ROOT)} spreads a tuple with * into a core call at {found}: pass "
        "one dpcore.Sites (or the spec) and name each argument (docs/architecture.md)"
    )


def test_lesson_five_builds_the_pages_own_spec():
    # Lesson 5 quotes numbers its Explore link shows again: the same controls through the
    # same helper give an equal spec (equal hash), hence the page's cache entry.
    from learning.settings import PCA_SETTINGS, PcaControls
    from ui.specs import pca_spec

    page = PcaControls(
        dim=20,
        k=5,
        sites=10,
        n_per_site=1000,
        epsilon=0.5,
        delta=0.01,
        runs=5,
        seed=PCA_SETTINGS.seed,
        algorithms=("nonprivate", "cape", "conv"),
        calibration="analytic",
        neighbouring="add-remove",
    )
    lesson = pca_spec(PCA_SETTINGS)
    assert pca_spec(page) == lesson and hash(pca_spec(page)) == hash(lesson)
    assert 0.5 in lesson.grid.values and lesson.grid.axis == "epsilon"


def test_equal_specs_share_one_cache_entry(monkeypatch):
    import dpcore
    from learning.settings import OTD_SETTINGS
    from ui import cached
    from ui.specs import otd_spec

    calls = []
    real = dpcore.run_slotted

    def counted(slot, fn, *args, **kwargs):
        calls.append(fn.__name__)
        return real(slot, fn, *args, **kwargs)

    monkeypatch.setattr(dpcore, "run_slotted", counted)  # the pages call dpcore.run_slotted
    chosen = replace(OTD_SETTINGS, dim=4, k=2, n_per_site=500, runs=1, seed=98_765)
    first = cached.otd_frame(otd_spec(chosen), chosen.seed)
    again = cached.otd_frame(otd_spec(replace(chosen)), chosen.seed)  # built anew, equal
    assert calls == ["run_otd_sweep"]
    assert first.equals(again)
    cached.otd_frame(otd_spec(replace(chosen, epsilon=1.0)), chosen.seed)  # 1.0 is on the grid
    assert calls == ["run_otd_sweep"]  # the same spec: only the marker moved
    cached.otd_frame(otd_spec(replace(chosen, delta=0.001)), chosen.seed)  # another sweep
    assert calls == ["run_otd_sweep"] * 2


_KEY = """
import hashlib
from streamlit.runtime.caching.cache_type import CacheType
from streamlit.runtime.caching.hashing import update_hash
from learning.settings import PCA_SETTINGS
from ui.cached import SPEC_HASH
from ui.specs import pca_spec
h = hashlib.md5()
update_hash((pca_spec(PCA_SETTINGS), 36), hasher=h, cache_type=CacheType.DATA,
            hash_funcs=SPEC_HASH)
print(h.hexdigest())
"""


@pytest.mark.slow
def test_a_specs_cache_key_is_the_same_in_every_process():
    # st.cache_data keys a spec by its text: no id(), no per-process string hash (which
    # PYTHONHASHSEED changes), so every session and every server process agrees. This process
    # and one fresh interpreter with another hash seed than this one's (one interpreter
    # fewer than two fresh ones: each imports Streamlit and dpcore, #35).
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    env = {**os.environ, "PYTHONHASHSEED": other_seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _KEY], capture_output=True, text=True, env=env, check=True
    )
    here = io.StringIO()
    with contextlib.redirect_stdout(here):
        exec(_KEY, {})
    assert out.stdout.strip() == here.getvalue().strip()
    assert len(here.getvalue().strip()) == 32


# Modules whose tests live elsewhere, and why: the rest have tests/core/<floor>/test_<module>.py
# (#23, #35).
OWN_TEST_FILE_EXCEPTIONS = {
    "__init__": "the public names: tests/core/test_api.py",
    "__main__": "python -m dpcore: tests/core/test_cli.py",
    "resources": "plain constants, read by the limits: tests/core/experiments/test_limits.py",
    "version": "the version string: tests/test_packaging.py",
    "mechanisms/__init__": "a floor's list of modules (tests/test_floors.py)",
    "protocol/__init__": "a floor's list of modules (tests/test_floors.py)",
    "factorization/__init__": "a floor's list of modules (tests/test_floors.py)",
    "analysis/__init__": "a floor's list of modules (tests/test_floors.py)",
    "analysis/views": "each party's view (was privacy.py): tests/core/analysis/test_privacy.py",
    "experiments/__init__": "a floor's list of modules (tests/test_floors.py)",
    "experiments/sweeps/__init__": "re-exports of the sweeps",
    "experiments/sweeps/spec": "tests/core/experiments/test_sweep_spec.py",
    # Their test_<module> names are the factorisation's (tests/core/factorization/test_pca.py
    # tests the algorithm); the sweeps' frames and specs are tested beside the other sweeps.
    "experiments/sweeps/pca": "tests/core/experiments/test_frame_hashes.py, test_sweep_spec.py",
    "experiments/sweeps/otd": "tests/core/experiments/test_frame_hashes.py, test_sweep_spec.py",
}


def _own_test_file(module: Path) -> Path:
    """Where a core module's tests live: the tests mirror the floors (#35), so
    dpcore/<floor>/…/m.py is tested in tests/core/<floor>/test_m.py and a module on the top
    (dpcore/m.py) in tests/core/test_m.py."""
    floor = module.parts[:1] if len(module.parts) > 1 else ()
    return ROOT.joinpath("tests", "core", *floor, f"test_{module.stem.lstrip('_')}.py")


def test_tests_mirror_the_floors():
    # A floor's test file is in its floor's folder, not loose in tests/ (#35): no test of a
    # core module named like one of them is left at the top of tests/.
    modules = {p.stem.lstrip("_") for p in (ROOT / "dpcore").rglob("*.py")}
    loose = [p.name for p in (ROOT / "tests").glob("test_*.py") if p.stem[5:] in modules]
    assert not loose, f"tests of core modules outside tests/core/<floor>/: {loose}"
    floors = {p.parent.name for p in (ROOT / "dpcore").glob("*/__init__.py")}
    folders = {p.name for p in (ROOT / "tests" / "core").iterdir() if p.is_dir()}
    assert folders - {"__pycache__"} <= floors  # bytecode is cached (test.sh)


def test_every_core_module_has_a_test_file_of_its_own():
    core = ROOT / "dpcore"
    missing = []
    for path in sorted(core.rglob("*.py")):
        name = path.relative_to(core).with_suffix("").as_posix()
        if name in OWN_TEST_FILE_EXCEPTIONS or name == "_build_info":  # a wheel build's output
            continue
        if not _own_test_file(path.relative_to(core)).exists():
            missing.append(name)
    assert not missing, f"core modules without tests/core/<floor>/test_<module>.py: {missing}"
    for name in OWN_TEST_FILE_EXCEPTIONS:
        assert (core / f"{name}.py").exists(), f"stale exception {name}"


# --- the tests mirror every package (#51) -------------------------------------------------------
# tests/ holds a folder per package, named as the package, for the tests whose subject is that
# package's modules; dpcore's is tests/core/ (by its floors, above), and two differ in name:
# app_pages/ is no package (no __init__.py) and tests/ is on sys.path, so a folder
# tests/app_pages/ would join it as a second half of one namespace package; app.py (the app with
# its pages together) is a module, not a folder.
FOLDER_OF = {"dpcore": "core", "app_pages": "pages", "app.py": "app"}
# The one folder named for what its tests drive rather than for a package.
BROWSER = "browser"  # the real app in Chromium (Playwright): each file carries ``browser``

# The top of tests/ holds the checks across the whole tree and the tests of what is in no
# package (a script, a configuration, the wheel), each here with what it checks; any other
# test file at the top fails.
TREE_WIDE = {
    "test_architecture.py": "the layers' calls into the core, and the tests' own layout",
    "test_floors.py": "dpcore's floors: no upward import, no private import across modules",
    "test_imports.py": "every package's imports: no cycle, no layer above its own",
    "test_public_imports.py": "every file outside the core imports only dpcore.__all__",
    "test_public_names.py": "the public names' parameters, a checked contract",
    "test_numbers_unchanged.py": "every number on screen, bit for bit, through every layer",
    "test_doc_numbers.py": "every number docs/ quotes, recomputed",
    "test_types.py": "mypy over every package, and the pages' typed calls into the core",
    "test_sigma_trace.py": "every page's controls down to σ: the paths across the layers",
    "test_run_order.py": "the suite itself: its order, its module marks, its xdist groups",
    "test_packaging.py": "the wheel: metadata, licence, citation, build_backend/",
    "test_examples.py": "examples/, scripts of no package, run as a user runs them",
    "test_run_script.py": "run.sh",
    "test_streamlit_config.py": "the server's .streamlit/config.toml",
}


def project_packages(root: Path) -> set[str]:
    """The packages tests/ mirrors: every folder with an ``__init__.py`` at the top of the
    checkout, the pages (``app_pages/``) and the app's entry (``app.py``)."""
    found = {p.parent.name for p in root.glob("*/__init__.py")}
    found |= {name for name in ("app_pages", "app.py") if (root / name).exists()}
    return found


def _imported(tree: ast.Module) -> set[str]:
    """The top-level names of every module the file imports (function-level imports too)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _drives_the_app(source: str, tree: ast.Module) -> bool:
    """AppTest, or the real server (benchmarks.server's ``streamlit_server``)."""
    return "AppTest" in source or any(
        isinstance(node, ast.ImportFrom)
        and node.module == "benchmarks.server"
        and any(alias.name == "streamlit_server" for alias in node.names)
        for node in ast.walk(tree)
    )


def _opens_the_real_app_in_chromium(source: str, tree: ast.Module) -> bool:
    """Marked ``browser`` and asks for the shared server or its tabs (tests/conftest.py)."""
    from module_marks import module_marks

    return "browser" in module_marks(source) and any(
        arg.arg in {"server", "served", "tabs"}
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for arg in node.args.args
    )


def mirror_problems(root: Path, tree_wide=TREE_WIDE) -> list[str]:
    """Every way the checkout's tests/ fails to mirror its packages (docs/architecture.md,
    "The tests mirror the project"), one sentence each; the core's floors are checked above.
    """
    tests = root / "tests"
    folders = {FOLDER_OF.get(name, name): name for name in project_packages(root)}
    problems = []
    seen: dict[str, Path] = {}
    files = sorted(p for p in tests.rglob("test_*.py") if "__pycache__" not in p.parts)
    for path in files:
        rel = path.relative_to(tests)
        shown = f"tests/{rel.as_posix()}"
        if path.name in seen:
            problems.append(
                f"{shown} and tests/{seen[path.name].as_posix()}: one name twice (pytest imports "
                "a test file by its name: tests/ has no __init__.py)"
            )
        seen[path.name] = rel
        if len(rel.parts) == 1:
            if path.name not in tree_wide:
                problems.append(
                    f"{shown}: at the top of tests/, which holds only the checks across the "
                    "tree (TREE_WIDE); a package's test goes in its folder"
                )
            continue
        folder = rel.parts[0]
        if folder == "core":
            continue  # the floors' mirror: test_tests_mirror_the_floors and the next test
        if folder not in folders and folder != BROWSER:
            problems.append(f"{shown}: tests/{folder}/ is the folder of no package")
            continue
        if len(rel.parts) > 2:
            problems.append(f"{shown}: a package's tests sit in its folder, not below it")
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        if folder == BROWSER:
            from module_marks import module_marks

            if "browser" not in module_marks(source):
                problems.append(
                    f"{shown}: tests/browser/ holds the real app in Chromium, and this file's "
                    "pytestmark has no `browser`"
                )
            continue
        if _opens_the_real_app_in_chromium(source, tree):
            problems.append(f"{shown}: opens the real app in Chromium: tests/browser/")
        package = folders[folder]
        if package in ("app_pages", "app.py"):
            if not _drives_the_app(source, tree):
                problems.append(
                    f"{shown}: tests/{folder}/ holds tests that drive the app (AppTest or its "
                    "server), and this file does neither"
                )
        elif package not in _imported(tree):
            others = sorted((_imported(tree) & set(folders.values())) - {"dpcore"})
            problems.append(
                f"{shown}: imports nothing of {package}/, the package its folder mirrors "
                f"(it imports: {', '.join(others) or 'no package but dpcore'})"
            )
    with_tests = {p.relative_to(tests).parts[0] for p in files if p.parent != tests}
    for folder, package in sorted(folders.items()):
        if folder not in with_tests:
            problems.append(f"{package}: no test file in tests/{folder}/")
    return problems


def test_tests_mirror_every_package():
    problems = mirror_problems(ROOT)
    assert not problems, "tests/ does not mirror the packages:\n" + "\n".join(problems)
    for name in TREE_WIDE:
        assert (ROOT / "tests" / name).exists(), f"stale TREE_WIDE entry {name}"


# --- the mirror's check fails on a planted misplacement -----------------------------------------

PLANTED = {
    "dpcore/__init__.py": "",
    "ui/__init__.py": "",
    "serving/__init__.py": "",
    "app_pages/overview.py": "",
    "app.py": "",
    "tests/test_floors.py": "def test_x():\n    pass\n",
    "tests/core/test_api.py": "import dpcore\n",
    "tests/ui/test_tables.py": "from ui import tables\n",
    "tests/serving/test_store.py": "import serving.store\n",
    "tests/pages/test_overview_app.py": "from streamlit.testing.v1 import AppTest\n",
    "tests/app/test_app.py": "from streamlit.testing.v1 import AppTest\n",
    "tests/browser/test_browser.py": (
        "import pytest\npytestmark = pytest.mark.browser\n\n\ndef test_x(server, tabs):\n    pass\n"
    ),
}

# (file planted or replaced, its text, what the check must say)
MISPLACED = {
    "left_at_the_top": ("tests/test_datafiles.py", "import serving\n", "at the top of tests/"),
    "in_another_packages_folder": (
        "tests/ui/test_datafiles.py",
        "from serving import datafiles\n",
        "imports nothing of ui/, the package its folder mirrors (it imports: serving)",
    ),
    "in_no_packages_folder": ("tests/misc/test_x.py", "import ui\n", "the folder of no package"),
    "a_folder_below_a_folder": ("tests/ui/cached/test_memo.py", "import ui\n", "not below it"),
    "a_page_test_that_drives_no_page": (
        "tests/pages/test_overview_app.py",
        "import ui\n",
        "this file does neither",
    ),
    "a_browser_test_without_its_mark": (
        "tests/browser/test_links.py",
        "def test_x(server):\n    pass\n",
        "pytestmark has no `browser`",
    ),
    "the_real_app_in_chromium_outside_browser": (
        "tests/app/test_walk.py",
        "import pytest\nfrom streamlit.testing.v1 import AppTest\n"
        "pytestmark = [pytest.mark.browser]\n\n\ndef test_x(tabs):\n    pass\n",
        "opens the real app in Chromium: tests/browser/",
    ),
    "one_name_twice": ("tests/ui/test_store.py", "import ui\n", "one name twice"),
    "a_package_without_its_folder": ("deploy/__init__.py", "", "deploy: no test file"),
}


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_planted_tree_mirrors_its_packages(tmp_path):
    _plant(tmp_path, PLANTED)
    assert mirror_problems(tmp_path, tree_wide={"test_floors.py": ""}) == []


@pytest.mark.parametrize("case", MISPLACED)
def test_a_planted_misplacement_is_found(tmp_path, case):
    name, text, says = MISPLACED[case]
    _plant(tmp_path, {**PLANTED, name: text})
    problems = mirror_problems(tmp_path, tree_wide={"test_floors.py": ""})
    assert len(problems) == 1 and says in problems[0], problems
