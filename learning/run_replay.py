"""A real run's log (``python -m federated run``) as stepper steps — no Streamlit here.

The run log (:mod:`federated.runlog`) holds one JSON object per message the aggregator sent
or received: round, sender, receiver, what it carries, shape, payload bytes, time and the
Flower node id at the other end. A real run's values stay private (only sizes are logged),
so each step shows who sent what to whom, how large it was and when, not the numbers a
simulated draw shows (:mod:`learning.protocol_steps`).

A log is read once, in time and memory linear in its length (issue #50): each step keeps
the index of its message, not a copy of the messages before it (:class:`Sent` is a view of
the first ``n`` messages), and a step's text is written when it is asked for. Anything that
is not a run log (a line that is not a JSON object, a field of the wrong type, a party that
takes no part in a run, more than :data:`MAX_LINES` lines) raises :class:`NotARunLog`, whose
message is the one sentence the page shows. Round names are free text (a round this module
does not know is replayed as any other); ``end`` closes the run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, overload

from learning.protocol_steps import AGG, NG, ProtocolStep

FIELDS = ("round", "kind", "time")
MESSAGE_FIELDS = ("sender", "receiver", "bytes")
EXAMPLE = Path(__file__).resolve().parent / "run-log-example.jsonl"  # a real 3-site run

# A run of 20 sites (``python -m federated run``'s largest) writes about 90 lines per release;
# 50,000 lines (about 5 MB) is hundreds of releases, and replays in well under a second.
MAX_LINES = 50_000
MAX_SITES = 100  # "site 1" … "site 100": the most sites the network picture places
MAX_TEXT = 200  # characters of a text field (round, kind, a party, a node id)
# A refusal's party and reason name every party with a problem (federated.protocol.Refusal.of):
# up to 20 sites' reasons of a sentence or two each.
MAX_REASON = 20_000
MAX_TIME = 1e9  # seconds since the ServerApp started (31 years)
MAX_BYTES = 2**63 - 1  # payload bytes of one message
MAX_DIMS = 8  # of a shape
MAX_EXTENT = 2**31 - 1  # of one axis of a shape
_SITE = re.compile(r"site ([1-9][0-9]{0,2})")

Message = tuple[str, str, str]  # (sender, receiver, what it carries)


class NotARunLog(ValueError):
    """A text the stepper cannot replay; ``str(err)`` is the sentence the page shows
    ("Not a run log: line 3 is a JSON list, not an object.")."""

    def __init__(self, why: str, *, sentence: str | None = None) -> None:
        super().__init__(sentence or f"Not a run log: {why}.")
        self.why = why


class _Bad(Exception):
    """A field that is not what a run log holds (its line is added by the caller)."""


def _shown(value: object) -> str:
    """A value as quoted in a refusal: its JSON, at most 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "…"


def _text(
    entry: dict,
    field: str,
    *,
    optional: bool = False,
    seen: dict[str, str] | None = None,
    longest: int = MAX_TEXT,
) -> str | None:
    """``entry[field]`` as a text field of 1 to ``longest`` characters; one string object per
    distinct text in ``seen`` (a log repeats its rounds, kinds, parties and node ids)."""
    value = entry.get(field)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Bad(f"{field} must be text; got {_shown(value)}")
    if not value or len(value) > longest:
        raise _Bad(f"{field} must be 1 to {longest:,} characters; got {len(value):,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Bad(f"{field} is not valid Unicode text (a lone surrogate)") from None
    return value if seen is None else seen.setdefault(value, value)


def _number(entry: dict, field: str, low: float, high: float, *, integer: bool) -> float:
    value = entry.get(field)
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok and not integer:
        ok = math.isfinite(value)  # type: ignore[arg-type]
    if not ok or not low <= value <= high:  # type: ignore[operator]
        what = "a whole number" if integer else "a number"
        span = f"[{low:,}, {high:,}]" if integer else f"[{low:g}, {high:g}]"
        raise _Bad(f"{field} must be {what} in {span}; got {_shown(value)}")
    return value  # type: ignore[return-value]


def _shape(entry: dict) -> tuple[int, ...] | None:
    value = entry.get("shape")
    if value is None:
        return None
    if (
        not isinstance(value, list | tuple)  # a list in JSON; a tuple from parse_run_log
        or len(value) > MAX_DIMS
        or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_EXTENT for n in value
        )
    ):
        raise _Bad(
            f"shape must be null or a list of at most {MAX_DIMS} whole numbers in "
            f"[0, {MAX_EXTENT}]; got {_shown(value)}"
        )
    return tuple(value)


