"""Where a shared helper draws (:data:`Box`): a block — a column, the sidebar, a
container — or ``st`` itself, the page's flow at that point."""

from __future__ import annotations

from types import ModuleType
from typing import TypeAlias

from streamlit.delta_generator import DeltaGenerator

Box: TypeAlias = DeltaGenerator | ModuleType
