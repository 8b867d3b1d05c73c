"""dpcore.mechanisms.promise: the factor e^ε that (ε, δ)-DP allows between the worlds with and
without one person (Dwork & Roth 2014, Definition 2.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.mechanisms.promise import likelihood_factor


def test_the_factor_is_e_to_the_epsilon_and_the_class_pair_reads_as_the_lessons_say():
    for eps in (1e-6, 0.1, 0.5, 1.0, 5.0, 10.0):
        assert likelihood_factor(epsilon=eps) == pytest.approx(math.exp(eps), rel=1e-15)
    assert f"{likelihood_factor(epsilon=0.5):.3g}" == "1.65"
    assert f"{likelihood_factor(epsilon=5.0):.3g}" == "148"


def test_it_is_the_largest_density_ratio_of_the_laplace_mechanism():
    # Laplace with scale Δ/ε is ε-DP (Dwork & Roth, Thm 3.6): the density ratio of two
    # neighbouring releases (means Δ apart) is exp(ε(|x − Δ| − |x|)/Δ), at most e^ε, reached
    # for every x ≤ 0. An independent check of what the factor means.
    eps, sens = 0.5, 0.01
    x = np.linspace(-0.2, 0.2, 40_001)
    log_ratio = (np.abs(x - sens) - np.abs(x)) * eps / sens
    assert np.max(log_ratio) == pytest.approx(math.log(likelihood_factor(epsilon=eps)), rel=1e-12)
    assert np.all(log_ratio <= math.log(likelihood_factor(epsilon=eps)) + 1e-12)


def test_no_promise_is_infinite_and_bad_values_name_the_parameter():
    assert likelihood_factor(epsilon=math.inf) == math.inf
    assert likelihood_factor(epsilon=1000.0) == math.inf  # beyond floating point: no promise either
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            likelihood_factor(epsilon=bad)
    with pytest.raises(TypeError, match="epsilon"):
        likelihood_factor(epsilon="0.5")  # type: ignore[arg-type]
