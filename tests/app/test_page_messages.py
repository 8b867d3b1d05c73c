"""Elements and blocks a page sends per rerun (issue #36, item 4; AppTest).

Streamlit spends ~0.3 ms of server CPU on every element and block of a rerun, a cached one
too (docs/performance.md), so a block that draws nothing visible is pure cost: each bound
below is the page's count once such blocks were removed (the collusion section's table and
chart containers, drawn in order anyway; the sites table's own container, drawn right where
it stands), so a layout wrapper added back fails here.
"""

import pytest
from test_app import failures, page

pytestmark = pytest.mark.app


def nodes(block) -> int:
    """Elements and blocks under ``block`` (itself not counted): one forward message each."""
    children = getattr(block, "children", None) or {}
    return sum(1 + nodes(child) for child in children.values())


def rerun_nodes(name: str) -> int:
    at = page(name).run()
    assert not at.exception and not failures(at)  # (the Privacy explorer's finding: a node)
    return nodes(at.main)


# page: its main area's elements and blocks per rerun (defaults, not presenting), once the
# empty wrappers are gone: 3 fewer on the Privacy explorer, 1 fewer where the sites table sits
# in the page's flow (counted with ``rerun_nodes`` on main before, minus those removed); the
# Privacy explorer's dropout section gained the remedy's worst-case table and its caption, and
# Trust models the section on CAPE across real sites: header, text, table, caption (#48)
BOUNDS = {"privacy.py": 58 - 3 + 2, "composition.py": 41 - 1, "trust_models.py": 36 - 1 + 4}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_no_empty_layout_blocks_per_rerun(name):
    assert rerun_nodes(name) <= BOUNDS[name]
