"""A lesson's one-page handout: its steps' text, question, answer and link, printable.

Built from the lesson's records filled with the numbers its scenes computed at each step's
default setting (the same numbers the lesson shows), as one self-contained HTML page whose
print style fits an A4 or Letter page.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Sequence

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
@media print { @page { size: auto; margin: 11mm; }
  body { font-size: 9.5pt; margin: 0; max-width: none; } a { color: #111; } }
"""


def inline(text: str) -> str:
    """The lessons' Markdown (``**bold**``, ``*italic*``, paragraphs) as HTML, escaped."""
    out = _ITALIC.sub(r"<em>\1</em>", _BOLD.sub(r"<strong>\1</strong>", html.escape(text)))
    return "</p><p>".join(out.split("\n\n"))


def handout_html(
    lesson: Lesson, numbers: Sequence[dict], *, number: int, base_url: str = ""
) -> str:
    """The handout of ``lesson`` (lesson ``number`` of the course); ``numbers[i]`` are step
    i's scene numbers at its control's default; ``base_url`` prefixes the explore links."""
    if len(numbers) != len(lesson.steps):
        raise ValueError(
            f"numbers must hold one dict per step ({len(lesson.steps)}); got {len(numbers)}"
        )
    parts = [
        f"<h1>{html.escape(lesson.title)}</h1>",
        f"<p class='summary'>{inline(lesson.summary)}</p>",
    ]
    for i, (step, values) in enumerate(zip(lesson.steps, numbers, strict=True), 1):
        parts.append(f"<h2>Step {i} · {html.escape(step.title)}</h2>")
        parts.append(f"<p>{inline(step.text.format(**values))}</p>")
        if step.question is not None:
            q = step.question
            options = " · ".join(o.format(**values) for o in q.options)
            prompt = inline(q.prompt.format(**values).removeprefix("Predict: "))
            parts.append(
                f"<p class='q'><strong>Predict:</strong> {prompt} ({html.escape(options)})</p>"
            )
            parts.append(
                f"<p class='a'><strong>Answer: {html.escape(str(values['answer']))}.</strong> "
                f"{inline(q.reveal.format(**values))}</p>"
            )
        page = step.explore.page.removeprefix("app_pages/").removesuffix(".py")
        query = urllib.parse.urlencode(step.explore.query(values))
        url = html.escape(f"{base_url}{page}?{query}")
        label = html.escape(step.explore.label.format(**values))
        parts.append(f"<p class='link'>Explore: <a href='{url}'>{label}</a></p>")
    parts.append(
        f"<footer>CAPE Lab · lesson {number} · each number computed by the app at the step's "
        f"default setting ({', '.join(s.control.label for s in lesson.steps)}).</footer>"
    )
    title = html.escape(lesson.title)
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>"
    )
