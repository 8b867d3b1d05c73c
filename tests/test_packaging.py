"""The package: metadata, version, licence and citation agree; the checkout's wheel installed
in a fresh venv outside the checkout gives dpcore, its commit and its CLIs, and with `[app]`
serves the app; the wheel holds only dpcore."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

import dpcore

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CORE = {"numpy", "scipy", "pandas"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()


def test_pyproject_declares_a_build_the_core_dependencies_and_the_extras():
    project = PYPROJECT["project"]
    # setuptools', keeping the commit from an sdist to its wheel (build_backend/cape_build.py)
    assert PYPROJECT["build-system"]["build-backend"] == "cape_build"
    assert PYPROJECT["build-system"]["backend-path"] == ["build_backend"]
    assert CORE <= {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert {"streamlit", "plotly", "scikit-learn", "mlxtend"} <= {_name(r) for r in extras["app"]}
    assert {"scikit-learn", "mlxtend"} == {_name(r) for r in extras["data"]}
    assert {"dask"} == {_name(r) for r in extras["dask"]}
    assert project["license"] == "BSD-3-Clause"


def _requirements() -> list[tuple[str, str]]:
    """(file, requirement) of every dependency the project declares: pyproject's and the
    requirements files'."""
    project = PYPROJECT["project"]
    found = [("pyproject.toml", r) for r in project["dependencies"]]
    found += [("pyproject.toml", r) for rs in project["optional-dependencies"].values() for r in rs]
    for path in sorted(ROOT.glob("requirements*.txt")):
        lines = path.read_text().splitlines()
        found += [(path.name, x.split("#")[0].strip()) for x in lines if x.split("#")[0].strip()]
    return found


def test_no_dependency_bound_is_a_date():
    # Issue #51: Dask's versions are dates (2026.8.0), and "dask<2027" would have refused its
    # first 2027 release on 1 January: a pin that expires. An upper bound is a major version.
    dated = [
        (where, r)
        for where, r in _requirements()
        for bound in re.findall(r"<=?\s*(\d+)", r)
        if int(bound) >= 2000
    ]
    assert not dated, dated
    assert ("requirements-dask.txt", "dask[distributed]>=2024.8") in _requirements()


def test_core_ranges_are_the_ones_the_lock_is_compiled_from():
    # requirements.txt (→ requirements.lock) and pyproject must not drift apart.
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    txt = {_name(x): x.split("#")[0].strip() for x in lines if x and not x.startswith("#")}
    for requirement in PYPROJECT["project"]["dependencies"]:
        assert txt[_name(requirement)] == requirement
    for requirement in PYPROJECT["project"]["optional-dependencies"]["app"]:
        assert txt[_name(requirement)] == requirement


def test_every_subpackage_of_dpcore_and_nothing_else_is_packaged():
    # issue #39: paper, figures, learning (and federated) were top-level packages of the wheel
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "dpcore").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found == listed
    assert (ROOT / "dpcore" / "py.typed").is_file()  # PEP 561: the core is typed
    assert PYPROJECT["tool"]["setuptools"]["package-data"] == {"dpcore": ["py.typed"]}


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_version_licence_citation_and_changelog_agree():
    # issue #39: the version was a constant, "0.1.0" for every commit; now from git
    scm = PYPROJECT["tool"]["setuptools_scm"]
    assert scm["version_file"] == "dpcore/_build_info.py"
    assert "dynamic" not in PYPROJECT["tool"]["setuptools"]  # no attr= constant any more
    release = dpcore.version.release()
    assert re.fullmatch(r"\d+\.\d+\.\d+", release)
    after = dpcore.version.scm_version(release, 1, "0" * 40, False).split(".dev")[0]
    assert dpcore.__version__ == release or dpcore.__version__.startswith(after + ".dev")
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(release)}$", cff, flags=re.M)
    assert "10.1109/JSTSP.2018.2877842" in cff and "license: BSD-3-Clause" in cff
    assert f"## [{release}]" in (ROOT / "CHANGELOG.md").read_text()
    assert f"version = {{{release}}}" in (ROOT / "README.md").read_text()
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("BSD 3-Clause License") and "Neither the name" in licence
    readme = (ROOT / "README.md").read_text()
    assert "## Cite" in readme
    assert re.search(r"doi\s*=\s*\{10\.1109/JSTSP\.2018\.2877842\}", readme)
    assert "## Install as a package" in readme


