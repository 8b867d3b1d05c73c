"""The per-site settings (N_s, ε_s, δ_s, μ_s): a weighting rule, presets and URL encoding.

State (docs/state.md), per page prefix P:

* ``P S`` — the number of sites (slider),
* ``P weights`` — the weighting rule: ``equal`` (μ_s = 1/S), ``size`` (μ_s = N_s/N) or
  ``manual`` (as stated in the table),
* ``P sites`` — the table as text, ``N,ε,δ,μ`` per site joined by ``;`` (a text field, so it
  lives in the URL like every other control).

What is shown is ``with_rule(table, rule)``: a function of the URL alone. Every change goes
through a callback that writes the new table text, so the editor, the URL and Back/Forward
agree: adding sites gives them the weight the rule implies, "Weights ∝ N_s" keeps the N_s
edits, and editing a μ — in the table or in the text — switches the rule to manual.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import dpcore
from learning.settings import DEFAULT_SEED, EQUAL, MANUAL, SIZE
from ui.cached import call_core
from ui.controls import calibration_radio
from ui.guard import show_error
from ui.state import bound, link_params, reset

COLUMNS = ["N_s", "ε_s", "δ_s", "μ_s"]
NEW_SITE = {"N_s": 1000, "ε_s": 0.5, "δ_s": 1e-3}  # what a site added with the S slider holds
SITES_MIN, SITES_MAX, SITES_DEFAULT = 2, 20, 5
# The weighting rules, as shown and as written in the URL (a radio's URL value is its label).
RULES = (EQUAL, SIZE, MANUAL)


# A table as plain rows (N_s, ε_s, δ_s, μ_s): what the reruns work on. pandas costs ~1 ms a
# call here and a slider move made ~20 of them (issue #36 item 4); a frame is built only for the
# editor, once per table (:func:`_frame`).
Rows = tuple[tuple[float, float, float, float], ...]


def _rows_with_rule(rows: Rows, rule: str) -> Rows:
    """``rows`` with the μ the weighting rule implies (manual: as stated)."""
    if rule == EQUAL:
        mu = 1.0 / len(rows)
        return tuple((n, e, d, mu) for n, e, d, _ in rows)
    if rule == SIZE:
        sizes = np.array([r[0] for r in rows], dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):  # N = 0: NaN, refused later
            mu = (sizes / sizes.sum()).tolist()
        return tuple((n, e, d, w) for (n, e, d, _), w in zip(rows, mu, strict=True))
    return rows


def _resized_rows(rows: Rows, sites: int, rule: str) -> Rows:
    """Drop the last sites or add new ones (:data:`NEW_SITE`); new manual weights are 1/S."""
    new = (NEW_SITE["N_s"], NEW_SITE["ε_s"], NEW_SITE["δ_s"], 1.0 / sites)
    out = rows[:sites] + (new,) * max(sites - len(rows), 0)
    return _rows_with_rule(out, rule)


@functools.lru_cache(maxsize=64)  # recent texts; a hostile link's long text is not kept long
def _parse(text: str) -> Rows:
    """The rows of a table's text (:func:`encode`); raises ValueError on a malformed one."""
    try:
        rows = [[float(x) for x in part.split(",")] for part in text.split(";") if part.strip()]
    except ValueError:
        rows = []
    finite = all(math.isfinite(v) for r in rows for v in r)
    if not rows or any(len(r) != 4 for r in rows) or not finite:
        # the message never quotes the link's text (ui/guard.py)
        raise ValueError("the sites text must be rows of 4 numbers 'N,ε,δ,μ' separated by ';'")
    return tuple((float(round(n)), e, d, m) for n, e, d, m in rows)


def _text(rows: Rows) -> str:
    """Rows as 'N,eps,delta,mu' joined by ';' (for the URL)."""
    return ";".join(",".join(f"{float(v):.6g}" for v in row) for row in rows)


def _table_rows(table: pd.DataFrame) -> Rows:
    return tuple(tuple(float(v) for v in row) for row in table[COLUMNS].to_numpy())  # type: ignore[misc]


@functools.lru_cache(maxsize=64)
def _frame(rows: Rows) -> pd.DataFrame:
    """The editor's input frame (N_s integers); shared: the editor copies what it is given."""
    table = pd.DataFrame(rows, columns=COLUMNS, dtype=float)
    table["N_s"] = table["N_s"].round().astype(int)
    return table


