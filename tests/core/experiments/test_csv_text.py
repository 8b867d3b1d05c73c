"""dpcore.experiments.csv_text: a table's encoding, delimiter and decimal mark (issue #36; the
loader's end-to-end checks are in tests/core/experiments/test_realdata.py)."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore.experiments.csv_text import as_utf8, decimal_mark, delimiter

# No NUL: a text file never holds one, and NUL bytes are how UTF-16 without a mark is found
# (UTF-8 "\x00a\x00b" *is* UTF-16-BE "ab" byte for byte: no rule can tell them apart).
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"),
    max_size=200,
)


@pytest.mark.slow
@given(TEXT, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
def test_text_with_a_byte_order_mark_or_in_utf8_comes_back_as_the_same_text(text, encoding):
    assert as_utf8(text.encode(encoding), "t.csv") == text.encode("utf-8")


@given(st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=2, max_size=200))
def test_ascii_in_utf16_without_a_mark_is_found_by_its_nul_bytes(text):
    for encoding in ("utf-16-le", "utf-16-be"):
        assert as_utf8(text.encode(encoding), "t.csv") == text.encode("ascii")


def test_a_mark_on_bytes_that_are_not_that_encoding_is_refused_naming_the_file():
    with pytest.raises(ValueError, match=r"^t\.csv starts like UTF-16 text but is not"):
        as_utf8(codecs.BOM_UTF16_LE + b"\x00\xd8", "t.csv")  # a lone high surrogate


def test_bytes_that_are_no_utf16_are_left_to_the_parser():
    junk = b"A\x00" * 10 + b"\x00\xd8" + b"A\x00"  # UTF-16 LE by its NULs, but a lone surrogate
    assert as_utf8(junk, "t.csv") == junk


@pytest.mark.parametrize(
    ("first", "sep"),
    [
        ("a,b,c", ","),
        ("a;b;c", ";"),
        ("0,25;1,5;-2,75", ";"),  # more commas than semicolons, but they are decimal marks
        ("0,25\t1,5", "\t"),
        ("1;x,5", ","),  # x,5 is no number: the commas delimit
        ("1 2 3", r"\s+"),
        ("single", ","),
    ],
)
def test_the_delimiter_of_a_first_line(first, sep):
    assert delimiter(first) == sep


def test_the_decimal_mark_is_a_comma_only_when_no_cell_uses_a_point():
    assert decimal_mark([["a", "b"], ["1,5", "2"]], ";") == ","
    assert decimal_mark([["1,5", "2.5"]], ";") == "."  # mixed: read as written, then named
    assert decimal_mark([["1", "2"]], ";") == "."
    assert decimal_mark([["1,5"]], ",") == "."  # with , as delimiter a comma cannot be both
