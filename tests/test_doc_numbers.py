"""Every computed number the docs quote, recomputed from the core and found in its doc (issue
#34: "every number quoted in docs/ should come from a command the doc names, and a test should
re-run the cheap ones and compare"). The quotes live in docs/quoted_numbers.py, the command the
docs name; Monte Carlo quotes over seeds (``measured``) run with ``--measured``, not here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python docs/quoted_numbers.py"


def _load():
    spec = importlib.util.spec_from_file_location("quoted_numbers", ROOT / "docs/quoted_numbers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


NUMBERS = _load()
CHEAP = [q for q in NUMBERS.QUOTES if not q.measured]


@pytest.mark.parametrize(
    "quote",
    [pytest.param(q, marks=pytest.mark.slow) if q.slow else q for q in CHEAP],
    ids=[f"{Path(q.doc).name}:{q.text[:40]}" for q in CHEAP],
)
def test_the_doc_quotes_the_recomputed_number(quote):
    assert quote.holds(), f"{quote.doc} should read {quote.rendered()!r}"


def test_every_doc_with_quotes_names_the_command():
    for doc in {q.doc for q in NUMBERS.QUOTES}:
        text = NUMBERS._flat((ROOT / doc).read_text())
        assert f"{COMMAND} {Path(doc).name}" in text, doc
    for doc in {q.doc for q in NUMBERS.QUOTES if q.measured}:
        text = NUMBERS._flat((ROOT / doc).read_text())
        assert f"{COMMAND} --measured {Path(doc).name}" in text, doc


def test_a_wrong_or_stale_number_is_caught():
    # the check can fail: the stale RDP 3.27 (exact 3.2646) and a rounded-up 0.714
    # (exact 0.71349) are not what the docs may say
    stale = NUMBERS.Quote("docs/composition.md", "/ {x:.2f} /", lambda: {"x": 3.27})
    assert not stale.holds()
    joint = NUMBERS._paper_joint()["joint"]
    assert f"{joint:.3f}" == "0.713" and f"{joint:.4f}" == "0.7135"
    assert "0.714" not in (ROOT / "docs/privacy.md").read_text()
    assert NUMBERS.main(["composition.md"]) == 0


def test_quotes_ignore_where_the_doc_wraps():
    assert NUMBERS._flat("a\n  b  c\n") == "a b c"


def test_table_numbers_are_written_as_the_docs_write_them():
    sci = NUMBERS._sci
    assert [sci(6.06e-16), sci(1.34e-8), sci(9.6e-15), sci(7.96e4)] == [
        "6·10⁻¹⁶",
        "1·10⁻⁸",
        "1·10⁻¹⁴",  # 9.6 rounds up into the next power
        "8·10⁴",
    ]
    assert [sci(1e-6, power=True), sci(0.1, power=True), sci(1.0, power=True)] == [
        "10⁻⁶",
        "0.1",
        "1",
    ]
    assert [sci(0.5133, 2), sci(5.632, 2), sci(1.19e-7, 2)] == ["0.51", "5.6", "1.2·10⁻⁷"]


def test_a_changed_constant_fails_its_quote(monkeypatch):
    # reliability.md's limits are read from the constants: a new value no longer matches
    from dpcore import resources

    row = next(q for q in CHEAP if "grid points × runs" in q.text)
    assert row.holds()
    monkeypatch.setattr(resources, "MAX_TASKS", 6_000)
    fresh = NUMBERS.Quote(row.doc, row.text, row.compute.__wrapped__)
    assert "6,000" in fresh.rendered() and not fresh.holds()
