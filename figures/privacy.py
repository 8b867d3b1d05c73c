"""The Privacy explorer's tables as shown: who sees what, the chosen coalition, the worst
coalition of each size and capePCA under dropout, with each promise's verdict (✓ / ✗).

Pure (no Streamlit): each builder takes a frame of a cached core call (:mod:`ui.cached.sites`)
and returns the frame the page draws; a page memoises it (:func:`figures.memo.built`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def verdict(eps: float, promised: float, ok: bool) -> str:
    """'ε ≤ ε_s ✓' or 'ε > ε_s ✗': exactly whether the site's promise holds in this view."""
    if eps == 0:
        return "sees nothing ✓"
    return f"{eps:.3g} {'≤' if ok else '>'} {promised:.3g} {'✓' if ok else '✗'}"


def worst_table(curve: pd.DataFrame, ng: bool, sites: int) -> pd.DataFrame:
    """One row per coalition size: both views' worst ε, verdict, coalition and how it was found.

    A lower-bound row shows '≥ ε' and no ✓ (it may only show ✗: a coalition it found breaks
    the promise, which is true whatever else exists).
    """
    rows = []
    for _, part in curve.groupby("colluding", sort=True):
        n = int(part["colluding"].to_numpy()[0])  # the group's size, as a plain int
        row: dict[str, object] = {"colluding sites": n}
        for view in ("own release", "all releases"):
            r = part[part.view == view].iloc[0]
            meets = None if pd.isna(r.meets) else bool(r.meets)
            row[f"worst ε, {view}"] = f"{'' if r.exact else '≥ '}{r.epsilon:.4g}"
            row[f"promise, {view}"] = (
                f"≤ {r.promised_epsilon:.3g} ✓"
                if meets
                else f"> {r.promised_epsilon:.3g} ✗"
                if meets is False
                else "unknown (lower bound)"
            )
            who = "any" if ng else ", ".join(f"site {k}" for k in r.coalition) or "none"
            row[f"worst coalition, {view}"] = f"{who} → site {r.site}"
        tried = int(part.searched.max())
        if ng:
            row["search"] = "exact: only the G's are left, whoever colludes"
        elif part.exact.all():
            row["search"] = f"exact: all {tried:,} coalitions" if tried > 1 else "exact"
        else:
            row["search"] = f"lower bound: {tried:,} of {math.comb(sites, n):,} coalitions tried"
        rows.append(row)
    return pd.DataFrame(rows)


def coalition_shown(report: pd.DataFrame) -> pd.DataFrame:
    """The chosen coalition's table as shown: ε of each view, its verdict and σ/τ_s."""
    shown = pd.DataFrame(
        {
            "site": report.site,
            "promised ε_s": report.promised_epsilon,
            "ε own release": report.epsilon_release,
            "own": np.where(report.release_meets, "✓", "✗"),
            "ε all releases": report.epsilon_joint,
            "joint": np.where(report.joint_meets, "✓", "✗"),
            "σ own / τ_s": report.release_ratio,
            "σ all / τ_s": report.joint_ratio,
            "ε of τ_s alone": report.epsilon_at_required,
        }
    )
    if "epsilon_joint_exact" in report:
        shown["ε all releases, τ_s exact"] = report.epsilon_joint_exact
    return shown


def dropout_pca_table(pca: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """capePCA's captured energy per dropout case: mean and std over the runs."""
    stats = pca.groupby("case", sort=False).captured_energy_ratio.agg(["mean", "std"])
    return pd.DataFrame(
        {
            "case": ["no dropout", *[names[c] for c in ("none", "naive", "cape")]],
            "captured energy (of optimum)": stats["mean"].to_numpy(),
            "± std over runs": stats["std"].to_numpy(),
        }
    )


def views_table(parties: pd.DataFrame) -> pd.DataFrame:
    """One row per kind of party, one column per site: the verdict of its joint view."""
    parties = parties.assign(
        party_kind=np.where(
            parties["party"].str.startswith("site "), "each other site", parties["party"]
        )
    )
    show = parties.drop_duplicates(["party_kind", "site"])
    cells = show.assign(
        joint=[
            verdict(r["epsilon_joint"], r["promised_epsilon"], r["meets"])
            for r in show.to_dict("records")
        ],
    )
    receives = cells.drop_duplicates("party_kind").set_index("party_kind")["receives"]
    receives["each other site"] = "E_j and F_j only; no other site's release"
    pivot = cells.pivot(index="party_kind", columns="site", values="joint").rename(
        columns=lambda s: f"site {s}"
    )
    pivot.insert(0, "receives", receives)
    order = ["noise generator", "aggregator", "each other site", "anyone (final output)"]
    return pivot.loc[order].rename_axis("party")