def _node(entry: dict, seen: dict[str, str] | None) -> str | None:
    value = entry.get("node")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**40:
        return str(value)
    if isinstance(value, str):
        return _text(entry, "node", seen=seen)
    raise _Bad(f"node must be null, text or a whole number; got {_shown(value)}")


def _party(entry: dict, field: str, seen: dict[str, str] | None) -> str:
    name = _text(entry, field, seen=seen)
    assert name is not None
    site = _SITE.fullmatch(name)
    if name in (AGG, NG) or (site and int(site.group(1)) <= MAX_SITES):
        return name
    if name.startswith("node ") and len(name) > len("node "):
        return name  # named later from its reply, if it sends one
    raise _Bad(
        f"{field} {_shown(name)} is no party of a run (the aggregator, the noise generator, "
        f"site 1 to site {MAX_SITES}, or node <id>)"
    )


class _Row(NamedTuple):
    """One validated line: a message, or the run's end (``sender`` None)."""

    round: str
    kind: str
    time: float
    sender: str | None = None
    receiver: str | None = None
    bytes: int = 0
    shape: tuple[int, ...] | None = None
    node: str | None = None
    party: str | None = None  # of a refusal
    reason: str | None = None


def _row(entry: Any, seen: dict[str, str] | None = None) -> _Row:
    """``entry`` checked field by field (extra fields are ignored); its texts taken from
    ``seen`` when an equal one was read before."""
    if not isinstance(entry, dict):
        what = {list: "a JSON list", str: "a JSON string", bool: "true or false"}.get(
            type(entry), "a JSON number" if isinstance(entry, (int, float)) else "null"
        )
        raise _Bad(f"is {what}, not an object")
    need = FIELDS + (MESSAGE_FIELDS if entry.get("round") != "end" else ())
    missing = [f for f in need if f not in entry]
    if missing:
        raise _Bad(f"lacks {', '.join(missing)}")
    round_, kind = _text(entry, "round", seen=seen), _text(entry, "kind", seen=seen)
    assert round_ is not None and kind is not None
    time = float(_number(entry, "time", 0, MAX_TIME, integer=False))
    shape = _shape(entry)
    if round_ == "end":
        party = _text(entry, "party", optional=True, longest=MAX_REASON)
        reason = entry.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise _Bad(f"reason must be text; got {_shown(reason)}")
        if reason:
            reason = _text(entry, "reason", longest=MAX_REASON)
        return _Row(round_, kind, time, shape=shape, party=party, reason=reason or None)
    sender, receiver = _party(entry, "sender", seen), _party(entry, "receiver", seen)
    if AGG not in (sender, receiver):
        raise _Bad(
            f"a message from {sender} to {receiver}: a run log holds only messages to or "
            "from the aggregator"
        )
    size = int(_number(entry, "bytes", 0, MAX_BYTES, integer=True))
    return _Row(round_, kind, time, sender, receiver, size, shape, _node(entry, seen))


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered non-blank lines, without first splitting the whole text into a list."""
    start, number = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        number += 1
        line = text[start:end]
        if line.strip():
            yield number, line
        start = end + 1


def _check_length(text: str) -> None:
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > MAX_LINES:
        raise NotARunLog(
            "too long",
            sentence=f"This log has {lines:,} lines; the stepper replays logs of at most "
            f"{MAX_LINES:,} lines (a real run writes about 90 per release at 20 sites).",
        )


def parse_rows(text: str) -> list[_Row]:
    """The checked lines of a run log; :class:`NotARunLog` naming the first line that is not
    one, or saying the log is past :data:`MAX_LINES` lines (counted before anything is
    parsed)."""
    if not isinstance(text, str):
        raise NotARunLog(f"expected text; got {type(text).__name__}")
    _check_length(text)
    rows: list[_Row] = []
    seen: dict[str, str] = {}
    for number, line in _lines(text):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise NotARunLog(f"line {number} is not JSON: {err.msg}") from None
        except RecursionError:
            raise NotARunLog(f"line {number} is nested too deeply") from None
        except ValueError as err:  # e.g. an integer of more than 4,300 digits
            raise NotARunLog(f"line {number} is not JSON: {err}") from None
        try:
            rows.append(_row(entry, seen))
        except _Bad as err:
            raise NotARunLog(f"line {number} {err}" if str(err).startswith(("is ", "lacks "))
                             else f"line {number}: {err}") from None  # fmt: skip
    if not rows:
        raise NotARunLog("the run log has no entries")
    return rows


def parse_run_log(text: str) -> list[dict]:
    """The entries of a run log, each checked (:class:`NotARunLog` names the first line that
    is not one)."""
    out = []
    for row in parse_rows(text):
        entry = {k: v for k, v in row._asdict().items() if v is not None or k == "shape"}
        if row.sender is None:
            del entry["bytes"]
        out.append(entry)
    return out


class Sent(Sequence[Message]):
    """The first ``stop`` messages of a replay: a view of the replay's one tuple of messages
    and a count, not a copy (so a log of n messages costs O(n), not O(n²)).

    :meth:`pairs` gives the distinct (sender, receiver) pairs among them in order of first
    appearance, what the network picture draws faintly.
    """

    __slots__ = ("_firsts", "_messages", "_stop")

    def __init__(
        self, messages: tuple[Message, ...], firsts: tuple[tuple[int, str, str], ...], stop: int
    ) -> None:
        self._messages, self._firsts, self._stop = messages, firsts, stop

    def __len__(self) -> int:
        return self._stop

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self._messages[i] for i in range(*index.indices(self._stop)))
        if not -self._stop <= index < self._stop:
            raise IndexError(index)
        return self._messages[index % self._stop]

    def __iter__(self) -> Iterator[Message]:
        for i in range(self._stop):
            yield self._messages[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sent | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sent(first {self._stop} of {len(self._messages)} messages)"

    def pairs(self) -> list[tuple[str, str]]:
        """Distinct (sender, receiver) of these messages, by first appearance."""
        return [(s, r) for first, s, r in self._firsts if first < self._stop]


def faint_pairs(sent: Sequence[Message]) -> list[tuple[str, str]]:
    """Distinct (sender, receiver) pairs of ``sent`` (a :class:`Sent` view or any sequence of
    messages), in order of first appearance."""
    if isinstance(sent, Sent):
        return sent.pairs()
    return list(dict.fromkeys((s, r) for s, r, _ in sent))


@dataclass(frozen=True, eq=False)
class Replay:
    """A checked run log, ready to step through: ``len(replay)`` steps, :meth:`step` builds
    one (its text, and a :class:`Sent` view of the messages before it).

    Attributes
    ----------
    sites : int
        S: the highest site number in the log (the network picture places sites 1 … S).
    lines : int
        Entries read (one step each).
    """

    sites: int
    lines: int
    _rows: tuple[_Row, ...]
    _names: dict[str, str]  # Flower node id → party name, from the replies
    _messages: tuple[Message, ...]
    _firsts: tuple[tuple[int, str, str], ...]
    _before: tuple[int, ...]  # messages before each step
    _bytes_before: tuple[int, ...]  # payload bytes before each end step (0 elsewhere)

    def __len__(self) -> int:
        return self.lines

    def step(self, index: int) -> ProtocolStep:
        """Step ``index`` (0-based): one logged message, or the release or refusal."""
        if not 0 <= index < self.lines:
            raise ValueError(f"index must be in [0, {self.lines - 1}]; got {index}")
        e, before = self._rows[index], self._before[index]
        sent = Sent(self._messages, self._firsts, before)
        if e.sender is None:
            if e.kind == "release":
                title = "The aggregator publishes the release"
                text = (
                    f"After {e.time:.2f} s and {before:,} messages "
                    f"({self._bytes_before[index]:,} payload bytes), the aggregator publishes "
                    f"Σ μ_s (Â_s − F_s), of shape {e.shape or ()}."
                )
            else:
                title = f"The aggregator refuses: {e.party or '?'}"
                text = f"Nothing is released. {e.reason or ''}".rstrip()
            return ProtocolStep(title, text, None, sent, {})
        message = self._messages[before]
        sender, receiver = message[:2]
        shape = f", an array of shape {e.shape}" if e.shape else ""
        text = (
            f"Round {e.round}, at {e.time:.2f} s: {sender} → {receiver} — "
            f"{e.kind}{shape}; {e.bytes:,} payload bytes."
        )
        if sender == NG and e.round == "noise":
            text += " The aggregator relays each sealed E_s and cannot open it."
        return ProtocolStep(f"{sender} → {receiver}: {e.round}", text, message, sent, {})

    def steps(self) -> list[ProtocolStep]:
        """Every step, in the log's order (each a view: O(n) in all)."""
        return [self.step(i) for i in range(self.lines)]