def _release_commit(release: str, root: Path = ROOT) -> str:
    """The tag's commit; in a clone without tags, the commit that set CITATION.cff's version."""
    tagged = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", f"refs/tags/v{release}"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    if tagged.returncode == 0:  # the tag is here: it is annotated, not lightweight
        assert _git("cat-file", "-t", f"v{release}") == "tag"
        return f"v{release}"
    log = ["log", "-1", "--format=%H", "-G", "^version: ", "--", "CITATION.cff"]
    return subprocess.run(
        ["git", *log], capture_output=True, text=True, cwd=root, check=True
    ).stdout.strip()


@pytest.mark.xdist_group("wheel")  # setuptools-scm may rewrite _build_info.py: not mid-build
def test_the_release_is_an_annotated_tag_and_the_version_is_setuptools_scms():
    release = dpcore.version.release()
    since = _release_commit(release)
    head = _git("rev-parse", "HEAD")
    assert dpcore.source_commit().startswith(head)
    distance = int(_git("rev-list", "--count", f"{since}..HEAD"))
    if distance:
        assert f".dev{distance}+g{head[:9]}" in dpcore.__version__
    pytest.importorskip("setuptools_scm")  # the build's own computation (the lock)
    built = subprocess.run(  # as the build computes it, with pyproject.toml's describe command
        [sys.executable, "-m", "setuptools_scm"], capture_output=True, text=True, cwd=ROOT
    )
    assert built.stdout.strip() == dpcore.__version__, built.stderr


def test_a_clone_without_tags_names_the_release_citation_cff_names(tmp_path):
    # CI clones one branch without its tags: the version still counts from the last release
    # (it said 0.0 / 0.1.devN there), and setuptools-scm's describe command agrees
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-tags", str(ROOT), str(clone)], check=True)
    assert not subprocess.run(
        ["git", "tag"], capture_output=True, text=True, cwd=clone
    ).stdout.strip()
    release = re.search(r"^version: (\S+)$", (clone / "CITATION.cff").read_text(), re.M)[1]
    since = _release_commit(release, clone)
    distance = subprocess.run(
        ["git", "rev-list", "--count", f"{since}..HEAD"], capture_output=True, text=True, cwd=clone
    ).stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=clone
    ).stdout.strip()
    described = subprocess.run(
        ["sh", "scripts/git_describe.sh"], capture_output=True, text=True, cwd=clone, check=True
    ).stdout.strip()
    assert described == f"v{release}-{distance}-g{head}"
    scm = PYPROJECT["tool"]["setuptools_scm"]["scm"]["git"]["describe_command"]
    assert scm == ["sh", "scripts/git_describe.sh"]


