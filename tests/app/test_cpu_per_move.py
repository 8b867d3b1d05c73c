"""Server CPU per slider move on a setting already computed, on every page (issue #26).

A real server (benchmarks/server.py), driven through Streamlit's own websocket protocol
(benchmarks/capacity.py's Session, no browser): on each page, move ε (or the page's first
slider) one step, back, and again, so both settings are computed; then time the server
process's CPU (user + system, /proc/PID/stat) over batches of cached moves.

The goal is 30 ms per move (docs/performance.md measures 8–40 ms after the change, 115–365 ms
before). The test fails only above GOAL_MS × MARGIN = 90 ms for a page's median batch, in ms
of the reference machine (benchmarks/calibration.py: this machine's ms scaled by a fixed CPU
calibration loop timed in the same run, so that a slower machine is not read as a slower app):
* CPU time, not wall time: a busy CI machine makes the server wait, not burn more CPU, so
  load moves this number by a few ms (cache misses, context switches), never by 3×;
* the clock ticks in 10 ms steps, so a batch of MOVES moves is one reading (±10 ms / MOVES
  per move) and the median of BATCHES readings drops a batch that a garbage collection or
  the other sessions' bookkeeping happened to land in;
* what it guards against costs far more than the margin: a full garbage collection after
  every run (+~100 ms, `runner.postScriptGC`), or figures rebuilt and validated by Plotly on
  every rerun (+30–200 ms a page).
"""

from __future__ import annotations

import asyncio
import os
import statistics

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from benchmarks import calibration, capacity
from benchmarks.capacity import Session
from benchmarks.server import cpu_seconds, streamlit_server

GOAL_MS = 30.0
MARGIN = 3.0
MOVES = 8  # per batch: one CPU reading
BATCHES = 3


async def _page_cpu_ms(base: str, pid: int, page: str) -> tuple[str, list[float], list[str]]:
    """The server's CPU ms per cached move on ``page``, one value per batch."""
    session = Session(base, timeout=120)
    try:
        await session.connect()
        await session.rerun(page=page, query="")
        sliders = session.sliders() or list(session.widgets.values())
        if not sliders:  # a page of text and links (the glossary): no move to cost
            return "", [], list(session.errors)
        widget = next((w for w in sliders if w.label == "Privacy ε"), sliders[0])
        home = widget.index
        other = home + 1 if home + 1 < len(widget.values) else home - 1
        for index in (other, home, other):  # both settings computed
            await session.move(widget.label, index)
        readings = []
        for _ in range(BATCHES):
            before = cpu_seconds(pid)
            for i in range(MOVES):
                await session.move(widget.label, home if i % 2 == 0 else other)
            readings.append(1000 * (cpu_seconds(pid) - before) / MOVES)
        return widget.label, readings, list(session.errors)
    finally:
        await session.close()


async def _pages(base: str) -> list[str]:
    probe = Session(base, timeout=120)
    await probe.connect()
    await probe.rerun(page="pca", query="")
    pages = list(probe.pages)
    await probe.close()
    assert len(pages) >= 10, f"expected every page of the app, got {pages}"
    return pages


@pytest.mark.slow
def test_cached_move_costs_little_server_cpu_on_every_page(monkeypatch):
    """The bound below on every page; then, on the same server with every page computed, the
    capacity benchmark's per-page mode (``benchmarks.capacity --per-page``, issue #26) moves
    a widget on every page and reports each one's CPU per cached move (formerly
    tests/benchmarks/test_capacity.py, on a server of its own whose pages it computed again)."""
    # A deployed server does not watch files; in a working tree edited during the run the
    # watcher would reload modules mid-rerun (benchmarks/capacity.py does the same).
    monkeypatch.setenv("STREAMLIT_SERVER_FILE_WATCHER_TYPE", "none")
    monkeypatch.delenv("STREAMLIT_RUNNER_POST_SCRIPT_GC", raising=False)
    assert os.path.exists("/proc/self/stat"), "needs Linux /proc for the server's CPU time"
    # In milliseconds of the reference machine (benchmarks/calibration.py): this machine's ms
    # times REFERENCE_MS / the calibration loop's ms, the loop timed (median of 7 passes)
    # right after each page's batches, in the same minute as them: a pass runs at either of
    # two speeds on this kind of machine, and the pages with it. A page above the bound is
    # measured once more, with its own calibration, and its lower reading kept: over the
    # bound means over it twice.

    def measure(base: str, pid: int, pages: list[str] | None = None) -> dict:
        async def run() -> dict:
            names = pages if pages is not None else await _pages(base)
            out = {}
            for page in names:
                label, ms, errors = await _page_cpu_ms(base, pid, page)
                if not ms:
                    continue
                factor = calibration.REFERENCE_MS / calibration.loop_ms()
                out[page or "overview"] = (label, round(factor * statistics.median(ms), 1), errors)
            return out

        return asyncio.run(run())

    with streamlit_server(timeout=120) as (base, proc):
        report = measure(base, proc.pid)
        assert len(report) >= 10, f"expected every page with a control, got {sorted(report)}"
        again = [p for p, r in report.items() if r[1] > GOAL_MS * MARGIN]
        if again:
            second = measure(base, proc.pid, ["" if p == "overview" else p for p in again])
            for page, row in second.items():
                if row[1] < report[page][1]:
                    report[page] = row
        per_page = capacity.measure(
            per_page=True, repeats=2, timeout=120, url=base, pids=[proc.pid]
        )
    errors = {page: errs for page, (_, _, errs) in report.items() if errs}
    assert not errors, f"errors on the page while moving: {errors}"
    over = {p: r for p, r in report.items() if r[1] > GOAL_MS * MARGIN}
    assert not over, (
        f"server CPU per cached move above {GOAL_MS * MARGIN:.0f} ms of the reference machine "
        f"(benchmarks/calibration.py), twice: {over}"
    )
    assert per_page["errors"] == 0, per_page["error details"]
    assert {"pca", "tensor", "privacy"} <= {row["page"] for row in per_page["pages"]}
    for row in per_page["pages"]:
        if row["widget"] is not None:
            assert row["server CPU per cached move ms"] >= 0


