"""Every number on screen unchanged across the floors refactor (issue #35), bit for bit.

Each case computes what a page shows, through the same cached wrappers the page calls
(ui/cached/, ui/specs.py, ui/learn_core.py) or the same core call the page makes, on a small
fixed setting, and compares it with ``tests/numbers_reference.json``, written before dpcore's
modules moved into floors: every float exactly (``repr`` round-trips a float, so the JSON text
of two results is equal only if every bit is), every string and integer exactly. A frame is
written as :func:`frames.frame_record` (tests/frames.py) writes it.

Exact and not 1e-9 (as tests/core/experiments/test_frame_hashes.py allows): a move of code
changes no arithmetic, and this machine's BLAS and NumPy loops (one thread, the AVX2 kernels
tests/conftest.py chooses, also on an AVX-512 CPU) are the ones the reference was written
with. On another CPU kernel or BLAS build (an ARM machine, say) the cases may move by
rounding; regenerate the reference there before a refactor::

    PYTHONPATH=. .venv/bin/python tests/test_numbers_unchanged.py --write [CASE ...]

A change meant to move numbers (a fixed bug) says so in its commit and regenerates.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from frames import frame_record
from threadpoolctl import threadpool_limits

import dpcore

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.ClassicGaussianWarning", "ignore:No runtime found"
)

REFERENCE = Path(__file__).with_name("numbers_reference.json")

# one sites table, as the sites-table pages pass it: one dpcore.Sites (N_s, ε_s, δ_s, weights,
# calibration); before #35's Sites record these were the 5-tuples (N, EPS, DELTA, W, "analytic")
N, EPS, DELTA, W = (100, 200, 300), (0.5, 1.0, 2.0), (0.01, 0.01, 0.001), (1 / 6, 1 / 3, 1 / 2)
SITES = dpcore.Sites(N, EPS, DELTA, W, "analytic")
CLASSIC = SITES.replace(calibration="classic")


def record(value: object) -> object:
    """A result as JSON-able data: frames as their record, dataclasses field by field,
    arrays as lists, numpy scalars as Python ones; floats kept as they are (``repr``)."""
    if isinstance(value, pd.DataFrame):
        return frame_record(value)
    if isinstance(value, pd.Series):
        return record(value.to_frame())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: record(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): record(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [record(v) for v in value]
    if isinstance(value, np.ndarray):
        return record(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _pca():
    from learning.settings import PcaControls
    from ui import cached
    from ui.specs import pca_spec

    controls = PcaControls(
        dim=10,
        k=2,
        sites=3,
        n_per_site=80,
        epsilon=0.5,
        delta=0.01,
        runs=2,
        seed=7,
        algorithms=("nonprivate", "cape", "conv", "local", "dpdis"),
        calibration="analytic",
        neighbouring="add-remove",
        pool=2000,
    )
    return cached.pca_frame(pca_spec(controls), controls.seed)


def _tensor():
    from dataclasses import replace

    from learning.settings import OTD_SETTINGS
    from ui import cached
    from ui.specs import otd_example_spec, otd_spec

    chosen = replace(OTD_SETTINGS, dim=4, k=2, sites=3, n_per_site=300, runs=1, seed=11)
    return {
        "frame": cached.otd_frame(otd_spec(chosen), chosen.seed),
        "example": cached.otd_example(otd_example_spec(chosen), chosen.seed),
    }


def _averaging():
    from ui import cached

    return {
        "design": cached.averaging_design(SITES),
        "monte_carlo": cached.averaging_monte_carlo(SITES, draws=40, seed=3),
        "gain_curve": cached.gain_curve(total=600, sites=3, points=7),
        "equal_sites": cached.equal_sites_noise(sites=4, n_per_site=250, epsilon=0.8, delta=0.01),
    }


def _privacy():
    import dpcore
    from ui import cached

    out = {}
    for args in (SITES, CLASSIC):
        for design in cached.DESIGNS:
            key = f"{args.calibration}-{design}"
            out[f"parties-{key}"] = cached.party_table(args, design=design)
            out[f"coalition-{key}"] = cached.coalition_table(args, (1,), True, design=design)
            out[f"curve-{key}"] = cached.collusion_curve_table(args, False, design=design)
    out["dropout"] = cached.dropout_report(SITES, (1,))
    out["calibration"] = cached.calibration_curve(0.01, (0.1, 0.5, 1.0, 5.0))
    out["collusion_bound"] = dpcore.collusion_bound(3)
    return out


def _dropout_pca():
    from ui import cached

    return cached.dropout_pca_frame(SITES, (1,), 5)


def _trust():
    from ui import cached

    return {
        "table": cached.trust_models_table(SITES, dim=6, bits=16, scale=None, sa_cal="analytic"),
        "ddg": cached.trust_models_table(CLASSIC, dim=6, bits=12, scale=0.01, sa_cal="ddg"),
        "pca": cached.trust_models_pca(
            SITES, dim=6, bits=16, scale=None, sa_cal="analytic", runs=1, seed=4
        ),
    }


def _composition():
    import dpcore
    from ui import cached

    out = {}
    for design in cached.DESIGNS:
        for view in ("aggregator's joint view", "own release"):
            out[f"z-{design}-{view}"] = cached.release_multipliers(SITES, design=design, view=view)
    z_all = out["z-cape-aggregator's joint view"]
    # what the wrappers computed before #35's one-step path (z handed back by the page); the
    # one-step wrappers are pinned to this path in tests/core/analysis/test_site_releases.py
    out["curve"] = dpcore.epsilon_curve(z_all[0], max_releases=50, delta=0.001)
    out["growth"] = dpcore.composition_growth(z_all[0], releases=20, delta=0.001)
    out["top"] = dpcore.composed_epsilon(z_all[0], releases=3, delta=0.001)
    out["profiles"] = cached.release_profiles(
        SITES, site=0, colluding=(2,), releases=3, grid=(0.25, 0.5, 1.0, 2.0, 4.0)
    )
    for accountant in dpcore.ACCOUNTANTS:
        # budget 4 × ε_s = (2, 4, 8) at δ_s, 4 releases of z_all, as the page's ledger
        ledger, summary, after, _ = cached.release_ledger(
            SITES,
            design="cape",
            view="aggregator's joint view",
            accountant=accountant,
            budget_multiple=4.0,
            made=4,
        )
        out[f"summary-{accountant}"] = summary
        out[f"after-{accountant}"] = after
        out[f"statement-{accountant}"] = dpcore.privacy_statement(
            ledger,
            calibration="analytic",
            design="cape",
            view="aggregator's joint view",
            statistic="each site's mean of values in [0, 1] (sensitivity 1/N_s)",
        )
    return out


def _audit():
    from ui import cached

    rows, curves = cached.audit_tradeoff(SITES, site=1, colluding=(2,), trials=20_000, seed=9)
    return {
        "table": cached.audit_table(SITES, site=1, colluding=(2,), trials=20_000, seed=9),
        "tradeoff": rows,
        "curves": curves.iloc[::25],  # every 25th point of the chart's curves: smaller JSON
        "statistics": cached.audit_statistics(SITES, site=1, design="joint", trials=200, seed=9),
    }


def _protocol():
    from ui.learn_core import protocol_run

    return {
        kind: protocol_run(sites=4, kind=kind, epsilon=1.0, seed=2) for kind in ("scalar", "2x2")
    }


CASES = {
    "pca": _pca,
    "tensor": _tensor,
    "averaging": _averaging,
    "privacy": _privacy,
    "dropout-pca": _dropout_pca,
    "trust": _trust,
    "composition": _composition,
    "audit": _audit,
    "protocol": _protocol,
}


def run_case(case: str) -> str:
    """The case's numbers as canonical JSON text (floats by ``repr``: exact)."""
    with threadpool_limits(limits=1, user_api="blas"):
        value = CASES[case]()
    return json.dumps(record(value), sort_keys=True)