def test_a_built_wheel_without_git_reads_its_build_info(tmp_path, monkeypatch):
    # what an installed wheel sees: no checkout around it, the file setuptools-scm wrote
    from dpcore import version

    info = tmp_path / "dpcore" / "_build_info.py"
    info.parent.mkdir()
    info.write_text(
        '__version__ = "0.2.1.dev3+g1a2b3c4d5"\nRELEASE = "0.2.0"\n'
        'COMMIT = "g1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"\nDIRTY = False\n'
    )
    monkeypatch.setattr(version, "ROOT", tmp_path)  # no .git there
    monkeypatch.setattr(sys.modules["dpcore"], "__path__", [str(info.parent)])
    monkeypatch.delitem(sys.modules, "dpcore._build_info", raising=False)
    version.git_state.cache_clear()
    dpcore.source_commit.cache_clear()
    try:
        assert version.git_state() is None
        assert version._version() == "0.2.1.dev3+g1a2b3c4d5" and version.release() == "0.2.0"
        assert dpcore.source_commit() == "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
    finally:
        version.git_state.cache_clear()
        dpcore.source_commit.cache_clear()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip wheel <checkout>` builds (its build requirements from the registry), as
    `pip install <checkout>` builds it before installing."""
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # setuptools copies what an earlier build left in build/lib into the wheel (a package
    # since dropped from the list among them): that directory is only a build's leftover
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = out.glob("cape_lab-*.whl")
    return built


@pytest.mark.slow
@pytest.mark.xdist_group("wheel")  # one worker builds the wheel once for both tests
def test_a_fresh_venv_install_gives_dpcore_its_commit_the_clis_and_with_app_the_app(
    tmp_path, wheel
):
    """`pip install` of the checkout's wheel in a fresh venv outside the checkout: dpcore, its
    version and commit (issue #39: an installed package said 0.1.0, commit unknown), the CLIs
    and their records; then the `[app]` extra serves app.py. One venv for both installs: the
    core's dependencies are installed once (two venvs cost ~100 s more per run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing from the checkout
    venv, head = tmp_path / "venv", _git("rev-parse", "HEAD")
    bin_ = venv / "bin"

    def run(*args, cwd=tmp_path, timeout=900):
        done = subprocess.run(
            [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout

    run(sys.executable, "-m", "venv", venv)
    # --no-compile: no .pyc for every installed module (the test took 71-90 s with them, 36 s
    # without); the checks below import what they need and compile it then
    run(bin_ / "python", "-m", "pip", "install", "--quiet", "--no-compile", wheel)
    probe = (
        "import dpcore, importlib.metadata as m, json, sys; from dpcore import version; "
        "print(json.dumps([dpcore.__version__, version.source_commit(), version.release(), "
        "dpcore.__file__, m.requires('cape-lab'), 'streamlit' in sys.modules]))"
    )
    got, commit, release, where, requires, streamlit = json.loads(run(bin_ / "python", "-c", probe))
    assert Path(where).is_relative_to(venv)  # the wheel's copy, no checkout around it
    assert got == dpcore.__version__ and release == dpcore.version.release()
    assert commit.startswith(head) and commit == dpcore.source_commit()
    if got != release:  # past the tag: the commit is in the version's local part too
        assert f"+g{head[:9]}" in got
    assert CORE <= {_name(r) for r in requires if "extra ==" not in r}
    assert not streamlit

    # The CLIs of the core install: a sweep and its record; the paper without plotly.
    run(bin_ / "cape-sweep", "pca", "--epsilon", "0.5,5", "--runs", "1", "--dim", "10",
        "--k", "2", "--pool-size", "500", "--n-per-site", "20", "--out", "s.csv")  # fmt: skip
    record = json.loads((tmp_path / "s.json").read_text())
    assert (record["version"], record["commit"]) == (got, commit)
    out = run(bin_ / "cape-paper", "--figure", "3a", "--runs", "1", "--out", "p")
    assert "HTML figures skipped: they need plotly: pip install 'cape-lab[app]'" in out
    assert {"fig3a.csv", "claims.csv", "run.json"} == {p.name for p in (tmp_path / "p").iterdir()}

    # The app extra: streamlit serves app.py, and the app's script runs without an error.
    run(bin_ / "python", "-m", "pip", "install", "--quiet", "--no-compile", f"{wheel}[app]")
    port = _free_port()
    serve = ["--server.headless", "true", "--server.port", str(port)]
    serve += ["--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    server = subprocess.Popen(
        [str(bin_ / "streamlit"), "run", "app.py", *serve],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline, health = time.monotonic() + 120, ""
        while time.monotonic() < deadline and health != "ok":
            assert server.poll() is None, "streamlit exited"
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=5) as r:
                    health = r.read().decode()
            except OSError:
                time.sleep(0.5)
        assert health == "ok"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        server.terminate()
        server.wait(timeout=30)
    script = (
        "from streamlit.testing.v1 import AppTest; "
        "at = AppTest.from_file('app.py', default_timeout=120).run(); "
        "print([e.message for e in at.exception]); print([t.value for t in at.title])"
    )
    errors, titles = run(bin_ / "python", "-c", script, cwd=ROOT).strip().splitlines()[-2:]
    assert errors == "[]" and "CAPE Lab" in titles


@pytest.mark.slow
@pytest.mark.xdist_group("wheel")
def test_the_wheel_holds_only_dpcore_and_its_typing_marker(wheel):
    # issue #39: `paper`, `figures`, `learning` were installed as top-level packages
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"dpcore"}
    assert "dpcore/py.typed" in names and "dpcore/_build_info.py" in names
    assert "dpcore/paper_cli.py" in names  # the paper CLI, without the app's figure code
    assert not any(n.endswith("precomputed.csv.gz") for n in names)
    (entry,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    scripts = zipfile.ZipFile(wheel).read(entry).decode()
    assert "cape-paper = dpcore.paper_cli:main" in scripts
    assert "cape-sweep = dpcore.cli:main" in scripts


@pytest.fixture(scope="module")
def build_venv(tmp_path_factory) -> Path:
    """A venv of these tests' own (not the shared one) with the `build` package from the
    registry; the tests that need it skip when the registry cannot give it."""
    venv = tmp_path_factory.mktemp("build") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_NO_PATH)
    got = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "build"],
        capture_output=True, text=True, env=_NO_PATH, timeout=600,
    )  # fmt: skip
    if got.returncode != 0:
        pytest.skip(f"the `build` package could not be installed: {got.stderr[-300:]}")
    return venv


_NO_PATH = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _built_and_installed(venv: Path, source: Path, tmp_path: Path) -> tuple[Path, list]:
    """`python -m build` of ``source`` (the sdist, then the wheel from the unpacked sdist) and
    what the wheel, unpacked as installed with no checkout or git around it, reports: the sdist
    and [dpcore's file, __version__, source_commit(), release()]."""
    dist, site = tmp_path / "dist", tmp_path / "site"
    built = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "build", "-o", str(dist), str(source)],
        capture_output=True, text=True, env=_NO_PATH, timeout=900,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (sdist,) = dist.glob("cape_lab-*.tar.gz")
    (wheel,) = dist.glob("cape_lab-*.whl")  # built from the unpacked sdist
    import zipfile

    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        f"import sys; sys.path.insert(0, {str(site)!r}); import dpcore, json; "
        "from dpcore import version; "
        "print(json.dumps([dpcore.__file__, dpcore.__version__, version.source_commit(), "
        "version.release()]))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True,
        cwd=tmp_path, env=_NO_PATH,
    )  # fmt: skip
    reported = json.loads(shown.stdout)
    assert Path(reported[0]).is_relative_to(site)
    return sdist, reported


@pytest.mark.slow
@pytest.mark.xdist_group("wheel")
def test_python_m_build_from_a_clone_builds_a_wheel_that_reports_its_commit(build_venv, tmp_path):
    """issue #51: `python -m build` builds the sdist, then the wheel from the unpacked sdist,
    where there is no git: the wheel's build info said COMMIT = None (frames: "unknown") and
    the version as the release."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-tags", str(ROOT), str(clone)], check=True)
    head = _git("rev-parse", "HEAD")
    sdist, (_, got_version, commit, release) = _built_and_installed(build_venv, clone, tmp_path)
    assert commit == head  # not "unknown"
    assert release == dpcore.version.release()
    assert got_version == sdist.name.removeprefix("cape_lab-").removesuffix(".tar.gz")
    assert f"+g{head[:9]}" in got_version or got_version == release


@pytest.mark.slow
@pytest.mark.xdist_group("wheel")
def test_a_wheel_built_from_a_git_archive_reports_its_commit(build_venv, tmp_path):
    """issue #51: a tree made by `git archive` (a release tarball, GitHub's "Download ZIP")
    has no .git: setuptools-scm stopped the build there (an empty describe-name without a
    release tag). git writes the commit into .git_archival.txt (export-subst), and the build
    backend hands it over, the version counting from CITATION.cff's release at dev0."""
    clone, tree = tmp_path / "clone", tmp_path / "tree"
    subprocess.run(["git", "clone", "-q", "--no-tags", str(ROOT), str(clone)], check=True)
    head = _git("rev-parse", "HEAD")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=clone, capture_output=True, check=True
    ).stdout
    import io
    import tarfile

    tarfile.open(fileobj=io.BytesIO(archive)).extractall(tree, filter="data")
    assert not (tree / ".git").exists() and head in (tree / ".git_archival.txt").read_text()
    sdist, (_, got_version, commit, release) = _built_and_installed(build_venv, tree, tmp_path)
    assert commit == head
    assert release == dpcore.version.release()
    assert got_version == sdist.name.removeprefix("cape_lab-").removesuffix(".tar.gz")
    assert got_version.endswith(f".dev0+g{head[:9]}"), got_version
