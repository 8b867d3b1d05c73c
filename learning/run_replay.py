"""A real run's log (``python -m federated run``) as stepper steps — no Streamlit here.

The run log (:mod:`federated.runlog`) holds one JSON object per message the aggregator sent
or received: round, sender, receiver, what it carries, shape, payload bytes, time and the
Flower node id at the other end. A real run's values stay private (only sizes are logged),
so each step shows who sent what to whom, how large it was and when, not the numbers a
simulated draw shows (:mod:`learning.protocol_steps`).
"""

from __future__ import annotations

import json
from pathlib import Path

from learning.protocol_steps import AGG, NG, ProtocolStep

FIELDS = ("round", "kind", "time")
MESSAGE_FIELDS = ("sender", "receiver", "bytes")
EXAMPLE = Path(__file__).resolve().parent / "run-log-example.jsonl"  # a real 3-site run


def parse_run_log(text: str) -> list[dict]:
    """The entries of a run log; ValueError naming the first line that is not one."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"run log line {number} is not JSON: {err.msg}") from None
        need = FIELDS + (MESSAGE_FIELDS if entry.get("round") != "end" else ())
        missing = [f for f in need if not isinstance(entry, dict) or f not in entry]
        if missing:
            raise ValueError(f"run log line {number} lacks {', '.join(missing)}")
        entries.append(entry)
    if not entries:
        raise ValueError("the run log has no entries")
    return entries


def node_names(entries: list[dict]) -> dict[str, str]:
    """Flower node id → party name, from the replies (which name their sender)."""
    return {
        str(e["node"]): e["sender"]
        for e in entries
        if e.get("node") is not None and e.get("receiver") == AGG
    }


def _party(name: str, names: dict[str, str], node: object) -> str:
    return names.get(str(node), name) if name.startswith("node ") else name


def site_count(entries: list[dict]) -> int:
    """S: the sites that appear in the log."""
    names = set(node_names(entries).values())
    names |= {e.get(k, "") for e in entries for k in ("sender", "receiver")}
    return sum(1 for n in names if n.startswith("site "))


def replay_steps(entries: list[dict]) -> list[ProtocolStep]:
    """One step per logged message, in the log's order, then the release or refusal."""
    names = node_names(entries)
    steps: list[ProtocolStep] = []
    sent: list[tuple[str, str, str]] = []
    total = 0
    for e in entries:
        if e["round"] == "end":
            if e["kind"] == "release":
                title = "The aggregator publishes the release"
                text = (
                    f"After {e['time']:.2f} s and {len(sent)} messages ({total:,} payload "
                    f"bytes), the aggregator publishes Σ μ_s (Â_s − F_s), of shape "
                    f"{tuple(e.get('shape') or ())}."
                )
            else:
                title = f"The aggregator refuses: {e.get('party', '?')}"
                text = f"Nothing is released. {e.get('reason', '')}"
            steps.append(ProtocolStep(title, text, None, tuple(sent), {}))
            continue
        sender = _party(e["sender"], names, e.get("node"))
        receiver = _party(e["receiver"], names, e.get("node"))
        total += int(e["bytes"])
        label = f"{e['kind']}"
        shape = f", an array of shape {tuple(e['shape'])}" if e.get("shape") else ""
        text = (
            f"Round **{e['round']}**, at {e['time']:.2f} s: {sender} → {receiver} — "
            f"{e['kind']}{shape}; {int(e['bytes']):,} payload bytes."
        )
        if sender == NG and e["round"] == "noise":
            text += " The aggregator relays each sealed E_s and cannot open it."
        message = (sender, receiver, label)
        steps.append(ProtocolStep(f"{sender} → {receiver}: {e['round']}", text, message,
                                  tuple(sent), {}))  # fmt: skip
        sent.append(message)
    return steps
