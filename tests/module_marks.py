"""Skip importing a test module whose every test ``-m`` would deselect (the fast lane, issue #35).

pytest imports every test module to collect it, also when ``-m`` then deselects all its tests:
the fast lane (``-m "not slow and not app and not browser"``) imported the browser and app
modules (Playwright, Streamlit's AppTest, the federation, the benchmarks) in every worker,
about 3 CPU-s each for nothing (docs/performance.md, "The fast lane"). A module's own
``pytestmark`` is in its source: when the expression is false for every test that carries
those marks, whatever other marks the test has, tests/conftest.py's ``pytest_ignore_collect``
leaves the file out. Sound by construction: a mark the source does not show is treated as
unknown (both present and absent are tried), so a module is skipped only when none of its
tests could be selected.
"""

from __future__ import annotations

import ast
import functools
import itertools
from pathlib import Path

MAX_FREE = 8  # unknown marks tried in every combination (2**8 evaluations at most)


def module_marks(source: str) -> frozenset[str]:
    """The mark names (``pytest.mark.NAME``) in the module's top-level ``pytestmark``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if not any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
            continue
        for sub in ast.walk(node.value):
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Attribute)
                and sub.value.attr == "mark"
                and isinstance(sub.value.value, ast.Name)
                and sub.value.value.id == "pytest"
            ):
                names.add(sub.attr)
    return frozenset(names)


class _Unsure(Exception):
    """The expression matches on a mark's arguments: leave the module to pytest."""


def never_selected(expression, marks: frozenset[str]) -> bool:
    """Whether ``expression`` (a compiled ``-m`` expression) is false for every set of marks
    that contains ``marks``: every combination of the other marks it asks about is tried."""
    asked: set[str] = set()

    def evaluate(present: frozenset[str]) -> bool:
        def matcher(name: str, /, **kwargs) -> bool:
            if kwargs:
                raise _Unsure
            asked.add(name)
            return name in marks or name in present

        return expression.evaluate(matcher)

    tried: set[frozenset[str]] = set()
    while True:
        free = sorted(asked - marks)
        if len(free) > MAX_FREE:
            return False
        combos = {
            frozenset(itertools.compress(free, bits))
            for bits in itertools.product((0, 1), repeat=len(free))
        }
        if combos <= tried:
            return True  # no combination of the marks the expression asks about selects
        for present in combos - tried:
            tried.add(present)
            try:
                if evaluate(present):
                    return False
            except _Unsure:
                return False


@functools.cache
def _compiled(markexpr: str):
    try:
        from _pytest.mark.expression import Expression  # private, as xdist_groups' import
    except ImportError:
        return None
    try:
        return Expression.compile(markexpr)
    except Exception:  # pytest reports a bad expression itself
        return None


def deselected_module(path: Path, markexpr: str) -> bool:
    """Whether ``-m markexpr`` deselects every test of the test module at ``path``."""
    if not markexpr or path.suffix != ".py" or not path.name.startswith("test_"):
        return False
    expression = _compiled(markexpr)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    if expression is None or ">>>" in source:  # a doctest does not carry the module's marks
        return False
    marks = module_marks(source)
    return bool(marks) and never_selected(expression, marks)
