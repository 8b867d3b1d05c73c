"""Rewrite imports from dpcore's internal modules to its public API (issue #51).

    python scripts/public_imports.py            # rewrite, then report what is left
    python scripts/public_imports.py --check    # report only; exit 1 if anything is left

Outside ``dpcore/`` and ``tests/core/`` (the core's own tests), code imports only
``dpcore.__all__`` (docs/architecture.md, "The public API"). This codemod turns

- ``from dpcore.x.y import a, b as c`` into ``from dpcore import a, b as c`` (a name public
  under another name becomes ``from dpcore import P as a``: the code below reads the same);
- ``from dpcore.x import y`` / ``import dpcore.x.y as y`` / ``import dpcore.x.y`` with uses
  ``y.a`` or ``dpcore.x.y.a`` into ``import dpcore`` with uses ``dpcore.A``;

and reports every import or use it cannot rewrite: a name not in ``dpcore.__all__``, a module
used as a value, an attribute assigned on a module. It reads where each public name lives from
dpcore itself (an object imported from an internal path is the public one if it *is* that
object), so it is idempotent and safe to rerun after merges; the files it changes get their
imports sorted (``ruff check --select I --fix``, those
files only); a line the longer public name made too long is left for you (ruff E501 says where).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpcore  # noqa: E402  (after the path: the checkout's dpcore)

# Not rewritten: the core, its own tests, and what is not the project's code.
SKIP_DIRS = ("dpcore", "tests/core", ".venv", "node_modules", "build", "dist")
PRIMITIVE = (int, float, str, bytes, bool, type(None))


def project_files(root: Path = ROOT) -> Iterator[Path]:
    """Every Python file of the project outside the core and its own tests (the walk never
    enters a skipped or hidden directory: a build may be writing in ``build/`` meanwhile)."""
    found = []
    for here, dirs, files in os.walk(root):
        rel = Path(here).relative_to(root).as_posix()
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".") and (f"{rel}/{d}" if rel != "." else d) not in SKIP_DIRS
        ]
        found += [Path(here) / f for f in files if f.endswith(".py")]
    yield from sorted(found)


def internal(module: str | None) -> bool:
    """A dpcore module other than the package itself."""
    return bool(module) and module.startswith("dpcore.")  # type: ignore[union-attr]


def is_module(qualified: str) -> bool:
    """``dpcore.x.y`` names an importable module (or package), not an old path's alias."""
    try:  # an old path (dpcore.protocol_demo) answers with its new module, named otherwise
        return importlib.import_module(qualified).__name__ == qualified
    except ImportError:
        return False


def public_name(module: str, attr: str) -> str | None:
    """The public name of ``module.attr``, or None if it has none.

    The same name at the same object first (a re-export), then any public name bound to the
    same object, except for numbers and strings (two equal constants are not one name).
    """
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    public = {name: getattr(dpcore, name) for name in dpcore.__all__}
    if attr == "__version__" or (attr in public and public[attr] is obj):
        return attr
    if isinstance(obj, PRIMITIVE):
        matches = [n for n, (m, a) in exports().items() if a == attr and is_alias(m, module)]
        return matches[0] if len(matches) == 1 else None
    matches = [n for n, value in public.items() if value is obj]
    return matches[0] if len(matches) == 1 else None


