"""The server's configuration (.streamlit/config.toml), as run.sh and the class server read it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit import config as streamlit_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())


def test_every_option_is_one_streamlit_knows():
    # a misspelt key is only a warning in the server's log, and the default stays in force
    known = streamlit_config.get_config_options()
    for section, options in CONFIG.items():
        for name, value in options.items():
            if isinstance(value, dict):  # [theme.light] and the like
                continue
            assert f"{section}.{name}" in known, f"{section}.{name}"


def test_the_server_watches_no_source_files():
    # Streamlit's default watcher cost the server a whole core for as long as one Chromium
    # tab sat still on a page (1.007 CPU-s per s against 0.006 without it, CAPE averaging
    # and PCA alike: python -m benchmarks.idle_cpu, docs/performance.md)
    assert CONFIG["server"]["fileWatcherType"] == "none"
