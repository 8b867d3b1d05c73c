"""Shared test setup: BLAS threads, hypothesis profiles, a Dask cluster, and for the tests
marked ``browser`` the real app and Debian's Chromium."""

import functools
import importlib.util
import json
import os
import platform
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from module_marks import deselected_module
from streamlit import config as streamlit_config
from streamlit.components.v2 import manifest_scanner
from xdist_groups import AsideScheduling, mark_groups, workers

from benchmarks.server import CHROMIUM, CHROMIUM_ARGS, streamlit_server

# seconds per test of one full run, to start the longest first (scripts/durations.py writes it)
DURATIONS = Path(__file__).with_name("durations.json")


def _test_folders(tests: Path) -> list[str]:
    """tests/'s folders that hold test files (tests/ui/, tests/core/factorization/, …)."""
    found = {p.parent for p in tests.rglob("test_*.py")} - {tests}
    return sorted(str(p) for p in found if "__pycache__" not in p.parts)


# The tests mirror the project, a folder per package (docs/architecture.md). tests/ itself is
# on sys.path (pytest puts this file's folder there: no __init__.py), so its helpers (planted,
# frames, browser_wait, …) import by name; every folder of it is put there too, after the rest,
# so that a test file imports another's helpers by its file name from any folder, as when they
# all sat in tests/ (tests/app/test_links.py reads tests/learning/test_lessons.py's) and as
# pytest itself imports each test file (by its name, its folder first on sys.path): one module
# per file, never a second copy under a second name. tests/test_architecture.py keeps test
# files' names unique across the folders.
sys.path.extend(p for p in _test_folders(Path(__file__).parent) if p not in sys.path)

# Small dense linear algebra is 3x slower with two OpenBLAS threads on this 2-core machine
# (measured; see docs/deviations.md). Must be set before numpy loads its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _pin_cpu_kernels() -> None:
    """Run OpenBLAS's Haswell (AVX2) kernels, and NumPy's AVX2 loops, on any x86-64 CPU that
    has AVX2 and FMA.

    OpenBLAS picks its kernels by CPU at load time (SkylakeX on AVX-512 machines, Haswell or
    Zen on others), and kernels of different vector widths block their sums differently.
    Most frames move by rounding only, but the noise-dominated tensor cases (one site's
    noise, small ε) restart the power method from several starts and keep the best: a
    last-bit change can pick another start, and their numbers then move by their whole
    Monte Carlo spread (seen: 0.75 of a column on an AMD EPYC with AVX-512). NumPy likewise
    dispatches its ufuncs (exp, log, power, …) to AVX-512 loops where the CPU has them, whose
    results differ from the AVX2 loops' in the last bit (seen on 2026-11-28, an AMD EPYC with
    AVX-512: the audit's α and a trust-model ε of tests/test_numbers_unchanged.py, one ulp
    each). The frame reference (tests/frame_reference.json), the numbers reference
    (tests/numbers_reference.json) and the default seed's band
    (tests/benchmarks/test_default_seed.py) were recorded with the AVX2 kernels; pinning them
    makes those checks mean the same on every x86-64 CI machine; the servers and workers the
    tests start inherit both. The names
    are the locked NumPy's AVX-512 dispatch targets (``numpy.show_runtime()``); one the CPU
    lacks is skipped silently, one NumPy does not know is an ImportWarning. Must be set before
    NumPy loads.
    """
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((ln.split(":", 1)[1].split() for ln in info if ln.startswith("flags")), [])
    except OSError:
        return
    if {"avx2", "fma"} <= set(flags):
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
        os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")


_pin_cpu_kernels()

# Students see a generic message for an unexpected exception (.streamlit/config.toml); tests
# must see the real one, or a failing fuzz step says nothing (servers the browser tests start
# read the environment; AppTest reads the option set here).
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
# The lecturer's key (ui/lecturer.py) of every server and AppTest the tests start: a test opens
# the lecturer's page with ?lecturer=LECTURER_KEY, a student's without.
LECTURER_KEY = os.environ.setdefault("CAPE_LECTURER_KEY", "test-lecturer-key")
streamlit_config.set_option("client.showErrorDetails", "full")

# Every AppTest scans all installed distributions for Streamlit component manifests (about
# 0.2 s of CPU each: importlib.metadata parses every METADATA file): scanned once per test
# process, since nothing is installed while the suite runs. A copy each time, as a fresh scan.
_scan = manifest_scanner.scan_component_manifests
_scanned = functools.cache(lambda: tuple(_scan()))
manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_scanned())

# Hypothesis profiles. "ci" replays the same examples on every run (derandomize: the examples
# are a function of the test's source only), so a red CI is a real, repeatable failure and never
# a random draw; the timing health check is off because a busy 2-core machine must not decide
# a test. Each test's own max_examples is its fixed budget. "dev" explores: new random examples
# every run, remembered in .hypothesis/ when one fails. CI=true (as CI sets it) selects "ci";
# HYPOTHESIS_PROFILE overrides either way.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def dask_cluster():
    """Address of a real Dask LocalCluster: 2 worker processes with 1 thread each, no
    dashboard, on 127.0.0.1, ports from CAPE_DASK_PORTS if set (shared by the tests)."""
    pytest.importorskip("distributed")
    from dpcore import local_cluster

    with local_cluster(2) as address:
        yield address