@cache
def exports(init: Path = ROOT / "dpcore" / "__init__.py") -> dict[str, tuple[str, str]]:
    """Public name → (its module, its name there): dpcore's ``TYPE_CHECKING`` imports."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: (node.module or "", alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def is_alias(one: str, other: str) -> bool:
    """The two module names are one module (an old path's alias)."""
    return importlib.import_module(one) is importlib.import_module(other)


@dataclass
class Edit:
    """Replace ``text[start:end]`` of a file by ``new``."""

    start: int
    end: int
    new: str


@dataclass
class Result:
    """One file's edits and what could not be rewritten."""

    edits: list[Edit] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def offsets(text: str) -> list[int]:
    """The offset of each line's first character (1-based line numbers index it)."""
    out = [0, 0]
    for line in text.splitlines(keepends=True):
        out.append(out[-1] + len(line))
    return out


def chain(node: ast.Attribute) -> tuple[ast.Name, list[str]] | None:
    """``a.b.c`` → (the name ``a``, ["b", "c"]); None unless it is names and attributes."""
    parts = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    return value, parts[::-1]


SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Scopes:
    """Which binding a name refers to: the nearest function (or the module) that binds it."""

    def __init__(self, tree: ast.Module) -> None:
        self.parent = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        self.assigned: set[tuple[ast.AST, str]] = set()  # (scope, name) bound by code
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.assigned.add((self.of(node), node.id))
            elif isinstance(node, ast.arg):
                self.assigned.add((self.of(self.parent[node]), node.arg))

    def of(self, node: ast.AST) -> ast.AST:
        """The scope a node's names live in."""
        node = self.parent.get(node, node)
        while not isinstance(node, SCOPES):
            node = self.parent[node]
        return node

    def chain(self, scope: ast.AST) -> Iterator[ast.AST]:
        """The scope and the scopes around it."""
        yield scope
        while not isinstance(scope, ast.Module):
            scope = self.of(scope)
            yield scope


def rewrite(text: str, where: str) -> Result:
    """The edits that make one file's dpcore imports public, and what is left."""
    tree = ast.parse(text)
    line_at = offsets(text)
    scopes = Scopes(tree)
    result = Result()

    def span(node: ast.AST) -> tuple[int, int]:
        return (
            line_at[node.lineno] + node.col_offset,  # type: ignore[attr-defined]
            line_at[node.end_lineno] + node.end_col_offset,  # type: ignore[attr-defined]
        )

    def note(node: ast.AST, what: str) -> None:
        result.left.append(f"{where}:{node.lineno}: {what}")  # type: ignore[attr-defined]

    # 1. the bindings: (scope, local name) → the internal module it names
    modules: dict[tuple[ast.AST, str], str] = {}
    plain: dict[ast.AST, list[ast.stmt]] = {}  # scope → statements binding "dpcore" itself
    statements: list[ast.Import | ast.ImportFrom] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "dpcore" and not internal(node.module):
                continue
            statements.append(node)
            for alias in node.names:
                named = node.module == "dpcore" and alias.name in dpcore.__all__
                if not named and is_module(f"{node.module}.{alias.name}"):
                    modules[scopes.of(node), alias.asname or alias.name] = (
                        f"{node.module}.{alias.name}"
                    )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "dpcore" or (internal(alias.name) and not alias.asname):
                    plain.setdefault(scopes.of(node), []).append(node)
                if internal(alias.name):
                    statements.append(node)
                    if alias.asname:
                        modules[scopes.of(node), alias.asname] = alias.name

    def binding(name: ast.Name) -> tuple[ast.AST, str] | None:
        """The import binding a name refers to (None: a local variable, or not dpcore's)."""
        for scope in scopes.chain(scopes.of(name)):
            if (scope, name.id) in modules:
                return scope, name.id
            if (scope, name.id) in scopes.assigned or (name.id == "dpcore" and scope in plain):
                return None
        return None

    # 2. the uses: y.a and dpcore.x.y.a become dpcore.A
    used: set[tuple[ast.AST, str]] = set()  # bindings with a use rewritten
    unresolved: set[tuple[ast.AST, str]] = set()
    heads: set[ast.Name] = set()
    for node in ast.walk(tree):  # breadth first: the outermost attribute of a chain first
        found = chain(node) if isinstance(node, ast.Attribute) else None
        if found is None or found[0] in heads:
            continue
        head, parts = found
        key = binding(head)
        if key is not None:
            module = modules[key]
        elif head.id == "dpcore" and any(s in plain for s in scopes.chain(scopes.of(head))):
            module = "dpcore"
        else:
            continue
        i = 0
        while i < len(parts) and is_module(f"{module}.{parts[i]}"):
            module, i = f"{module}.{parts[i]}", i + 1
        if module == "dpcore" or i == len(parts):
            continue  # dpcore.A already, or a chain to a module (its longer chain is seen)
        heads.add(head)
        inner = cast(ast.Attribute, node)  # found by chain(): an attribute
        for _ in range(len(parts) - i - 1):
            inner = cast(ast.Attribute, inner.value)  # the chain's attributes (chain())
        public = public_name(module, parts[i])
        stored = isinstance(inner.ctx, ast.Store | ast.Del)
        if public is None or stored:
            note(node, f"{module}.{parts[i]} ({'assigned' if stored else 'not public'})")
            unresolved.add(key or (tree, "dpcore"))
            continue
        result.edits.append(Edit(*span(inner), f"dpcore.{public}"))
        used.add(key or (tree, "dpcore"))
    for node in ast.walk(tree):  # a module used as a value: passed, patched, returned
        if isinstance(node, ast.Name) and node not in heads and isinstance(node.ctx, ast.Load):
            key = binding(node)
            if key is not None:
                note(node, f"{modules[key]} (used as a value)")
                unresolved.add(key)

    # 3. the import statements
    has_dpcore = {scope for scope, nodes in plain.items() for n in nodes}
    for node in statements:
        scope = scopes.of(node)
        rewrote_uses = False
        lines: list[str] = []
        if isinstance(node, ast.ImportFrom):
            names: list[ast.alias] = []
            kept: list[ast.alias] = []
            for alias in node.names:
                key = (scope, alias.asname or alias.name)
                if modules.get(key) == f"{node.module}.{alias.name}":
                    rewrote_uses |= key in used
                    if key in unresolved:
                        kept.append(alias)
                    continue
                if node.module == "dpcore":
                    if alias.name not in dpcore.__all__ and alias.name != "__version__":
                        note(node, f"dpcore.{alias.name} (not public)")
                    names.append(alias)
                    continue
                public = public_name(node.module, alias.name)  # type: ignore[arg-type]
                if public is None:
                    note(node, f"{node.module}.{alias.name} (not public)")
                    kept.append(alias)
                else:
                    local = alias.asname or alias.name
                    names.append(ast.alias(public, None if public == local else local))
            if node.module == "dpcore":  # one statement, the names in their order
                names, kept = [a for a in node.names if a in names or a in kept], []
            if names:
                lines.append("from dpcore import " + ", ".join(map(_alias, names)))
            if kept:
                lines.append(f"from {node.module} import " + ", ".join(map(_alias, kept)))
        else:
            keep = []
            for alias in node.names:
                key = (scope, alias.asname) if alias.asname else None
                rewrote_uses |= key is not None and key in used
                if not internal(alias.name) or (key is not None and key in unresolved):
                    keep.append(alias)
                elif key is None:  # import dpcore.x.y binds dpcore: keep that binding
                    keep.append(ast.alias("dpcore", None))
            if any(a.name == "dpcore" for a in keep):
                has_dpcore.add(scope)
            keep = list({_alias(a): a for a in keep}.values())  # once each, first place kept
            if keep:
                lines.append("import " + ", ".join(map(_alias, keep)))
        if rewrote_uses and not any(s in has_dpcore for s in scopes.chain(scope)):
            lines.insert(0, "import dpcore")
            has_dpcore.add(scope)
        if lines == [_statement(node)]:
            continue  # the same statement (perhaps written over several lines): left as it is
        new = ("\n" + " " * node.col_offset).join(lines)
        start, end = span(node)
        if not lines and not text[line_at[node.lineno] : start].strip() and text[end] == "\n":
            start, end = line_at[node.lineno], end + 1  # the statement's whole line goes
            before = text[line_at[node.lineno - 1] : start].strip()
            after = line_at[min((node.end_lineno or node.lineno) + 2, len(line_at) - 1)]
            if (
                before
                and not before.startswith(("import ", "from "))
                and not text[end:after].strip()
            ):
                end = after  # and the blank line after it (under a docstring, say)
        result.edits.append(Edit(start, end, new))
    return result


def _statement(node: ast.Import | ast.ImportFrom) -> str:
    """An import statement on one line, as :func:`rewrite` writes one."""
    names = ", ".join(map(_alias, node.names))
    return (
        f"from {node.module} import {names}"
        if isinstance(node, ast.ImportFrom)
        else (f"import {names}")
    )


def _alias(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def apply(text: str, edits: list[Edit]) -> str:
    """The text with the edits made (from the end: offsets stay valid)."""
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new + text[edit.end :]
    return text


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with ``--check`` only report) every project file; 1 if anything is left."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only, change nothing")
    parser.add_argument("paths", nargs="*", type=Path, help="files (default: the project)")
    args = parser.parse_args(argv)
    files = [p.resolve() for p in args.paths] or list(project_files())
    changed, left = [], []
    for path in files:
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT).as_posix()
        result = rewrite(text, where)
        left += result.left
        new = apply(text, result.edits)
        if new == text:
            continue
        if not args.check:
            try:
                ast.parse(new)
            except SyntaxError as error:  # e.g. a block left empty: keep the file as it was
                left.append(f"{where}: not rewritten ({error.msg}, line {error.lineno})")
                continue
            path.write_text(new, encoding="utf-8")
            changed.append(path)
        else:
            left.append(f"{where}: {len(result.edits)} import(s) to rewrite")
    if changed:
        subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--quiet", "--select", "I", "--fix",
             *map(str, changed)],
            cwd=ROOT, check=False,
        )  # fmt: skip
        print(
            f"rewrote {len(changed)} file(s):", *(p.relative_to(ROOT).as_posix() for p in changed)
        )
    for line in sorted(set(left)):
        print(line)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