# --- what makes a cached move cheap, checked without a server ---------------------------------


def test_built_returns_the_same_figure_for_equal_inputs_and_a_new_one_otherwise():
    from figures.charts import noise_histogram_figure
    from figures.memo import built, digest

    rng = np.random.default_rng(7)
    draws = rng.normal(size=300)
    args = ({"CAPE": draws}, {"CAPE": 1.0}, {"CAPE": "#0072B2"})
    first = built(noise_histogram_figure, *args)
    # equal inputs as fresh copies (as st.cache_data hands them out): the same figure
    assert built(noise_histogram_figure, {"CAPE": draws.copy()}, {"CAPE": 1.0}, args[2]) is first
    # one draw changed in the last bit: a new figure
    changed = draws.copy()
    changed[17] = np.nextafter(changed[17], np.inf)
    assert built(noise_histogram_figure, {"CAPE": changed}, {"CAPE": 1.0}, args[2]) is not first
    frame = pd.DataFrame({"algorithm": ["cape", "conv"], "x": [0.5, 0.25]})
    other = frame.copy()
    other.loc[1, "algorithm"] = "cape"
    assert digest(frame) == digest(frame.copy()) != digest(other)
    assert digest(object()) is None  # unknown arguments are not cached


@pytest.mark.parametrize("dark", [False, True])
@pytest.mark.parametrize("presenting", [False, True])
def test_styled_dict_equals_plotlys_own_restyling(monkeypatch, dark, presenting):
    """presenter.style works on the figure's dict; Plotly's update_layout / update_xaxes on
    the figure itself is the independent reference."""
    from plotly.subplots import make_subplots

    from ui import presenter

    monkeypatch.setattr(presenter, "is_dark", lambda: dark)
    monkeypatch.setattr(presenter, "is_on", lambda: presenting)
    monkeypatch.setattr(presenter, "is_phone", lambda: False)
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4], line={"color": "#333333"}), row=1, col=1)
    fig.add_trace(go.Bar(x=[1], y=[2], marker={"color": "#000000"}), row=1, col=2)
    fig.add_hline(y=1, line={"color": "#000000"})
    fig.add_annotation(x=1, y=1, text="a", font={"color": "#666666"})
    fig.update_layout(legend={"y": -0.2})

    expected = go.Figure(fig)
    if dark:
        for trace in expected.data:
            for part in (trace.line if hasattr(trace, "line") else None, trace.marker):
                if part is not None and isinstance(part.color, str):
                    part.color = presenter.ON_DARK.get(part.color.upper(), part.color)
        for shape in expected.layout.shapes:
            shape.line.color = presenter.ON_DARK.get(shape.line.color.upper(), shape.line.color)
        for note in expected.layout.annotations:
            note.font.color = presenter.ON_DARK.get(note.font.color.upper(), note.font.color)
    lettering = presenter.theme.CHART_TEXT["dark" if dark else "light"]  # issue #40, item 5
    expected.update_layout(
        font_color=lettering, legend_font_color=lettering, legend_title_font_color=lettering
    )
    expected.update_xaxes(tickfont_color=lettering, title_font_color=lettering)
    expected.update_yaxes(tickfont_color=lettering, title_font_color=lettering)
    if presenting:
        size = presenter.FONT_SIZE
        expected.update_layout(
            font={"size": size}, legend_font_size=size - 2, height=presenter.CHART_HEIGHT
        )
        expected.update_layout(legend_y=-0.33)
        expected.update_xaxes(tickfont_size=size - 3, title_font_size=size)
        expected.update_yaxes(tickfont_size=size - 3, title_font_size=size)
    got = presenter.style(fig).to_dict()
    assert go.Figure(got).to_plotly_json() == expected.to_plotly_json()
    assert fig.data[0].line.color == "#333333"  # the caller's figure keeps its colours


