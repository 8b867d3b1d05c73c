"""The protocol stepper's run logs, each read once per content (issue #50).

A log is keyed by the SHA-256 of its bytes, so every rerun of the page (each click of the
message slider) and every session that uploads the same file share one
:class:`learning.run_replay.Replay`, read in time and memory linear in its length. A log that
is not one is remembered as its sentence, so a bad file is read once too.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from learning.run_replay import NotARunLog, Replay, replay

# Shared by every session of the process. A replay holds about 1.5× its text (14 MB for the
# 9 MB of 50,000 real lines; 1.7× for lines whose every field is a distinct 200-character
# text), so at the 20 MB upload limit the four kept replays hold at most about 140 MB. Each
# is kept half an hour; the parse at the line bound costs about 0.5 CPU-s, once per content.
MAX_LOGS = 4


@st.cache_resource(show_spinner="Reading the run log…", max_entries=MAX_LOGS, ttl=1800)
def _replay_outcome(digest: str, _data: bytes) -> tuple[Replay | None, str]:
    """(replay, "") or (None, the sentence saying why not); keyed by ``digest`` alone."""
    try:
        return replay(_data.decode("utf-8-sig", errors="replace")), ""
    except NotARunLog as err:
        return None, str(err)


def content_digest(data: bytes) -> str:
    """The key of ``data``: its SHA-256, in hex."""
    return hashlib.sha256(data).hexdigest()


def run_log(data: bytes, digest: str | None = None) -> Replay:
    """The replay of the run log ``data`` (its :func:`content_digest` may be given, when the
    caller remembered it); :class:`NotARunLog` with the page's sentence if it is not one."""
    outcome, why = _replay_outcome(digest or content_digest(data), data)
    if outcome is None:
        raise NotARunLog("", sentence=why)
    return outcome
