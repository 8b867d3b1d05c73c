"""The privacy ledger and the privacy statement (dpcore.analysis.ledger)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore
from dpcore.analysis.accounting import ACCOUNTANTS, composed_epsilon
from dpcore.analysis.ledger import LedgerEntry, PrivacyLedger, privacy_statement


def _ledger(accountant="exact"):
    return PrivacyLedger(budget=[1.0, 3.0, 0.5], delta=[1e-5, 1e-6, 1e-3], accountant=accountant)


def test_add_returns_a_new_ledger_and_leaves_the_old_one():
    empty = _ledger()
    one = empty.add([4.0, 6.0, 8.0], label="means")
    assert empty.n_releases == 0 and one.n_releases == 1
    np.testing.assert_array_equal(empty.spent(), np.zeros(3))
    with pytest.raises(AttributeError):
        one.accountant = "basic"  # frozen


@pytest.mark.parametrize("accountant", ACCOUNTANTS)
def test_spent_composes_every_release_per_site_at_its_delta(accountant):
    rounds = [[4.0, 6.0, 8.0], [10.0, math.inf, 3.0], [4.0, 6.0, 8.0]]
    ledger = _ledger(accountant)
    for z in rounds:
        ledger = ledger.add(z)
    ledger = ledger.add([5.0, 5.0, 5.0], count=3)
    columns = np.array(rounds + [[5.0] * 3] * 3)
    for s in range(3):
        expected = composed_epsilon(
            columns[:, s], releases=1, delta=float(ledger.delta[s]), accountant=accountant
        )
        assert ledger.spent()[s] == expected
    assert ledger.n_releases == 6


def test_count_is_the_same_as_adding_one_by_one():
    once = _ledger().add(7.0, count=5)
    ledger = _ledger()
    for _ in range(5):
        ledger = ledger.add(7.0)
    np.testing.assert_allclose(once.spent(), ledger.spent(), rtol=1e-12)
    # a scalar z means the same noise multiplier at every site
    np.testing.assert_array_equal(once.entries[0].noise_multiplier, [7.0, 7.0, 7.0])


def test_would_exceed_is_spent_after_above_the_budget():
    ledger = _ledger()
    z = [9.0, 9.0, 9.0]
    while not ledger.would_exceed(z).all():
        after = ledger.spent_after(z)
        np.testing.assert_array_equal(ledger.would_exceed(z), after > ledger.budget)
        ledger = ledger.add(z)
        np.testing.assert_array_equal(ledger.spent(), after)
        assert ledger.n_releases < 200
    summary = ledger.summary()
    np.testing.assert_allclose(summary.remaining, summary.budget - summary.spent)
    np.testing.assert_array_equal(summary.exceeded, summary.spent > summary.budget)
    # the site with the smallest budget and the largest δ runs out first
    first = _ledger()
    while not first.would_exceed(z).any():
        first = first.add(z)
    assert first.would_exceed(z).tolist() == [False, False, True]


def test_statement_says_what_was_counted():
    ledger = _ledger("rdp").add([12.0, 12.0, 16.0], label="site means", count=3)
    text = privacy_statement(
        ledger,
        calibration="analytic",
        design="cape",
        view="coalition",
        n_colluding=1,
        statistic="each site's mean of values in [0, 1]",
    )
    for needed in (
        "Unit of privacy: one record",
        "add or remove one record at one site",
        "noise generator is trusted",
        "Balle & Wang",
        "Rényi DP",
        "Releases on the same data: 3",
        "1 colluding site",
        f"⌈S/3⌉ − 1 = {dpcore.collusion_bound(3)}",
        "3 × site means",
    ):
        assert needed in text, needed
    for s, eps in enumerate(ledger.spent(), start=1):
        assert f"site {s}: ε = {eps:.4g}" in text
    assert "EXCEEDED" not in text
    over = ledger.add([0.5, 0.5, 0.5])
    assert "EXCEEDED" in privacy_statement(over, calibration="classic", design="joint")


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: PrivacyLedger(budget=[1.0, -1.0], delta=[1e-5, 1e-5]), ValueError, "budget"),
        (lambda: PrivacyLedger(budget=[1.0, 1.0], delta=[1e-5]), ValueError, "delta"),
        (lambda: PrivacyLedger(budget=[1.0], delta=[1.0]), ValueError, "delta"),
        (
            lambda: PrivacyLedger(budget=[1.0], delta=[0.1], accountant="x"),
            ValueError,
            "accountant",
        ),
        (lambda: PrivacyLedger(budget="1", delta=[0.1]), TypeError, "budget"),
        (lambda: PrivacyLedger(budget=[1.0], delta=[0.1], entries=[1]), TypeError, "entries"),
        (lambda: _ledger().add([1.0, 2.0]), ValueError, "one per site"),
        (lambda: _ledger().add([1.0, 0.0, 1.0]), ValueError, "noise_multiplier"),
        (lambda: _ledger().add(1.0, count=0), ValueError, "count"),
        (lambda: LedgerEntry(label=3, noise_multiplier=[1.0]), TypeError, "label"),
        (
            lambda: privacy_statement(
                _ledger(), calibration="classic", design="cape", n_colluding=1
            ),
            ValueError,
            "n_colluding",
        ),
        (lambda: privacy_statement(_ledger(), calibration="x", design="cape"), ValueError, "calib"),
        (
            lambda: privacy_statement("ledger", calibration="classic", design="cape"),
            TypeError,
            "ledger",
        ),
    ],
)
def test_bad_inputs_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()
