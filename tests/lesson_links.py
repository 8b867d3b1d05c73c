"""Every link the class kit hands a class (issue #49): each lesson step's Explore link, each
handout's links and the 50-minute plan's links, as (where it comes from, page, query). Shared
by tests/app/test_links.py (AppTest) and tests/browser/test_browser_links.py (Chromium); an
error box that is a page's verdict is told by its icon (figures.theme.VERDICT_ICON)."""

from __future__ import annotations

import html
import re
import urllib.parse
from dataclasses import dataclass, field

from learning.lessons import LESSONS
from learning.sections import PARAM as SECTION


@dataclass(frozen=True)
class Link:
    """One link: ``source`` names where it is given (``lesson 6.1 Explore``), ``path`` is the
    page's URL path (``trust_models``; ``""`` the Overview), ``query`` its parameters."""

    source: str
    path: str
    query: tuple[tuple[str, str], ...]
    # the numbers the lesson quotes and the page shows again: name → (value, format spec)
    shows: dict[str, tuple[float, str]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def script(self) -> str:
        return f"app_pages/{self.path or 'overview'}.py"

    @property
    def section(self) -> str | None:
        return next((v for k, v in self.query if k == SECTION), None)

    def params(self) -> dict[str, list[str]]:
        """The link's settings by key (a key given twice is a list), its section left out."""
        out: dict[str, list[str]] = {}
        for key, value in self.query:
            if key != SECTION:
                out.setdefault(key, []).append(value)
        return out

    def url(self, base: str) -> str:
        return f"{base}/{self.path}?{urllib.parse.urlencode(self.query)}"


def _spec(step, name: str) -> str:
    from test_lessons import _spec as spec  # the precision the lesson quotes ``name`` at

    return spec(step, name) or ""


def explore_links() -> list[Link]:
    """Each lesson step's Explore link at its control's default, as the lesson draws it."""
    from ui.lesson_scenes import SCENES

    links = []
    for number, lesson in enumerate(LESSONS, 1):
        for i, step in enumerate(lesson.steps, 1):
            numbers = SCENES[step.scene](step.control.default).numbers
            path = step.explore.page.removeprefix("app_pages/").removesuffix(".py")
            shows = {n: (float(numbers[n]), _spec(step, n)) for n in step.explore.shows}
            links.append(
                Link(
                    f"lesson {number}.{i} Explore",
                    "" if path == "overview" else path,
                    tuple(step.explore.query(numbers)),
                    shows,
                )
            )
    return links


_HREF = re.compile(r"href='([^']*)'")


def parse_href(source: str, href: str, *, escaped: bool = True) -> Link:
    """A link as written in a file's HTML (``escaped``: ``&amp;`` between parameters) or as a
    page's DOM gives it (not escaped: ``&section=`` there is no ``&sect;``), relative
    (``averaging?…``) or absolute."""
    parts = urllib.parse.urlsplit(html.unescape(href) if escaped else href)
    path = parts.path.rstrip("/").rsplit("/", 1)[-1]
    return Link(source, path, tuple(urllib.parse.parse_qsl(parts.query)))


def handout_links() -> list[Link]:
    """Every link of every lesson's handouts (the question and the answer sheet the Handout
    buttons download): its lesson's Explore links at the steps' defaults and the lesson's own
    address (``learn?learn_lesson=…``), each absolute (here under run.sh's address)."""
    from learning.handout import SHEETS
    from ui.class_room import handout

    links = []
    for number, lesson in enumerate(LESSONS, 1):
        for sheet in SHEETS:
            hrefs = _HREF.findall(handout(lesson, sheet))
            assert len(hrefs) == len(lesson.steps) + 1, (lesson.key, sheet, hrefs)
            links += [
                parse_href(f"handout {number} ({sheet}), link {i}", h)
                for i, h in enumerate(hrefs, 1)
            ]
    return links
