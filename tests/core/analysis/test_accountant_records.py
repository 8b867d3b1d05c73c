"""Accountants as records (issue #35): one record (name, label, citation, function) is all a
new accountant needs; the ledger, its privacy statement, the ε curves and the chart's legend
and text read it."""

from __future__ import annotations

import math

import pytest

import dpcore
from dpcore.analysis.accounting import (
    ACCOUNTANTS,
    Accountant,
    Composition,
    accountant_names,
    accountants,
    get_accountant,
    register_accountant,
    unregister_accountant,
)
from figures.composition import accountant_styles, accountants_figure, accountants_text

# A test-only accountant: twice the zCDP bound, ε = 2(ρ + 2 sqrt(ρ log(1/δ))), a valid (if
# wasteful) upper bound, so that its numbers are known in closed form.
DOUBLE_ZCDP = Accountant(
    name="double-zcdp",
    label="twice zCDP (test only)",
    citation="twice the zCDP bound (a test's accountant, not a method)",
    epsilon=lambda c: 2.0 * (c.rho + 2.0 * math.sqrt(c.rho * math.log(1.0 / c.delta))),
)


@pytest.fixture
def sixth():
    register_accountant(DOUBLE_ZCDP)
    try:
        yield DOUBLE_ZCDP
    finally:
        unregister_accountant(DOUBLE_ZCDP.name)


def test_the_built_in_accountants_are_the_records_in_order():
    assert accountant_names() == ACCOUNTANTS == dpcore.ACCOUNTANTS
    assert all(isinstance(a, Accountant) for a in accountants())
    assert len({a.label for a in accountants()}) == len(ACCOUNTANTS)  # one label each


def test_a_registered_accountant_is_one_record_everywhere(sixth):
    z, delta, t = 3.0, 1e-5, 4
    mu = math.sqrt(t) / z
    rho = mu**2 / 2
    want = 2.0 * (rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)))
    zcdp = dpcore.composed_epsilon(z, releases=t, delta=delta, accountant="zcdp")
    got = dpcore.composed_epsilon(z, releases=t, delta=delta, accountant=sixth.name)
    assert got == pytest.approx(want, rel=1e-12) and got == pytest.approx(2 * zcdp, rel=1e-12)
    assert accountant_names()[-1] == sixth.name  # after the built-in ones

    # the ledger spends with it, and its statement cites it
    ledger = dpcore.PrivacyLedger(budget=[50.0, 50.0], delta=[delta, delta], accountant=sixth.name)
    ledger = ledger.add([z, z], label="release", count=t)
    assert ledger.spent().tolist() == [got, got]
    statement = dpcore.privacy_statement(ledger, calibration="analytic", design="cape")
    assert f"Accountant: {sixth.citation}." in statement

    # the curves have it, the legend names it with a style of its own, the text reads it
    curve = dpcore.epsilon_curve(z, max_releases=5, delta=delta)
    assert set(curve.accountant) == set(ACCOUNTANTS) | {sixth.name}
    fig = accountants_figure(curve)
    assert [trace.name for trace in fig.data][-1] == sixth.label
    styles = accountant_styles()
    assert len({(c, d) for c, d, _ in styles.values()}) == len(styles)
    growth = dpcore.composition_growth(z, releases=5, delta=delta)
    text = accountants_text(curve, growth, site=1, noise_multiplier=z, delta=delta)
    assert sixth.label in text


def test_without_registration_the_name_is_refused():
    with pytest.raises(ValueError, match=r"accountant must be one of \['exact', 'rdp'"):
        dpcore.composed_epsilon(3.0, releases=2, delta=1e-5, accountant="double-zcdp")
    with pytest.raises(ValueError, match="accountant must be one of"):
        dpcore.PrivacyLedger(budget=[1.0], delta=[1e-5], accountant="double-zcdp")


def test_registration_refuses_a_taken_name_and_junk(sixth):
    with pytest.raises(ValueError, match="already registered"):
        register_accountant(sixth)
    with pytest.raises(TypeError, match="must be an Accountant"):
        register_accountant("zcdp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="label must be a non-empty str"):
        Accountant(name="x", label=" ", citation="c", epsilon=lambda c: 0.0)
    with pytest.raises(ValueError, match="not built-in"):
        unregister_accountant("exact")
    assert get_accountant("exact").name == "exact"


def test_a_composition_counts_only_releases_that_reveal_something():
    import numpy as np

    c = Composition(mu=1.0, noise_multipliers=np.array([1.0, np.inf]), releases=3, delta=0.01)
    assert c.count == 3 and c.rho == 0.5
