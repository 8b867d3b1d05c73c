"""A table's bytes as text: its encoding, its delimiter and its decimal mark.

Spreadsheets save tables as their locale has it: "Unicode text" is UTF-16 with a byte-order
mark, and where the decimal mark is a comma (1,5) the delimiter is a semicolon. The uploaded
table loader (:func:`dpcore.experiments.realdata.load_csv`) reads all of them as the same numbers.
Nothing here parses a number beyond recognising its form.
"""

from __future__ import annotations

import codecs
import re

DELIMITERS = (",", ";", "\t", "|")
# Byte-order marks, longest first: UTF-32 LE's begins with UTF-16 LE's.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
    (codecs.BOM_UTF8, "utf-8-sig"),
)
SNIFF_BYTES = 4096  # how much of a file without a mark is looked at for UTF-16
DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
DECIMAL_COMMA_HINT = (
    "They look like numbers with decimal commas (e.g. 1,5): use '.' as the decimal mark, "
    "or save the table with ';' as the delimiter."
)


def as_utf8(raw: bytes, source: str) -> bytes:
    r"""``raw`` as UTF-8 bytes.

    From UTF-8 (with or without a byte-order mark), UTF-16 or UTF-32 with a mark, or UTF-16
    without one (found by its NUL bytes).

    Raises
    ------
    ValueError
        When the file has a byte-order mark but is not text in that encoding.

    Examples
    --------
    >>> as_utf8("a;b\n1;2".encode("utf-16"), "t.csv")
    b'a;b\n1;2'
    """
    for mark, codec in _MARKS:
        if raw.startswith(mark):
            try:
                return raw.decode(codec).encode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(
                    f"{source} starts like {codec.upper()} text but is not; save it as UTF-8 CSV"
                ) from None
    head = raw[:SNIFF_BYTES]
    # ASCII in UTF-16 without a mark: a NUL in every other byte (odd bytes: little-endian).
    # UTF-8 text has no NUL at all; a file that fails to decode is left to the parser.
    if len(head) >= 4 and 3 * head.count(0) >= len(head):
        codec = "utf-16-le" if head[1::2].count(0) > head[0::2].count(0) else "utf-16-be"
        try:
            return raw.decode(codec).encode("utf-8")
        except UnicodeDecodeError:
            return raw
    return raw


def _number_like(cell: str) -> bool:
    """A number written with a decimal point or a decimal comma (form only)."""
    cell = cell.strip()
    if DECIMAL_COMMA.fullmatch(cell):
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def delimiter(first: str) -> str:
    r"""The delimiter of a table whose first non-blank line is ``first``.

    The most frequent of , ; tab | — except that a line of decimal-comma numbers split by
    another delimiter (``0,25;1,5``) is split by that one, not at its commas; whitespace
    when none occurs and the line has several words; a comma otherwise.

    Examples
    --------
    >>> delimiter("a,b,c"), delimiter("0,25;1,5;-2,75"), delimiter("1 2")
    (',', ';', '\\s+')
    """
    sep = max(DELIMITERS, key=first.count)
    if sep == ",":
        for other in DELIMITERS[1:]:
            cells = first.split(other)
            if len(cells) > 1 and all(_number_like(c) for c in cells):
                return other
    if first.count(sep) == 0:
        return r"\s+" if len(first.split()) > 1 else ","
    return sep


def decimal_mark(rows: list[list[str]], sep: str) -> str:
    """The decimal mark of the cells of ``rows`` (split by ``sep``).

    ``","`` when they write numbers with a decimal comma and none with a decimal point;
    ``"."`` otherwise (always for ``sep`` = ``","``).

    Examples
    --------
    >>> decimal_mark([["a", "b"], ["0,5", "2"]], ";"), decimal_mark([["0.5", "2,5"]], ";")
    (',', '.')
    """
    if sep == ",":
        return "."
    cells = [c.strip() for row in rows for c in row]
    commas = any(DECIMAL_COMMA.fullmatch(c) for c in cells)
    points = any("." in c and _number_like(c) for c in cells)
    return "," if commas and not points else "."


def looks_decimal_comma(cell: str) -> bool:
    """Whether a cell that did not read as a number is one with a decimal comma."""
    return DECIMAL_COMMA.fullmatch(cell.strip()) is not None