def default_table(sites: int = SITES_DEFAULT) -> pd.DataFrame:
    """S equal sites with equal weights."""
    return _frame(_default_rows(sites)).copy()


def _default_rows(sites: int = SITES_DEFAULT) -> Rows:
    return _resized_rows((), sites, EQUAL)


def with_rule(table: pd.DataFrame, rule: str) -> pd.DataFrame:
    """The table with the μ column the weighting rule implies (manual: as stated)."""
    out = table.copy()
    if rule == EQUAL:
        out["μ_s"] = 1.0 / len(out)
    elif rule == SIZE:
        out["μ_s"] = out["N_s"] / out["N_s"].sum()
    return out


def resize(table: pd.DataFrame, sites: int, rule: str) -> pd.DataFrame:
    """Drop the last sites or add new ones (:data:`NEW_SITE`); new manual weights are 1/S."""
    return _frame(_resized_rows(_table_rows(table), sites, rule)).copy()


def encode(table: pd.DataFrame) -> str:
    """Rows as 'N,eps,delta,mu' joined by ';' (for the URL)."""
    return _text(_table_rows(table))


def decode(text: str) -> pd.DataFrame:
    """Inverse of :func:`encode`; raises ValueError on a malformed string."""
    return _frame(_parse(text)).copy()


DEFAULT_TEXT = _text(_default_rows())  # the text field's default


