"""Types everywhere (issue #51): the core held to mypy --strict by the project's own mypy
run, and the page layer's calls into the core type-checked.

``call_core`` and ``compute_slot`` keep the wrapped function's signature (ParamSpec), and
``st.cache_data`` does too, so mypy checks a page's arguments against the cached wrapper's
parameters. A type checker cannot tell two ``int`` arguments apart, so a wrapper takes such
parameters by keyword: swapping them is then a visible misnaming, and a positional call is a
type error.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.runtime.caching.cache_utils import CachedFunc

import ui

ROOT = Path(__file__).resolve().parents[1]


def _options(*args: str):
    from mypy.main import process_options

    return process_options([*args])[1]


def test_the_projects_mypy_run_holds_the_core_to_strict():
    """test.sh runs ``mypy`` with pyproject.toml alone: its per-module flags for dpcore must be
    every flag ``--strict`` sets (strict itself is not a per-module option), so that run and
    ``mypy --strict dpcore`` agree; the pages get no strict-only flag but are fully checked."""
    plain = _options("--config-file=", "-c", "pass")
    strict = _options("--config-file=", "--strict", "-c", "pass")
    flags = [
        name
        for name in dir(strict)
        if not name.startswith("_")
        and not callable(getattr(strict, name))
        and getattr(strict, name) != getattr(plain, name)
    ]
    assert "disallow_untyped_defs" in flags and "warn_return_any" in flags
    project = _options("--config-file", str(ROOT / "pyproject.toml"))
    for module in ("dpcore", "dpcore.analysis.audit", "dpcore.experiments.sweeps.spec"):
        options = project.clone_for_module(module)
        assert {f: getattr(options, f) for f in flags} == {f: getattr(strict, f) for f in flags}
    page = project.clone_for_module("app_pages.pca")
    assert page.disallow_untyped_defs and page.check_untyped_defs


def test_mypy_checks_every_package_and_the_pages_by_their_names():
    """The modules test.sh's mypy run checks, by the names the overrides match: every package
    (benchmarks/ not yet: pyproject.toml), ``app`` and the pages as ``app_pages.*`` (they are
    no package: without explicit_package_bases app_pages/pca.py was a bare ``pca`` and the
    page override reached none of them)."""
    from mypy.main import process_options

    sources, options = process_options(["--config-file", str(ROOT / "pyproject.toml")])
    modules = {source.module for source in sources}
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - {"benchmarks"} == packages & {m.split(".")[0] for m in modules}
    pages = {f"app_pages.{p.stem}" for p in (ROOT / "app_pages").glob("*.py")}
    assert pages | {"app", "examples.fig2a", "scripts.durations"} <= modules
    for page in pages:
        assert options.clone_for_module(page).disallow_untyped_defs, page


def _cached_wrappers() -> dict[str, CachedFunc]:
    """Every ``st.cache_data`` wrapper defined in a module of ``ui`` (name: wrapper)."""
    found = {}
    for info in pkgutil.walk_packages(ui.__path__, "ui."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CachedFunc) and obj._info.func.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_no_cached_wrapper_takes_two_positional_parameters_of_one_type():
    wrappers = _cached_wrappers()
    assert len(wrappers) > 40  # the walk reaches ui.cached.* and the lessons' wrappers
    swappable = {}
    for name, wrapper in wrappers.items():
        signature = inspect.signature(inspect.unwrap(wrapper._info.func))
        positional = [
            p.annotation
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        repeated = sorted({a for a in positional if positional.count(a) > 1})
        if repeated:
            swappable[name] = repeated
    assert not swappable, f"make these parameters keyword-only: {swappable}"


SNIPPET = """\
from dpcore import Sites
from ui.cached import call_core, trust_models_pca, trust_models_table


def page(sites: Sites, dim: int, bits: int) -> None:
    call_core(trust_models_table, sites, dim=dim, bits=bits, scale=None, sa_cal="ddg")
    call_core(trust_models_table, sites, bits, dim, None, "ddg")  # E: positional
    call_core(trust_models_table, sites, dim=dim, bit=bits, scale=None, sa_cal="ddg")  # E: name
    call_core(trust_models_table, sites, dim=dim, bits=bits, scale="1e-3", sa_cal="ddg")  # E
    call_core(trust_models_pca, sites, dim=dim, bits=bits, scale=None, sa_cal="ddg", runs=2)  # E
"""


@pytest.mark.slow
def test_mypy_reports_a_swapped_misnamed_or_mistyped_argument_to_call_core(tmp_path):
    """mypy with the project's configuration on a page-like snippet: the correct call passes,
    each wrong one (marked ``# E``) is reported on its line. Before the ParamSpec,
    ``call_core(fn: Callable[..., T], *args: Any, **kwargs: Any)`` let all four through. The
    last goes through ``compute_slot`` under ``st.cache_data`` (a missing ``seed``)."""
    snippet = tmp_path / "page_snippet.py"
    snippet.write_text(SNIPPET)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            # its own cache: never racing test.sh's mypy run over the project's
            "--cache-dir",
            str(ROOT / ".mypy_cache" / "snippet"),
            "--no-color-output",
            str(snippet),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    reported = {int(n) for n in re.findall(r"page_snippet\.py:(\d+): error", done.stdout)}
    expected = {i for i, line in enumerate(SNIPPET.splitlines(), 1) if "# E" in line}
    assert len(expected) == 4
    assert reported == expected, done.stdout + done.stderr