def _browser_missing() -> bool:
    """Playwright or Chromium is not installed (Playwright is imported only when asked: the
    fast lane has no browser test and need not pay for it)."""
    return importlib.util.find_spec("playwright") is None or not Path(CHROMIUM).exists()


def pytest_ignore_collect(collection_path, config):
    """Leave out, unimported, a test module whose own ``pytestmark`` makes ``-m`` deselect all
    its tests (the fast lane need not import the browser and app modules: tests/module_marks.py);
    otherwise let pytest decide."""
    return True if deselected_module(collection_path, config.option.markexpr) else None


def pytest_xdist_auto_num_workers(config):
    """test.sh's ``-n auto``: a worker per core, and one more for the groups that wait
    (tests/xdist_groups.py, ``ASIDE``) when the run may select them."""
    return workers(config)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the groups that wait on a worker of their own (three workers
    or more; tests/xdist_groups.py)."""
    if config.getoption("dist") == "loadgroup":
        return AsideScheduling(config, log)
    return None


def pytest_collection_modifyitems(config, items):
    """Run the ``slow`` tests first, longest first by ``tests/durations.json`` (seconds per
    test of one full run; tests it does not list keep their file order after those it does),
    so that under pytest-xdist (test.sh: ``-n 2``) the longest tests start early and the short
    ones fill the end on every worker, instead of one long test finishing alone. The file only
    orders the run: a stale or missing entry costs time, never a test. Tests of a module
    marked ``in_file_order`` keep their file order.

    Skip the ``browser`` tests where Playwright or Chromium is missing, unless
    REQUIRE_BROWSER=1 (set by .ci/run): there a missing browser is a failure, not a skip."""
    known = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    # A module marked ``in_file_order`` shares state between its tests (one federation whose
    # last test kills a site): its tests stay in file order, as one block placed by its
    # longest test. Sorting them apart once ran that test first (CI of 2026-11-27).
    block: dict[str, float] = {}
    for item in items:
        if "in_file_order" in item.keywords:
            name = item.module.__name__
            block[name] = max(block.get(name, 0.0), known.get(item.nodeid, 0.0))
    position = {id(item): i for i, item in enumerate(items)}

    def order(item):
        name = item.module.__name__ if "in_file_order" in item.keywords else None
        seconds = block[name] if name else known.get(item.nodeid, 0.0)
        return ("slow" not in item.keywords, -seconds, name or "", position[id(item)])

    items.sort(key=order)
    mark_groups(config, items)  # after the ordering, which reads the ids without a group
    if not any("browser" in item.keywords for item in items) or not _browser_missing():
        return
    if os.environ.get("REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(f"REQUIRE_BROWSER=1 but playwright or {CHROMIUM} is missing")
    skip = pytest.mark.skip(reason=f"needs playwright and {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def served():
    """(base URL, process) of the real app (`streamlit run app.py`) on a free loopback port:
    one per test process (each xdist worker has its own)."""
    try:
        with streamlit_server() as served:
            yield served
    except RuntimeError as err:  # it did not start
        pytest.fail(str(err))


@pytest.fixture(scope="session")
def server(served):
    """Base URL of :func:`served`, shared by the browser tests; a test that needs a server
    nobody has used starts its own (tests/browser/test_browser.py)."""
    return served[0]


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium with the flags this machine needs (no sandbox, no GPU, no network).
    Per module, not per session: Playwright's sync API keeps an asyncio loop running while it
    is open, and tests in other modules call ``asyncio.run`` (load, capacity, bounds)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def tabs(browser):
    """``tab(width=, height=, dark=, phone=)``: a browser tab to ``goto`` the app in, one per
    colour scheme and kind of browser (a desktop's, a phone's), reused by the module's tests.
    Each ``goto`` opens a new document, so a new Streamlit session, as a fresh browser would;
    cookies and storage are cleared before each use. What a tab does not start afresh is its
    history list (tests of Back/Forward open their own context) and the browser's caches: a
    new context costs Chromium about 4.4 CPU-seconds per page load, a reused tab about 2
    (docs/performance.md), and the browser tests load some 150 pages."""
    import browser_wait  # imports playwright, which a machine without a browser lacks

    opened: dict[tuple[bool, bool], object] = {}

    def tab(*, width: int = 1400, height: int = 1000, dark: bool = False, phone: bool = False):
        """``phone``: a phone's browser (mobile, touch, a phone's user agent: PHONE)."""
        page = opened.get((dark, phone))
        if page is None:
            context = browser.new_context(
                viewport={"width": width, "height": height},
                color_scheme="dark" if dark else "light",
                accept_downloads=True,
                **(PHONE if phone else {}),
                **browser_wait.CONTEXT,
            )
            page = opened[dark, phone] = context.new_page()
        else:
            page.context.clear_cookies()
            page.evaluate(CLEAR_STORAGE)
            # its scheme, should a test have switched it (browser_wait.switch_scheme)
            page.emulate_media(color_scheme="dark" if dark else "light")
        page.set_viewport_size({"width": width, "height": height})
        return page

    yield tab
    for page in opened.values():
        page.context.close()


# What a phone's browser tells the app and the page (a viewport as in ``tabs``' tab)
PHONE = {
    "is_mobile": True,
    "has_touch": True,
    "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
}

# The app's origin keeps a few things in the browser (Streamlit's nav folding, sidebar width);
# a reused tab forgets them, as a fresh browser has none.
CLEAR_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"