class Keys:
    """The session/URL keys of one page's site settings."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.sites = f"{prefix}S"
        self.rule = f"{prefix}weights"
        self.table = f"{prefix}sites"
        self.shown = f"{prefix}sites_shown"  # the text as last drawn (session only, no URL)

    def editor(self, text: str, rule: str) -> str:
        """A fresh editor whenever the table or rule changes (preset, S, Back/Forward)."""
        return f"{self.prefix}editor_{zlib.crc32(f'{text}|{rule}'.encode()):08x}"


def _current(keys: Keys) -> tuple[Rows, str]:
    state = st.session_state
    rule = state.get(keys.rule) or EQUAL
    try:
        rows = _parse(state.get(keys.table) or DEFAULT_TEXT)
    except ValueError:
        rows = _default_rows()
    return rows, rule


def _write(keys: Keys, rows: Rows, rule: str) -> None:
    st.session_state[keys.table] = _text(_rows_with_rule(rows, rule))


def _on_sites(keys: Keys) -> None:
    rows, rule = _current(keys)
    _write(keys, _resized_rows(rows, int(st.session_state[keys.sites]), rule), rule)


def _on_rule(keys: Keys) -> None:
    rows, rule = _current(keys)
    _write(keys, rows, rule)


def typed_weights(typed: pd.DataFrame, shown: pd.DataFrame | None, rule: str) -> bool:
    """Whether a table typed as text states weights of its own, as a μ edit in the editor does.

    A row's μ is typed when it differs from what ``rule`` implies for the typed table *and*
    from the μ that row held in ``shown``, the text before the edit (None if unknown). So
    under "∝ N_s" an N_s edit that leaves its old μ keeps the rule, a table whose weights
    the rule gives anyway (Back/Forward to another table) keeps it, and a changed μ switches
    it to manual. Compared to 1e-5: the text holds 6 significant digits (:func:`encode`).
    """
    if rule == MANUAL:
        return False
    mu = typed["μ_s"].to_numpy()
    implied = with_rule(typed, rule)["μ_s"].to_numpy()
    before = np.full(len(typed), np.nan)
    if shown is not None:
        rows = min(len(shown), len(typed))
        before[:rows] = shown["μ_s"].to_numpy()[:rows]
    kept = np.isclose(mu, before, rtol=1e-5, atol=1e-9)  # NaN (no predecessor): never kept
    implied_anyway = np.isclose(mu, implied, rtol=1e-5, atol=1e-9)
    return bool(np.any(~kept & ~implied_anyway))


def _on_text(keys: Keys) -> None:
    """A pasted table: S follows its length (clipped to the slider's range); a typed weight
    makes the rule manual (as a μ edit in the table does)."""
    try:
        table = decode(st.session_state[keys.table])
    except ValueError:
        return  # shown as an error by the page
    rule = st.session_state.get(keys.rule) or EQUAL
    try:
        shown = decode(st.session_state.get(keys.shown) or "")
    except ValueError:
        shown = None
    if typed_weights(table, shown, rule):
        rule = MANUAL
        st.session_state[keys.rule] = rule
    sites = int(np.clip(len(table), SITES_MIN, SITES_MAX))
    st.session_state[keys.sites] = sites
    if sites != len(table):
        _write(keys, _resized_rows(_table_rows(table), sites, rule), MANUAL)


def _on_edit(keys: Keys, editor_key: str) -> None:
    """Apply the editor's changes; a μ edit makes the rule manual, N_s edits keep ∝ N_s."""
    rows, rule = _current(keys)
    table = [list(row) for row in rows]
    changes = st.session_state[editor_key].get("edited_rows", {})
    for row, cells in changes.items():
        for column, value in cells.items():
            if value is None or column not in COLUMNS or int(row) >= len(table):
                continue
            table[int(row)][COLUMNS.index(column)] = int(value) if column == "N_s" else float(value)
            if column == "μ_s":
                rule = MANUAL
    st.session_state[keys.rule] = rule
    _write(keys, tuple((n, e, d, m) for n, e, d, m in table), rule)


# --- presets: each replaces the whole state of the page's site settings -------------------------


def _rows(*rows: tuple[float, float, float, float]) -> str:
    return encode(pd.DataFrame(rows, columns=COLUMNS))


PRESETS: dict[str, dict[str, Any]] = {
    "equal": {
        "label": "Equal hospitals",
        "icon": ":material/local_hospital:",
        "help": "Five hospitals with 1,000 patients each and the same privacy: CAPE gains 5×.",
        "S": 5,
        "weights": EQUAL,
        "sites": _rows(*[(1000, 0.5, 1e-3, 0.2)] * 5),
    },
    "big": {
        "label": "One big site, many small",
        "icon": ":material/scale:",
        "help": "One site holds most data. Weights ∝ N_s: CAPE still matches pooled noise.",
        "S": 6,
        "weights": SIZE,
        "sites": _rows((10000, 0.5, 1e-3, 0.8), *[(500, 0.5, 1e-3, 0.04)] * 5),
    },
    "mixed": {
        "label": "Different privacy needs",
        "icon": ":material/lock:",
        "help": "Sites ask for different (ε, δ): the design gives each its own noise levels.",
        "S": 4,
        "weights": EQUAL,
        "sites": _rows(
            (1000, 0.1, 1e-4, 0.25),
            (1000, 0.5, 1e-3, 0.25),
            (1000, 1.0, 1e-3, 0.25),
            (1000, 2.0, 1e-2, 0.25),
        ),
    },
}


def preset_values(prefix: str, name: str) -> dict[str, Any]:
    """The keys a preset sets (the rest of the page goes back to its defaults)."""
    keys, preset = Keys(prefix), PRESETS[name]
    return {keys.sites: preset["S"], keys.rule: preset["weights"], keys.table: preset["sites"]}


# What a link to CAPE averaging sets besides the preset's sites: every other key at its default.
AVERAGING_LINK_DEFAULTS = {
    "avg_calib": dpcore.DEFAULT_CALIBRATION.kind,  # the radio's default (ui.controls)
    "avg_draws": 20000,
    "avg_seed": DEFAULT_SEED,
    "avg_adv": 10.0,
}


def preset_link(name: str) -> dict[str, str]:
    """Query parameters of a link opening CAPE averaging in preset ``name`` (the Overview)."""
    return link_params(preset_values("avg_", name), AVERAGING_LINK_DEFAULTS)


def preset_buttons(prefix: str, container: DeltaGenerator | None = None) -> None:
    """One button per preset (each replaces every setting of the page): in a row across the
    page, or stacked in ``container`` (presenter mode's control column)."""
    # one wrapping row (one block, not a column block per button: every block and element
    # costs the server on each rerun)
    box = container or st.container(horizontal=True, gap="small")
    for name, preset in PRESETS.items():
        box.button(
            preset["label"],
            icon=preset["icon"],
            help=preset["help"] + " Replaces every setting on this page.",
            key=f"{prefix}preset_{name}",
            on_click=reset,
            args=(prefix, preset_values(prefix, name)),
            width="stretch",
        )


def site_settings(
    controls: DeltaGenerator,
    prefix: str,
    *,
    side: DeltaGenerator | None = None,
    table_box: DeltaGenerator | Callable[[], DeltaGenerator] | None = None,
) -> tuple[pd.DataFrame, str]:
    """S and the weighting rule in ``controls``, calibration in ``side`` (default: the same),
    then the editable table and its text form in ``table_box`` (default: the page; a callable
    returning a container is called after the controls are drawn).

    Returns
    -------
    table : pandas.DataFrame
        The table as shown (μ from the rule; not yet normalised).
    calibration : str
    """
    keys = Keys(prefix)
    side = side or controls
    sites = bound(
        controls.slider,
        "Sites S",
        keys.sites,
        min_value=SITES_MIN,
        max_value=SITES_MAX,
        value=SITES_DEFAULT,
        on_change=_on_sites,
        args=(keys,),
        help="Number of sites. New sites hold N_s = 1000, ε = 0.5, δ = 0.001 and get the "
        "weight the weighting rule implies.",
    )
    rule = bound(
        controls.radio,
        "Weights μ_s",
        keys.rule,
        options=list(RULES),
        horizontal=True,
        on_change=_on_rule,
        args=(keys,),
        help="Equal: μ_s = 1/S. ∝ N_s: μ_s = N_s/N, the pooled mean (CAPE then matches a "
        "central curator exactly); it follows your N_s edits. Manual: as typed in the table "
        "(editing a μ_s switches to manual; new sites get 1/S). Weights are normalised to "
        "sum to 1.",
    )
    calibration = calibration_radio(side, prefix=prefix)
    # a callable makes its container only now, under the controls above; none given: the
    # page's flow right here (nothing else is drawn in between: no block, one message less
    # per rerun, #36)
    given = table_box() if callable(table_box) else table_box
    box = st if given is None else given
    with box.expander("The sites as text (copy, paste, share)"):
        text = bound(
            st.text_input,
            "N_s, ε_s, δ_s, μ_s per site, sites separated by ';'",
            keys.table,
            value=DEFAULT_TEXT,
            on_change=_on_text,
            args=(keys,),
        )
    st.session_state[keys.shown] = text  # what the next typed table is compared with
    try:
        rows = _parse(text)
    except ValueError as err:
        with nullcontext() if given is None else given:
            show_error(err)
        rows = _default_rows(sites)
    if len(rows) != sites:  # a hand-made link: S decides, as if the slider had just moved
        rows = _resized_rows(rows, sites, rule)
    rows = _rows_with_rule(rows, rule)
    editor_key = keys.editor(_text(rows), rule)
    edited = box.data_editor(
        _frame(rows),
        key=editor_key,
        num_rows="fixed",
        hide_index=True,
        on_change=_on_edit,
        args=(keys, editor_key),
        column_config={
            "N_s": st.column_config.NumberColumn(
                "N_s", min_value=1, step=1, format="%d", help="Samples at the site: noise ∝ 1/N_s."
            ),
            "ε_s": st.column_config.NumberColumn(
                "ε_s",
                min_value=0.0001,
                max_value=100.0,
                format="%.4g",
                help="The site's privacy ε: noise std ∝ 1/ε_s.",
            ),
            "δ_s": st.column_config.NumberColumn(
                "δ_s", min_value=1e-12, max_value=0.5, format="%.2e", help="The site's privacy δ."
            ),
            "μ_s": st.column_config.NumberColumn(
                "μ_s",
                min_value=0.0,
                format="%.3f",
                help="Aggregator's weight (normalised to sum 1). Editing it makes the rule manual.",
            ),
        },
        width="stretch",
    )
    return edited, calibration


def site_args(table: pd.DataFrame, calibration: str) -> dpcore.Sites:
    """The sites of the table for the cached core wrappers: one frozen, hashable
    :class:`dpcore.Sites` (N_s, ε_s, δ_s, μ_s normalised, calibration)."""
    weights = call_core(dpcore.normalise_weights, table["μ_s"].to_numpy(float))
    if not np.isclose(table["μ_s"].sum(), 1.0):
        st.caption(f"Weights sum to {table['μ_s'].sum():.4g}; they are normalised to sum to 1.")
    return call_core(
        dpcore.Sites,
        tuple(int(n) for n in table["N_s"]),
        tuple(float(e) for e in table["ε_s"]),
        tuple(float(d) for d in table["δ_s"]),
        tuple(float(w) for w in weights),
        calibration,
    )


def site_params(sites: dpcore.Sites) -> dict[str, Any]:
    """The site settings as an export states them (:mod:`ui.export`)."""
    return {
        "N_s": sites.n_per_site,
        "ε_s": sites.epsilon,
        "δ_s": sites.delta,
        "μ_s (normalised)": tuple(round(w, 6) for w in sites.weights),
        "calibration": sites.calibration.kind,
    }
