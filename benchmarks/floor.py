"""Streamlit's own cost per element: server CPU per rerun of a page of N plain elements.

``python -m benchmarks.floor`` starts a one-slider app whose page is N ``st.markdown`` lines
(N = 0, 50, 100), moves the slider 40 times and prints the server's CPU ms per rerun (as
``benchmarks.capacity --per-page`` measures a page). The slope is what each element costs
before a page does anything of its own (the delta's protobuf and hash, its message to the
event loop, the websocket frame); ``--per-page`` reports each page's messages per move.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from benchmarks.capacity import Session
from benchmarks.server import cpu_seconds, streamlit_server

APP = """import os
import streamlit as st
value = st.sidebar.slider("Privacy ε", 0, 10, 5)
for i in range(int(os.environ["FLOOR_ELEMENTS"])):
    st.markdown(f"line {i} at {value}")
"""


async def _per_rerun(base: str, pid: int, moves: int) -> float:
    session = Session(base, timeout=60)
    await session.connect()
    await session.rerun(page="", query="")
    label = session.sliders()[0].label
    for i in range(5):  # warm-up
        await session.move(label, i % 2)
    before = cpu_seconds(pid)
    for i in range(moves):
        await session.move(label, i % 2)
    cpu = cpu_seconds(pid) - before
    await session.close()
    return 1000 * cpu / moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", default="0,50,100", help="page sizes, comma-separated")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--port", type=int, default=None, help="default: any free port")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "app.py").write_text(APP)
        for n in (int(v) for v in args.elements.split(",")):
            os.environ["FLOOR_ELEMENTS"] = str(n)
            os.environ.setdefault("STREAMLIT_SERVER_FILE_WATCHER_TYPE", "none")
            os.environ["STREAMLIT_RUNNER_POST_SCRIPT_GC"] = "false"  # as the app's config
            with streamlit_server(port=args.port, root=root) as (base, proc):
                ms = asyncio.run(_per_rerun(base, proc.pid, args.moves))
            print(f"{n:4d} elements: {ms:.1f} server CPU ms per rerun")


if __name__ == "__main__":
    main()