def test_built_with_a_key_names_the_result_by_the_settings_not_the_frames():
    """A page that knows which settings made a frame passes them as ``key``: equal keys give
    the result built before without reading the frame; another key builds again."""
    from figures.memo import built

    calls = []

    def table(frame: pd.DataFrame) -> pd.DataFrame:
        calls.append(1)
        return frame.assign(twice=2 * frame.x)

    frame = pd.DataFrame({"x": [1.0, 2.0]})
    first = built(table, frame, key=(("n", 3), 0.5, "cape"))
    # a fresh copy of the frame (as st.cache_data hands it out), the same settings: no build
    assert built(table, frame.copy(), key=(("n", 3), 0.5, "cape")) is first
    assert len(calls) == 1
    other = built(table, frame, key=(("n", 3), 0.25, "cape"))
    assert other is not first and len(calls) == 2
    with pytest.raises(TypeError, match="key"):
        built(table, frame, key=object())


def test_a_spec_with_derived_fields_names_a_result_by_its_compared_fields():
    """A sweep spec (frozen dataclass) carries derived fields outside its equality (its
    resolved algorithm records: objects the digest cannot read). As a key it is named by the
    fields that define equality: equal specs share a result, a changed field builds again."""
    import dataclasses

    from figures.memo import built, digest

    @dataclasses.dataclass(frozen=True)
    class Spec:
        epsilon: float
        records: tuple = dataclasses.field(repr=False, compare=False)

    first = Spec(0.5, (object(),))
    again = Spec(0.5, (object(),))  # equal (records are not compared), other record objects
    assert first == again and digest(first) == digest(again) is not None
    assert digest(Spec(0.25, (object(),))) != digest(first)

    def table(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(y=1)

    frame = pd.DataFrame({"x": [1.0]})
    made = built(table, frame, key=(first, 7))
    assert built(table, frame, key=(again, 7)) is made
    assert built(table, frame, key=(Spec(0.25, ()), 7)) is not made


@pytest.mark.parametrize("rule", ["equal", "∝ N_s", "manual"])
def test_the_sites_tables_plain_rows_give_what_the_frames_give(rule):
    """ui.sites_table works on plain rows on every rerun (pandas cost ~1 ms a call, ~20 calls a
    move); its texts and editor frames must be what the pandas operations give: μ from the
    rule, resized with new sites (N_s = 1000, ε = 0.5, δ = 1e-3), N_s rounded half to even."""
    from ui import sites_table as t

    rng = np.random.default_rng(3)
    for _ in range(40):
        rows = int(rng.integers(1, 22))
        sizes = rng.choice([1.0, 7.0, 1000.0, 12345.6, 2.5, 3.5, 0.0], rows)
        table = pd.DataFrame(
            {
                "N_s": sizes,
                "ε_s": rng.uniform(0.01, 5, rows).round(4),
                "δ_s": rng.choice([1e-3, 1e-5, 0.01], rows),
                "μ_s": rng.random(rows).round(4),
            }
        )
        text = ";".join(",".join(f"{v:.6g}" for v in row) for row in table.to_numpy())
        table["N_s"] = table["N_s"].round().astype(int)  # 2.5 → 2, 3.5 → 4 (half to even)
        parsed = t._parse(text)
        pd.testing.assert_frame_equal(t._frame(parsed), table)
        for sites in (2, 5, 20):
            # the reference: pandas on the frame, as the table was computed before
            kept = table.iloc[:sites].reset_index(drop=True)
            extra = pd.DataFrame(
                {"N_s": [1000] * (sites - len(kept)), "ε_s": 0.5, "δ_s": 1e-3}
            ).assign(**{"μ_s": 1.0 / sites})
            want = pd.concat([kept, extra], ignore_index=True) if len(extra) else kept
            if rule == "equal":
                want = want.assign(**{"μ_s": 1.0 / len(want)})
            elif rule == "∝ N_s":
                with np.errstate(divide="ignore", invalid="ignore"):
                    want = want.assign(**{"μ_s": want["N_s"] / want["N_s"].sum()})
            got = t._rows_with_rule(t._resized_rows(parsed, sites, rule), rule)
            pd.testing.assert_frame_equal(t._frame(got), want, check_dtype=False)
            assert t._text(got) == ";".join(
                ",".join(f"{v:.6g}" for v in row) for row in want.to_numpy(float)
            )
