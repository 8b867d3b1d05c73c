"""``python -m paper`` in a checkout: the paper CLI (:mod:`dpcore.paper_cli`) with HTML figures.

The CLI itself is in the package (``python -m dpcore paper``, ``cape-paper``); the HTML figures
are drawn by the app's figure code (``figures/``, plotly), which a checkout has and the wheel
does not ship (issue #39: the wheel's only top-level package is ``dpcore``).
"""

from __future__ import annotations

import sys

import pandas as pd

import dpcore
from dpcore import paper_main as _main


def html_maker():
    """``(panel, df, calibration) -> HTML`` when plotly and the app's figure code import,
    else the one line that says what is missing (HTML is optional: CSV and claims are not)."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return None, "HTML figures skipped: they need plotly: pip install 'cape-lab[app]'"
    try:
        from figures.charts import figure_html
    except ImportError:
        return None, "HTML figures skipped: they need the app's ui/ (run from a checkout)"
    return (lambda *a: figure_html(figure_for(*a))), ""


def figure_for(panel: dpcore.Panel, df: pd.DataFrame, calibration: str):
    from figures.charts import sweep_figure
    from figures.theme import AXIS_LABELS

    y_title = "captured energy / optimum" if panel.task == "pca" else "component error q_comp"
    fig = sweep_figure(df, axis=panel.axis, metric=panel.metric, y_title=y_title)
    caption = dpcore.panel_caption(panel, calibration)
    fig.update_layout(
        title={"text": f"Figure {panel.key}: {panel.title}<br><sup>{caption}</sup>"},
        margin={"t": 90},
        xaxis_title=AXIS_LABELS[panel.axis],
    )
    return fig


def main(argv: list[str] | None = None) -> int:
    """The package's paper CLI with this checkout's HTML figures."""
    return _main(argv, html=html_maker)


if __name__ == "__main__":
    sys.exit(main())
