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
from pathlib import Path

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


PROBE = ROOT / "tests" / "typing_probe.py"


def test_the_projects_mypy_run_checks_the_call_core_probe():
    """tests/typing_probe.py holds one right call into the core and four wrong ones (swapped,
    misnamed, mistyped, a missing ``seed``), each with the ``# type: ignore[code]`` of the
    error mypy must report. Under ``warn_unused_ignores`` an ignore that silences nothing is
    itself an error, so test.sh's mypy run fails if a wrong call goes through: this test only
    checks that the probe is in that run, with its four probes and the flag, so the check
    costs no mypy run of its own (a cold one took 130-150 s in a fresh clone)."""
    from mypy.main import process_options

    sources, options = process_options(["--config-file", str(ROOT / "pyproject.toml")])
    assert PROBE.resolve() in {Path(s.path).resolve() for s in sources if s.path}
    assert options.warn_unused_ignores
    text = PROBE.read_text()
    codes = re.findall(r"# type: ignore\[([a-z-]+)\]", text)
    assert sorted(codes) == ["arg-type", "call-arg", "call-arg", "call-arg"], codes
    right = text.split("def page(", 1)[1].split("\ndef ", 1)[0]
    assert "call_core(" in right and "type: ignore" not in right
