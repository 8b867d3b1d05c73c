"""The run log: one JSON object per line for every message the aggregator sends or receives.

Fields: ``round`` (hello, noise, release), ``sender``, ``receiver``, ``kind`` (what the
message carries), ``shape`` (of the array it carries, or null), ``bytes`` (payload bytes:
arrays, keys, ciphertexts and 8 per number; not Flower's HTTP/protobuf framing) and
``time`` (seconds since the ServerApp started) and ``node`` (the Flower node id of the node
at the other end, so that a reader can name the receivers of the hello requests, sent
before anyone's role is known). Events (``kind`` = "refusal" or
"release") close the log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


def payload_bytes(fields: dict[str, Any]) -> int:
    """Bytes of a message's payload: raw bytes and strings by length, 8 per number."""
    total = 0
    for value in fields.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (bytes, str)):
                total += len(item)
            else:
                total += 8
    return total


class RunLog:
    """Appends JSON lines to ``path`` (nothing if ``path`` is empty)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self.start = time.monotonic()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")

    def write(self, **entry: Any) -> None:
        """Append one entry, stamped with the time since the start."""
        if self.path is None:
            return
        entry["time"] = round(time.monotonic() - self.start, 6)
        with self.path.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")

    def message(
        self,
        round_: str,
        sender: str,
        receiver: str,
        kind: str,
        fields: dict[str, Any],
        shape: tuple[int, ...] | None = None,
        node: int | None = None,
    ) -> None:
        """Log one message with its payload size."""
        self.write(
            node=None if node is None else str(node),
            round=round_,
            sender=sender,
            receiver=receiver,
            kind=kind,
            shape=list(shape) if shape is not None else None,
            bytes=payload_bytes(fields),
        )


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The entries of a run log."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