def _reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def _differences(have: object, want: object, where: str = "") -> list[str]:
    """Where two records differ, by path (NaN equals NaN: the JSON text decides)."""
    if isinstance(want, dict) and isinstance(have, dict):
        if set(have) != set(want):
            return [f"{where}: keys {sorted(set(have) ^ set(want))}"]
        return [d for k in want for d in _differences(have[k], want[k], f"{where}/{k}")]
    if isinstance(want, list) and isinstance(have, list) and len(have) == len(want):
        return [
            d
            for i, (h, w) in enumerate(zip(have, want, strict=True))
            for d in _differences(h, w, f"{where}[{i}]")
        ]
    if json.dumps(have) != json.dumps(want):
        return [f"{where}: {have!r} != {want!r}"]
    return []


# the audit's case runs its attack (~5 s): in the full suite only
@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.slow) if c == "audit" else c for c in sorted(CASES)]
)
def test_every_number_on_screen_is_unchanged(case):
    have, want = json.loads(run_case(case)), _reference()[case]
    assert json.dumps(have, sort_keys=True) == json.dumps(want, sort_keys=True), (
        case,
        _differences(have, want)[:5],
    )


def test_a_one_ulp_change_is_caught():
    # the comparison's power: the reference with one float moved by one unit in the last
    # place differs from the reference
    want = _reference()["composition"]
    moved = json.loads(json.dumps(want))
    top = moved["top"]
    moved["top"] = math.nextafter(top, math.inf)
    assert _differences(moved, want) == [f"/top: {moved['top']!r} != {top!r}"]


if __name__ == "__main__":
    if sys.argv[1:2] != ["--write"]:
        sys.exit(f"usage: PYTHONPATH=. python {sys.argv[0]} --write [CASE ...]")
    sys.path.insert(0, str(Path(__file__).parent))
    ref = _reference() if REFERENCE.exists() else {}
    for name in sys.argv[2:] or sorted(CASES):
        ref[name] = json.loads(run_case(name))
        print(f"wrote {name}")
    REFERENCE.write_text(json.dumps(ref, indent=0, sort_keys=True) + "\n", encoding="utf-8")
