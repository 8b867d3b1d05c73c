"""The trust-models table's rows for the iterative methods (issue #38), against the one-shot
table and the round views, and worded where a column does not apply."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import dpcore
from dpcore.analysis.round_views import rounds_party_views
from dpcore.analysis.trust_iterative import (
    ITERATIVE_SCHEMES,
    REGISTRY,
    IterativeRow,
    iterative_scheme,
    iterative_trust_table,
)
from figures.trust import iterative_display

SITES = dict(n_per_site=[300, 700, 1000, 1500], epsilon=[0.5, 1.0, 1.0, 2.0], delta=1e-3)
ROUNDS = 9


@pytest.fixture(scope="module")
def tables():
    return (
        iterative_trust_table(**SITES, rounds=ROUNDS),
        dpcore.trust_table(**SITES).set_index("scheme"),
    )


def test_one_row_per_method_and_no_blank_cell_on_the_page(tables):
    table, _ = tables
    assert list(table.scheme) == list(ITERATIVE_SCHEMES)
    shown = iterative_display(table, sites=4)
    assert len(shown) == len(ITERATIVE_SCHEMES)
    for column in shown.columns:  # words everywhere, none empty or "nan"/"None"
        for cell in shown[column]:
            assert isinstance(cell, str) and cell.strip() and "nan" not in cell
            assert "None" not in cell
    # where a number does not apply, the row says why
    fed = shown.set_index(table.scheme)
    assert "no pooled noisy aggregate" in fed.loc["fedpower", "what the aggregator sees"]
    assert "not secure aggregation" in fed.loc["npm_cape", "colluders tolerated"]


def test_cape_rows_agree_with_the_one_shot_table_scaled_by_the_rounds(tables):
    # CAPE's design is linear in τ: per round the aggregate std is sqrt(T) × the one-shot one,
    # and over T rounds the views are the one-shot views (tests/core/analysis/test_round_views.py).
    table, one_shot = tables
    rows = table.set_index("scheme")
    for it, shot in (("npm_cape", "cape"), ("npm_cape_joint", "cape_joint")):
        assert rows.loc[it, "std_ratio"] == pytest.approx(
            math.sqrt(ROUNDS) * one_shot.loc[shot, "std_ratio"], rel=1e-9
        )
        assert rows.loc[it, "aggregator_epsilon"] == pytest.approx(
            one_shot.loc[shot, "aggregator_epsilon"], rel=1e-9
        )
        assert rows.loc[it, "colluders_tolerated"] == one_shot.loc[shot, "colluders_tolerated"]
    # the paper's design breaks the promise over the rounds; the joint-view-safe one keeps it
    assert rows.loc["npm_cape", "aggregator_epsilon"] > rows.loc["npm_cape", "aggregator_promised"]
    assert rows.loc["npm_cape_joint", "aggregator_epsilon"] <= rows.loc[
        "npm_cape_joint", "aggregator_promised"
    ] * (1 + 1e-7)


def test_central_and_distributed_rows_by_direct_computation(tables):
    table, _ = tables
    rows = table.set_index("scheme")
    n = np.array(SITES["n_per_site"])
    mu = np.full(4, 0.25)
    tau = dpcore.site_noise_std(n, epsilon=SITES["epsilon"], delta=1e-3, calibration="analytic")
    central = float(np.max(mu * tau))
    assert rows.loc["npm", "noise_std"] == pytest.approx(math.sqrt(ROUNDS) * central, rel=1e-12)
    assert math.isinf(rows.loc["npm", "aggregator_epsilon"])  # the curator sees the data
    distributed = math.sqrt(ROUNDS) * float(np.sqrt(np.sum(mu**2 * tau**2)))
    assert rows.loc["npm_distributed", "noise_std"] == pytest.approx(distributed, rel=1e-12)
    # every site's own releases, T rounds at sqrt(T)·τ_s, spend exactly its ε_s (analytic)
    ratio = (
        rows.loc["npm_distributed", "aggregator_epsilon"]
        / rows.loc["npm_distributed", "aggregator_promised"]
    )
    assert ratio == pytest.approx(1.0, rel=1e-7)
    # the CAPE row's ε is the worst aggregator row of the round views
    views = rounds_party_views(
        tau, rounds=ROUNDS, sensitivity=1 / n, delta=1e-3, epsilon=SITES["epsilon"], weights=mu
    )
    agg = views[views.party == "aggregator"]
    worst = int(np.argmax(agg.epsilon_joint / agg.promised_epsilon))
    assert rows.loc["npm_cape", "aggregator_epsilon"] == agg.epsilon_joint.iloc[worst]
    # communication grows linearly with T for the power methods, not for federated PCA
    more = iterative_trust_table(**SITES, rounds=2 * ROUNDS).set_index("scheme")
    for scheme in ("npm_distributed", "npm_cape"):
        assert more.loc[scheme, "bits_total"] == 2 * rows.loc[scheme, "bits_total"]
    assert more.loc["fedpca", "bits_total"] == rows.loc["fedpca", "bits_total"]


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="rounds"):
        iterative_trust_table(**SITES, rounds=0)
    with pytest.raises(ValueError, match="calibration"):
        iterative_trust_table(**SITES, calibration="exact")
    with pytest.raises(ValueError, match="n_per_site"):
        iterative_trust_table(n_per_site=[100], epsilon=1.0, delta=1e-3)


def test_methods_are_records_looked_up_by_name_and_rows_typed(tables):
    # issue #51: the methods are records like the algorithms (each a registered PCA algorithm),
    # the table is IterativeRow's fields in order, each row's words its record's
    table, _ = tables
    assert ITERATIVE_SCHEMES == tuple(record.name for record in REGISTRY)
    assert set(ITERATIVE_SCHEMES) <= set(dpcore.algorithm_names("pca"))
    for record in REGISTRY:
        assert iterative_scheme(record.name) is record
    with pytest.raises(ValueError, match=r"scheme must be one of \['npm'.*got 'cape'"):
        iterative_scheme("cape")
    assert list(table.columns) == [f.name for f in dataclasses.fields(IterativeRow)]
    for record, row in zip(REGISTRY, table.itertuples(index=False), strict=True):
        words = (row.scheme, row.trusted, row.not_applicable, row.source)
        assert words == (record.name, record.trusted, record.not_applicable, record.source)