def _named(name: str, names: dict[str, str], node: str | None) -> str:
    return names.get(str(node), name) if name.startswith("node ") else name


def replay(text: str) -> Replay:
    """The run log ``text`` checked and ready to step through; :class:`NotARunLog` if it is
    not one. Time and memory linear in the log's length."""
    return _replay(parse_rows(text))


def _replay(rows: list[_Row]) -> Replay:
    names = {
        r.node: r.sender
        for r in rows
        if r.node is not None and r.sender is not None and r.receiver == AGG
    }
    messages: list[Message] = []
    firsts: dict[tuple[str, str], int] = {}
    before: list[int] = []
    bytes_before: list[int] = []
    total = 0
    for r in rows:
        before.append(len(messages))
        bytes_before.append(total if r.sender is None else 0)
        if r.sender is None or r.receiver is None:
            continue
        pair = (_named(r.sender, names, r.node), _named(r.receiver, names, r.node))
        firsts.setdefault(pair, len(messages))
        messages.append((*pair, r.kind))
        total += r.bytes
    sites = 0
    for sender, receiver in firsts:
        for name in (sender, receiver):
            match = _SITE.fullmatch(name)
            if match:
                sites = max(sites, int(match.group(1)))
    return Replay(
        sites=sites,
        lines=len(rows),
        _rows=tuple(rows),
        _names=names,
        _messages=tuple(messages),
        _firsts=tuple((i, s, r) for (s, r), i in firsts.items()),
        _before=tuple(before),
        _bytes_before=tuple(bytes_before),
    )


def _as_rows(entries: list[dict]) -> list[_Row]:
    try:
        seen: dict[str, str] = {}
        return [_row(e, seen) for e in entries]
    except _Bad as err:
        raise NotARunLog(str(err)) from None


def node_names(entries: list[dict]) -> dict[str, str]:
    """Flower node id → party name, from the replies (which name their sender)."""
    return _replay(_as_rows(entries))._names


def site_count(entries: list[dict]) -> int:
    """S: the highest site number among the log's parties (after naming the nodes)."""
    return _replay(_as_rows(entries)).sites


def replay_steps(entries: list[dict]) -> list[ProtocolStep]:
    """One step per logged message, in the log's order, then the release or refusal."""
    return _replay(_as_rows(entries)).steps()
