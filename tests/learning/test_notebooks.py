"""A notebook per lesson step (issue #49): valid nbformat 4, its code imports only dpcore's public
names, and run cell by cell in a fresh namespace it computes the page's own numbers for the
step, to the bit, at the setting the page showed."""

from __future__ import annotations

import json
import math
import re
import string
from pathlib import Path

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from test_public_imports import reaches

from learning import notebooks
from learning.lessons import LESSONS

ROOT = Path(__file__).resolve().parents[2]
STEPS = [(lesson, i, step) for lesson in LESSONS for i, step in enumerate(lesson.steps, 1)]
IDS = [f"{lesson.key}-{step.key}" for lesson, _, step in STEPS]

# Quoted names the notebook leaves out on purpose: the quiz's answer and the sentences that
# state it (a student may open the notebook before answering; the numbers deciding it are in).
VERDICTS = {"answer", "finding", "depth"}


def _other(step):
    """A setting other than the default: the next option (the cheapest for the audit's games)."""
    options = list(step.control.options)
    if step.scene == "audit_scene":
        return min(options)
    return options[(options.index(step.control.default) + 1) % len(options)]


CHANGED = [(lesson, i, step, _other(step)) for lesson, i, step in STEPS]


def _quoted(step) -> set[str]:
    """The names of the numbers the step's text, question, figure note and link label quote."""
    q = step.question
    templates = [step.text, step.explain, step.explore.label]
    if q is not None:
        templates += [q.prompt, q.reveal, *q.options]
    return {
        field
        for t in templates
        for _, field, _, _ in string.Formatter().parse(t)
        if field is not None
    }


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def run(nb: dict, monkeypatch) -> dict:
    """Execute the notebook's code cells in order in a fresh namespace (no figure shown)."""
    monkeypatch.setattr(go.Figure, "show", lambda self, *a, **k: None)
    scope: dict = {}
    for i, code in enumerate(_code(nb)):
        exec(compile(code, f"<cell {i}>", "exec"), scope)  # our own generated text
    return scope


@pytest.mark.parametrize(("lesson", "number", "step"), STEPS, ids=IDS)
def test_every_steps_notebook_is_valid_nbformat_4(lesson, number, step):
    raw = notebooks.notebook_bytes(lesson.key, number)
    nb = json.loads(raw.decode("utf-8"))
    assert nb == notebooks.notebook(lesson.key, number)  # the bytes are the notebook
    # the rules of nbformat's v4.5 JSON schema: no keys where it forbids extra ones, and from
    # 4.5 on every cell carries an id
    assert set(nb) == {"cells", "metadata", "nbformat", "nbformat_minor"}
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] == 5
    kernel, language = nb["metadata"]["kernelspec"], nb["metadata"]["language_info"]
    assert isinstance(kernel["name"], str) and isinstance(kernel["display_name"], str)
    assert language["name"] == "python"
    # about; imports, parameters, compute, figure, print
    assert [c["cell_type"] for c in nb["cells"]] == ["markdown"] + ["code"] * 5
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", i) for i in ids), ids
    for cell in nb["cells"]:
        assert isinstance(cell["metadata"], dict)
        assert isinstance(cell["source"], list) and all(isinstance(s, str) for s in cell["source"])
        assert all(line.endswith("\n") for line in cell["source"][:-1])
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
            keys = {"id", "cell_type", "execution_count", "metadata", "outputs", "source"}
            assert set(cell) == keys
            compile("".join(cell["source"]), "<cell>", "exec")
        else:
            assert set(cell) == {"id", "cell_type", "metadata", "source"}
    about = "".join(nb["cells"][0]["source"])
    assert step.title in about and lesson.title in about and "Where it comes from" in about
    assert "import dpcore" in "".join(nb["cells"][1]["source"])
    # what we teach imports only dpcore's public names (#51), in every cell
    assert reaches("\n".join(_code(nb))) == []
    assert notebooks.file_name(lesson.key, number) == (
        f"cape_lesson_{LESSONS.index(lesson) + 1}_{lesson.key}_step_{number}_{step.key}.ipynb"
    )


