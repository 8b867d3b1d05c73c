"""dpcore._validation: every check returns the cleaned value or names the parameter, the
allowed range and the value it got (the contract of every public entry point)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore._validation import (
    as_float_array,
    check_bool,
    check_broadcast,
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_per_site,
    check_positive_array,
    check_real,
    check_rng,
    check_weights,
    show,
)


def test_show_cuts_long_values_and_keeps_short_ones():
    assert show("abc") == "'abc'"
    assert show(np.float64(1.5)) == "1.5"  # not NumPy 2's np.float64(1.5)
    long = show(list(range(1000)), limit=20)
    assert len(long) == 20 and long.endswith("…")


@pytest.mark.parametrize(
    ("low", "high", "low_open", "high_open", "inside", "outside", "interval"),
    [
        (0.0, 1.0, True, True, [1e-300, 0.5, 1 - 1e-16], [0.0, 1.0], "(0, 1)"),
        (0.0, 1.0, False, False, [0.0, 1.0], [-1e-300, 1.0000001], "[0, 1]"),
        (1.0, math.inf, True, False, [1.0000001, math.inf], [1.0], "(1, inf]"),
    ],
)
def test_check_real_honours_open_and_closed_ends(
    low, high, low_open, high_open, inside, outside, interval
):
    kw = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    for x in inside:
        assert check_real(x, "tau", **kw) == x
    for x in [*outside, math.nan]:
        with pytest.raises(ValueError, match=rf"tau must be a float in \{interval[0]}"):
            check_real(x, "tau", **kw)
    with pytest.raises(ValueError, match=interval.replace("(", r"\(").replace(")", r"\)")):
        check_real(outside[0], "tau", **kw)


@pytest.mark.parametrize("junk", [True, "0.5", None, [0.5], np.array([0.5]), 1j])
def test_check_real_refuses_non_reals_by_name(junk):
    with pytest.raises(TypeError, match=r"^price must be a real number; got "):
        check_real(junk, "price")


def test_epsilon_and_delta_ranges():
    assert check_epsilon(math.inf) == math.inf  # ε = ∞: no privacy, no noise
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match=r"eps_s must be a float in \(0, inf\]; got"):
            check_epsilon(bad, "eps_s")
    for bad in (0.0, 1.0, 2.0):
        with pytest.raises(ValueError, match=r"delta must be a float in \(0, 1\); got"):
            check_delta(bad)


def test_check_int_accepts_numpy_integers_and_refuses_bools_and_floats():
    assert check_int(np.int64(5), "sites", low=2) == 5
    assert type(check_int(np.int32(5), "sites")) is int
    with pytest.raises(ValueError, match=r"sites must be an integer in \[2, 10\]; got 11"):
        check_int(11, "sites", low=2, high=10)
    with pytest.raises(ValueError, match=r"\[1, inf\]; got 0"):
        check_int(0, "k")
    for junk in (True, 3.0, "3"):
        with pytest.raises(TypeError, match=r"^k must be an integer"):
            check_int(junk, "k")


def test_check_bool_and_choice():
    assert check_bool(np.bool_(True), "flag") is True
    with pytest.raises(TypeError, match=r"^flag must be True or False; got int 1"):
        check_bool(1, "flag")
    assert check_choice("a", "method", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"^method must be one of \['a', 'b'\]; got 'c'"):
        check_choice("c", "method", ("a", "b"))
    with pytest.raises(TypeError, match=r"^method must be one of"):
        check_choice(None, "method", ("a", "b"))


def test_as_float_array_names_the_parameter_for_anything_without_numbers():
    np.testing.assert_array_equal(as_float_array((1, 2.5), "x"), [1.0, 2.5])
    for junk in ("12", b"1", None, ["a"], [[1], [1, 2]], {"a": 1}):
        with pytest.raises(TypeError, match=r"^x must be a number or an array of real numbers"):
            as_float_array(junk, "x")


def test_check_broadcast_names_every_array_when_shapes_clash():
    a, b = check_broadcast(epsilon=np.ones(3), delta=np.float64(0.1))
    assert a.shape == b.shape == (3,)
    with pytest.raises(ValueError, match=r"^epsilon and delta must be .* epsilon \(3,\), delta"):
        check_broadcast(epsilon=np.ones(3), delta=np.ones(2))


def test_check_positive_array_reports_the_first_bad_entry():
    np.testing.assert_array_equal(check_positive_array([1, 2], "tau"), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"every entry of tau must be in \(0, inf\); got -2.0"):
        check_positive_array([1.0, -2.0, -3.0], "tau")
    with pytest.raises(ValueError, match=r"tau must be a non-empty 1-D sequence; got shape \(0,\)"):
        check_positive_array([], "tau")
    with pytest.raises(ValueError, match="non-empty 1-D"):
        check_positive_array([[1.0]], "tau")
    both = check_positive_array([0.0, math.inf], "tau", allow_zero=True, allow_inf=True)
    assert both[1] == math.inf
    with pytest.raises(ValueError, match=r"\[0, inf\); got nan"):
        check_positive_array([0.0, math.nan], "tau", allow_zero=True)


def test_check_weights_defaults_to_equal_and_demands_one_per_site_summing_to_one():
    np.testing.assert_array_equal(check_weights(None, 4), [0.25] * 4)
    w = check_weights([0.2, 0.8 + 5e-10], 2)
    assert w.sum() == pytest.approx(1.0, abs=1e-15)  # renormalised within the tolerance
    with pytest.raises(ValueError, match=r"mu must have one entry per site \(3\); got 2"):
        check_weights([0.5, 0.5], 3, "mu")
    with pytest.raises(ValueError, match=r"weights must sum to 1 \(within 1e-9\); got sum 1.1"):
        check_weights([0.5, 0.6], 2)


def test_check_rng_follows_spec_7():
    g = np.random.default_rng(0)
    assert check_rng(g) is g  # the caller's stream advances
    assert check_rng(7).integers(1 << 30) == np.random.default_rng(7).integers(1 << 30)
    assert isinstance(check_rng(None), np.random.Generator)
    with pytest.raises(ValueError, match="rng must be a non-negative integer seed; got -1"):
        check_rng(-1)
    for junk in (True, 1.5, "3", np.random.RandomState(0)):
        with pytest.raises(TypeError, match=r"^rng must be None, a numpy.random.Generator"):
            check_rng(junk)


# --- check_per_site: the one "a number or one per site" check (issue #35) ---------------------


def test_per_site_broadcasts_one_number_and_keeps_one_per_site():
    assert check_per_site(0.5, 3, "epsilon").tolist() == [0.5, 0.5, 0.5]
    got = check_per_site([1, 2, 3], 3, "epsilon")
    assert got.dtype == np.float64 and got.tolist() == [1.0, 2.0, 3.0]
    got[0] = 9.0  # a new array: the caller's list is not aliased
    assert check_per_site(np.inf, 2, "epsilon").tolist() == [np.inf, np.inf]  # (0, ∞] at ∞
    assert check_per_site([0.5, 2.0], None, "budget").tolist() == [0.5, 2.0]  # S from the list


@pytest.mark.parametrize(
    ("value", "n_sites", "kwargs", "error", "message"),
    [
        (None, 3, {}, TypeError, "epsilon must be a number or one number per site; got NoneType"),
        ("1", 3, {}, TypeError, "got str"),
        (True, 3, {}, TypeError, "got bool"),
        ([1.0, 2.0], 3, {}, ValueError, r"one number per site \(3\); got \[1.0, 2.0\]"),
        ([1.0, 2.0], 3, {"sites_of": "budget"}, ValueError, r"per site of budget \(3\)"),
        ([[1.0]], 1, {}, ValueError, "one number per site"),
        (0.5, None, {}, ValueError, "must be a 1-D sequence of one number per site"),
        ([], None, {}, ValueError, "must be a 1-D sequence"),
        ([1.0, 0.0], 2, {}, ValueError, r"every entry of epsilon must be in \(0, inf\]; got 0.0"),
        ([1.0, np.nan], 2, {}, ValueError, r"in \(0, inf\]; got nan"),
        (1.0, 2, {"high": 1.0}, ValueError, r"in \(0, 1\); got 1.0"),
        (np.inf, 2, {"high": 1e6}, ValueError, r"in \(0, 1e\+06\); got inf"),
        (1e-9, 2, {"high": 1.0, "low": 1e-6}, ValueError, r"in \[1e-06, 1\); got 1e-09"),
    ],
)
def test_per_site_refuses_by_name_range_and_value(value, n_sites, kwargs, error, message):
    with pytest.raises(error, match=message):
        check_per_site(value, n_sites, "epsilon", **kwargs)


def test_per_site_accepts_the_closed_low_end():
    assert check_per_site(1e-6, 1, "delta", high=1.0, low=1e-6).tolist() == [1e-6]
