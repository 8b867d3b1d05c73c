"""A table's bytes as text: its encoding.

Spreadsheets save "Unicode text" as UTF-16 with a byte-order mark; the table loaders
(:func:`dpcore.realdata.load_csv`) read it, and UTF-32, as the same table as UTF-8.
"""

from __future__ import annotations

import codecs

# Byte-order marks, longest first: UTF-32 LE's begins with UTF-16 LE's.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
    (codecs.BOM_UTF8, "utf-8-sig"),
)
SNIFF_BYTES = 4096  # how much of a file without a mark is looked at for UTF-16


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