def _same(got, page) -> bool:
    """Equal to the bit: floats by value and NaN by NaN, containers item by item."""
    if isinstance(page, (list, tuple)):
        return len(got) == len(page) and all(_same(g, p) for g, p in zip(got, page, strict=True))
    if isinstance(page, float) and math.isnan(page):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is not bool and got == page


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lesson", "number", "step", "value"),
    [(lesson, i, step, None) for lesson, i, step in STEPS] + CHANGED,
    ids=[f"{i}-default" for i in IDS]
    + [
        f"{i}-{v:g}" if isinstance(v, float) else f"{i}-{v}"
        for i, (*_, v) in zip(IDS, CHANGED, strict=True)
    ],
)
def test_every_steps_notebook_computes_the_pages_numbers(lesson, number, step, value, monkeypatch):
    """The notebook's ``numbers`` are the page's, from the same cached core calls at the same
    setting (the scene the page draws: ui.lesson_scenes.SCENES), bit for bit; they cover
    every number the step quotes; a changed setting is carried into the parameter cell; its
    figure is the page's kind of chart (trace kinds, linear or log axes)."""
    from ui.lesson_scenes import SCENES

    nb = notebooks.notebook(lesson.key, number, value)
    shown = step.control.default if value is None else value
    params = _code(nb)[1]
    assert f" = {shown!r}  # the step's control" in params  # the setting the page showed
    scope = run(nb, monkeypatch)
    scene = SCENES[step.scene](shown)
    # the same kind of chart as the page's: its traces' kinds and its axes' scales
    fig = scope["fig"]
    assert isinstance(fig, go.Figure) and fig.data
    assert {t.type for t in fig.data} == {t.type for t in scene.figure.data}
    for axis in ("xaxis", "yaxis"):
        assert fig.layout[axis].type == scene.figure.layout[axis].type, axis
    got, page = scope["numbers"], scene.numbers
    wrong = {k: (got[k], page.get(k)) for k in got if k not in page or not _same(got[k], page[k])}
    assert not wrong, wrong
    missing = (_quoted(step) - VERDICTS) - set(got)
    assert not missing, f"quoted by the step, not computed by its notebook: {missing}"


def test_bad_lesson_step_or_value_names_the_parameter_the_range_and_the_value():
    keys = [lesson.key for lesson in LESSONS]
    with pytest.raises(ValueError, match=r"lesson must be one of \[.*'noise'.*\]; got 'nois'"):
        notebooks.notebook("nois", 1)
    count = len(LESSONS[0].steps)
    for bad in (0, count + 1, 1.0, True, "1"):
        with pytest.raises(ValueError, match=rf"step must be an integer in \[1, {count}\].*got"):
            notebooks.notebook(keys[0], bad)
    with pytest.raises(
        ValueError, match=r"value must be one of \[0\.01, .*\(Privacy ε\); got 0\.3"
    ):
        notebooks.notebook("noise", 1, 0.3)
    with pytest.raises(ValueError, match="step must be an integer"):
        notebooks.file_name("noise", 9)


class _Recording:
    """Streamlit's in-memory media store, kept so the test can fetch a download's bytes."""

    def __init__(self, real):
        self.real = real
        self.made: list = []

    def __call__(self, *args, **kwargs):
        made = self.real(*args, **kwargs)
        self.made.append(made)
        return made


def _download(monkeypatch, at_params: dict) -> tuple[AppTest, object, tuple[str, bytes] | None]:
    """Open a lesson step; return the app, the notebook button and (file name, bytes)."""
    import streamlit.testing.v1.app_test as app_test

    managers = _Recording(app_test.MediaFileManager)
    stores = _Recording(app_test.MemoryMediaFileStorage)
    monkeypatch.setattr(app_test, "MediaFileManager", managers)
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", stores)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/learn.py")
    at.query_params.update(at_params)
    at.run()
    buttons = [b for b in at.get("download_button") if b.proto.label == "Notebook (.ipynb)"]
    if not buttons:
        return at, None, None
    (button,) = buttons
    url = managers.made[-1].execute_deferred(button.proto.deferred_file_id)
    stored = stores.made[-1].get_file(url.rsplit("/", 1)[-1])
    return at, button, (stored.filename, stored.content)


@pytest.mark.app
@pytest.mark.slow
def test_a_lesson_step_offers_its_notebook_at_the_pages_setting(monkeypatch):
    lesson = LESSONS[0]
    at, button, got = _download(
        monkeypatch, {"learn_lesson": lesson.name, "learn_step": "2", "learn_delta": "0.0001"}
    )
    assert not at.exception and not at.error
    assert button is not None and button.proto.id.endswith(f"notebook_{lesson.key}_delta")
    name, content = got
    assert name == "cape_lesson_1_noise_step_2_delta.ipynb"
    nb = json.loads(content)
    assert nb["nbformat"] == 4
    assert "delta = 0.0001  # the step's control" in _code(nb)[1]  # the page's own δ
    # presenter mode keeps the projector's room: no notebook button there
    at, button, _ = _download(
        monkeypatch, {"learn_lesson": lesson.name, "learn_step": "2", "present": "true"}
    )
    assert not at.exception and button is None
