"""dpcore.analysis.precision: how exactly the zero-sum noise and the masks cancel in float64 and
float32."""

from __future__ import annotations

from dpcore.analysis.precision import cancellation_table


def test_cancellation_table():
    table = cancellation_table(sites=(2, 30), tau=(1e-5, 1.0), coordinates=500, rng=0)
    assert len(table) == 8 and (table.mask_residual == 0).all()
    f64, f32 = table[table.dtype == "float64"], table[table.dtype == "float32"]
    # float64: the estimate is off by rounding of |a| ≈ 1 (ulp 2.2e-16) times a few sites
    assert (f64.estimate_error < 1e-13).all() and (f64.zero_sum_ratio < 1e-10).all()
    # float32: rounding of the releases (ulp(1) = 1.2e-7) does not cancel; it is a fixed
    # error, so relative to the remaining noise it grows as τ_agg shrinks
    assert (f32.estimate_error.to_numpy() > f64.estimate_error.to_numpy()).all()
    assert (f32.estimate_error < 1e-5).all()
    small = f32[f32.tau_site == 1e-5].estimate_ratio.min()
    large = f32[f32.tau_site == 1.0].estimate_ratio.max()
    assert small > 1000 * large
