"""The module paths of release 0.1.0's flat layout, kept for one release with a warning.

Release 0.2.0 moved dpcore's flat modules into floors (issue #35, commit 3c1a311:
``dpcore.calibration`` became ``dpcore.mechanisms.calibration``, ``dpcore.sweeps`` became
``dpcore.experiments.sweeps``, …) and every old path raised ImportError. Until release 0.4.0
an old path imports again: a meta-path finder answers it with the new module itself (the same
objects, ``sys.modules`` holds one module under both names) and a ``DeprecationWarning`` that
names the new path. No module is imported here until an old path is asked for, so this base
module takes no floor's name at import time (tests/test_floors.py).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

REMOVED_IN = "0.4.0"

# old module (release 0.1.0) → its module since release 0.2.0 (git show --name-status 3c1a311)
MOVED: dict[str, str] = {
    **{
        f"dpcore.{name}": f"dpcore.mechanisms.{name}"
        for name in ("calibration", "discrete", "noise", "promise")
    },
    **{
        f"dpcore.{name}": f"dpcore.protocol.{name}"
        for name in ("cape", "joint_safe", "mean_release", "protocol_demo", "secagg")
    },
    **{
        f"dpcore.{name}": f"dpcore.factorization.{name}"
        for name in (
            "costs", "datasets", "iterative", "lapack", "metrics", "models", "moments", "otd",
            "pca", "registry", "tensor",
        )
    },
    **{
        f"dpcore.{name}": f"dpcore.analysis.{name}"
        for name in (
            "accounting", "audit", "ledger", "precision", "secagg_views", "tradeoff",
            "trust_models",
        )
    },
    "dpcore.privacy": "dpcore.analysis.views",
    **{
        f"dpcore.{name}": f"dpcore.experiments.{name}"
        for name in ("csv_text", "limits", "paper", "questions", "realdata", "sweeps")
    },
    **{
        f"dpcore.sweeps.{name}": f"dpcore.experiments.sweeps.{name}"
        for name in ("dropout", "otd", "pca", "rounds", "scores", "spec")
    },
}  # fmt: skip


class _Alias(importlib.abc.Loader):
    """Loads an old path as the new module itself, warning once per import of the old path."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The new module (imported if it is not yet), after the warning."""
        warnings.warn(
            f"{spec.name} is deprecated and will be removed in dpcore {REMOVED_IN}: "
            f"import from dpcore (its public names) or, inside dpcore, from {self.new}",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Give the module back its own spec (the import system set the old path's).

        Nothing runs: the new module ran when it was imported.
        """
        module.__spec__ = self.spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED`.

    It goes first on ``sys.meta_path``: an old package's submodule would otherwise load a
    second time under the old name.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old path, None for every other name."""
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


class _Package(ModuleType):
    """dpcore itself, where an old module never replaces the public name it shares.

    ``dpcore.protocol_demo`` and ``dpcore.secagg_views`` were modules in release 0.1.0 and are
    public functions now; Python sets an imported module as an attribute of its parent, so
    importing the old path would otherwise make ``dpcore.protocol_demo`` the module.
    """

    def __setattr__(self, name: str, value: object) -> None:
        """Set the attribute, unless it is an old path's module over a public name."""
        public = name in getattr(self, "__all__", ())
        if public and isinstance(value, ModuleType) and f"{self.__name__}.{name}" in MOVED:
            return
        super().__setattr__(name, value)


def install(package: ModuleType) -> None:
    """Put the finder first on ``sys.meta_path`` (once) and guard the package's names."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
    package.__class__ = _Package
