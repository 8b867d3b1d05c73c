"""A lesson's handouts, printable: a question sheet without the answers and an answer sheet.

Built from the lesson's records filled with the numbers its scenes computed at each step's
default setting (the same numbers the lesson shows), each as one self-contained HTML page
whose print style fits an A4 or Letter page. The **question sheet** has each step's question
and its options to tick, and no step text (a step's text states what its question asks:
``Question.claim``); the **answer sheet** has each step's text, question, answer and why.

Handouts travel — saved to a downloads folder, mailed, printed — so every link in them is
absolute, built from the app's address (:func:`app_root`: ``CAPE_PUBLIC_URL`` if the server
sets it, else the address the browser used), and the lesson's own link is printed as its
address, readable on paper (issue #49: relative ``averaging?…`` links were dead from a file).
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Iterable, Sequence

from learning.lessons.model import Lesson

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")

_STYLE = """
body { font-family: "Source Sans Pro", "Helvetica Neue", Arial, sans-serif; color: #111;
       max-width: 48rem; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.35; }
h1 { font-size: 1.35rem; margin: 0 0 .2rem; } h2 { font-size: 1.02rem; margin: .7rem 0 .2rem; }
p { margin: .2rem 0; } .summary { color: #333; font-style: italic; }
.q { margin: .25rem 0 0 .8rem; } .a { margin: .1rem 0 0 .8rem; }
.link { font-size: .85rem; color: #333; } footer { margin-top: .8rem; font-size: .75rem; }
.app { margin: .3rem 0; } .app a { word-break: break-all; }
ul.options { list-style: none; margin: .15rem 0 0 .8rem; padding: 0; }
ul.options li { display: inline-block; margin: 0 1.2rem .1rem 0; }
@media print { @page { size: auto; margin: 11mm; }
  body { font-size: 9.5pt; margin: 0; max-width: none; } a { color: #111; } }
"""


def inline(text: str) -> str:
    """The lessons' Markdown (``**bold**``, ``*italic*``, paragraphs) as HTML, escaped."""
    out = _ITALIC.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", html.escape(text)))
    return "</p><p>".join(out.split("\n\n"))


QUESTIONS, ANSWERS = "questions", "answers"  # the two sheets of a lesson
SHEETS = (QUESTIONS, ANSWERS)
ENV = "CAPE_PUBLIC_URL"  # the app's public address, where the server sets one
BOX = "\u2610"  # ☐, an option to tick


def _absolute(url: str, name: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"{name} must be an absolute http(s) address such as https://lab.example.org; "
            f"got {url!r}"
        )
    return parts


def app_root(url: str, pages: Iterable[str], *, public: str | None = None) -> str:
    """The app's address for links that leave it: ``public`` (``CAPE_PUBLIC_URL``) if given,
    else ``url``, the address the browser used (``st.context.url``: the app's address with
    the current page's path, which is taken off when it is one of ``pages``; a base path
    such as ``/cape`` is kept). No query, no fragment, no trailing slash.

    Raises ``ValueError`` when the address is not an absolute http(s) one.
    """
    if public is not None and public.strip():
        parts = _absolute(public, ENV)
        path = parts.path.rstrip("/")
    else:
        parts = _absolute(url, "url")
        path = parts.path.rstrip("/")
        head, _, last = path.rpartition("/")
        if last in set(pages):
            path = head
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def page_url(root: str, page: str, query: Sequence[tuple[str, str]] = ()) -> str:
    """The absolute address of an app page (``app_pages/averaging.py`` or ``averaging``;
    the Overview is the app's root) with ``query``."""
    name = page.removeprefix("app_pages/").removesuffix(".py")
    path = "" if name == "overview" else name
    return f"{root}/{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")


def handout_html(
    lesson: Lesson,
    numbers: Sequence[dict],
    *,
    number: int,
    base_url: str,
    sheet: str = QUESTIONS,
) -> str:
    """The ``sheet`` (:data:`QUESTIONS` or :data:`ANSWERS`) of ``lesson`` (lesson ``number``
    of the course); ``numbers[i]`` are step i's scene numbers at its control's default;
    ``base_url`` is the app's absolute address (:func:`app_root`), which every link starts
    with."""
    if len(numbers) != len(lesson.steps):
        raise ValueError(
            f"numbers must hold one dict per step ({len(lesson.steps)}); got {len(numbers)}"
        )
    if sheet not in SHEETS:
        raise ValueError(f"sheet must be one of {SHEETS}; got {sheet!r}")
    root = base_url.rstrip("/")
    _absolute(root, "base_url")
    answers = sheet == ANSWERS
    title = f"{lesson.title} — {'answers' if answers else 'questions'}"
    home = page_url(root, "learn", [("learn_lesson", lesson.name)])
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='summary'>{inline(lesson.summary)}</p>",
        f"<p class='app'>In CAPE Lab: <a href='{html.escape(home)}'>{html.escape(home)}</a></p>",
    ]
    if not answers:
        parts.append(
            "<p>Predict before you look: tick one option per question, then open the lesson "
            "and check (the answers are on the lesson's answer sheet).</p>"
        )
    for i, (step, values) in enumerate(zip(lesson.steps, numbers, strict=True), 1):
        parts.append(f"<h2>Step {i} · {html.escape(step.title)}</h2>")
        if answers:
            parts.append(f"<p>{inline(step.text.format(**values))}</p>")
        if step.question is not None:
            q = step.question
            options = [o.format(**values) for o in q.options]
            prompt = inline(q.prompt.format(**values).removeprefix("Predict: "))
            if answers:
                parts.append(
                    f"<p class='q'><strong>Predict:</strong> {prompt} "
                    f"({html.escape(' · '.join(options))})</p>"
                )
                parts.append(
                    f"<p class='a'><strong>Answer: {html.escape(str(values['answer']))}."
                    f"</strong> {inline(q.reveal.format(**values))}</p>"
                )
            else:
                ticks = "".join(f"<li>{BOX} {html.escape(o)}</li>" for o in options)
                parts.append(f"<p class='q'><strong>Predict:</strong> {prompt}</p>")
                parts.append(f"<ul class='options'>{ticks}</ul>")
        url = html.escape(page_url(root, step.explore.page, step.explore.query(values)))
        label = html.escape(step.explore.label.format(**values))
        parts.append(f"<p class='link'>Explore: <a href='{url}'>{label}</a></p>")
    controls = ", ".join(dict.fromkeys(s.control.label for s in lesson.steps))  # each once
    parts.append(
        f"<footer>CAPE Lab · lesson {number} · {sheet} · each number computed by the app at "
        f"the step's default setting ({controls}).</footer>"
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>"
    )
