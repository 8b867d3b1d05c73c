"""Write tests/durations.json from a full run's JUnit XML: the seconds of every test that took
2 s or more, which tests/conftest.py uses to start the longest tests first.

    bash test.sh --junitxml=/tmp/run.xml && .venv/bin/python scripts/durations.py /tmp/run.xml
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHORTEST = 2.0  # seconds; shorter tests keep their file order at the end of their group


def node_id(classname: str, name: str) -> str | None:
    """pytest's node id from JUnit's dotted class name: the longest prefix that is a file. A
    test of an ``xdist_group`` is reported with ``@group`` after its name (tests/xdist_groups.py);
    the ordering (tests/conftest.py) reads ids without it."""
    if name.rfind("@") > name.rfind("]"):  # pytest-xdist's rule: a parameter may hold an @
        name = name[: name.rfind("@")]
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i]) + ".py"
        if (ROOT / path).exists():
            return "::".join([path, *parts[i:], name])
    return None


def main(xml_path: str) -> None:
    times = {}
    for case in ET.parse(xml_path).iter("testcase"):
        seconds = float(case.get("time") or 0)
        node = node_id(case.get("classname", ""), case.get("name", ""))
        if node is not None and seconds >= SHORTEST:
            times[node] = round(seconds, 1)
    out = ROOT / "tests" / "durations.json"
    out.write_text(json.dumps(dict(sorted(times.items())), indent=0, ensure_ascii=False) + "\n")
    print(f"{out}: {len(times)} tests of {SHORTEST} s or more")


if __name__ == "__main__":
    main(sys.argv[1])
