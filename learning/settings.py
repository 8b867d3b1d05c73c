"""Settings the pages and the lessons share, as plain values: the seed every page opens with,
the names of the site-weight rules, and the lessons' fixed settings (grids, sizes, the PCA and
tensor pages' controls, as the records that lesson 5 runs). Pure data: no Streamlit, no
computation."""

from __future__ import annotations

from dataclasses import dataclass

# The seed a page opens with: a typical one of seeds 0–49, every number of its default views
# within one robust σ of the median over seeds (worst |z| 0.85; benchmarks/default_seed.py,
# docs/deviations.md, tests/benchmarks/test_default_seed.py).
DEFAULT_SEED = 30

# The site-weight rules of the sites table (ui/sites_table.py), as their URL values.
EQUAL, SIZE, MANUAL = "equal", "∝ N_s", "manual"

# The sweep axes' names on charts and controls (figures/theme.py re-exports them).
AXIS_LABELS = {
    "epsilon": "privacy ε",
    "delta": "privacy δ",
    "n_per_site": "samples per site N_s",
    "sites": "number of sites S",
}
LOG_AXES = {"epsilon", "delta", "n_per_site"}

# --- lessons 1–4 -------------------------------------------------------------------------------
N_MEAN = 100  # samples behind a lesson's mean of values in [0, 1]: Δ = 1/N
EPS_GRID = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
TOTAL, UNEQUAL_SITES = 10_000, 5  # lesson 3: N samples over S sites
VIEW_SITES = 5  # lesson 4: S equal sites of N_s = 1000 at ε = 0.5
DELTA_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1)
SITE_GRID, SPLIT_TOTAL = (2, 5, 10, 20, 50), 10_000  # the same N samples over S sites

LESSON_DELTA = 0.01  # δ of every lesson step that does not vary it (as on the Overview page)
# --- the PCA and tensor pages' controls -------------------------------------------------------
# What a page's widgets give, as one frozen record: the page turns it into the core's spec with
# ui/specs.py (pca_spec, otd_spec), and lesson 5 runs the same record through the same helper.


@dataclass(frozen=True)
class PcaControls:
    """The PCA page's settings (app_pages/pca.py), as its widgets give them.

    ``pool`` is the number of samples the data set holds (S·N_s may not exceed it; ``None``:
    the core's synthetic pool) and ``dim`` is the data set's own D for real data; ``unequal``:
    one site holds half the samples. ``seed`` seeds the sweep's Generator (not part of the
    spec: the core takes ``rng`` separately).
    """

    dim: int
    k: int
    sites: int
    n_per_site: int
    epsilon: float
    delta: float
    runs: int
    seed: int
    algorithms: tuple[str, ...]
    calibration: str
    neighbouring: str
    axis: str = "epsilon"
    unequal: bool = False
    pool: int | None = None


@dataclass(frozen=True)
class OtdControls:
    """The tensor page's settings (app_pages/tensor.py), as its widgets give them.

    ``power`` names the tensor power method's variant ("robust" or "authors",
    ui/specs.py's POWER_METHODS).
    """

    model: str
    dim: int
    k: int
    sites: int
    n_per_site: int
    epsilon: float
    delta: float
    runs: int
    seed: int
    algorithms: tuple[str, ...]
    calibration: str
    sensitivity: str
    scaling: str
    power: str = "robust"
    axis: str = "epsilon"


# --- lesson 5: the PCA and tensor pages' own computations --------------------------------------
# A lesson step quotes numbers that its Explore link must show again, so it runs exactly the
# sweep the linked page runs for the link's settings: the same controls record through the same
# helper (ui/specs.py) and the same cached wrapper, so the same spec, the same seed, the same
# cache entry. The sweep's random streams are spawned per grid value, so the ε grid must be the
# page's too (the page's grid with the current ε added: the helper adds it).

LESSON_SEED = DEFAULT_SEED  # the pages' own (a typical data pool); the links carry it
PCA_SITES, PCA_N = 10, 1000  # lesson 5, step 1: S sites of N_s samples

# The PCA page's settings of lesson 5 (the links carry each one); a step replaces S, N_s, ε.
PCA_SETTINGS = PcaControls(
    dim=20,
    k=5,
    sites=PCA_SITES,
    n_per_site=PCA_N,
    epsilon=0.5,
    delta=LESSON_DELTA,
    runs=5,
    seed=LESSON_SEED,
    algorithms=("nonprivate", "cape", "conv"),
    calibration="analytic",
    neighbouring="add-remove",
)

# The tensor page's settings of lesson 5. 16 runs separate CAPE from conventional at the
# lesson's ε = 0.5 by 2.4 standard errors (docs/learn.md: 3 runs left a "tie", issue #22, and so
# did 8 once the streams were keyed by name, issue #51: 1.2) and stay under the page's threshold
# for a queued heavy job at D = 10, S·N_s = 100 000 (estimated 0.47 s of the 1 s
# HEAVY_SECONDS), so the link opens at once.
OTD_SITES, OTD_N, OTD_RUNS = 5, 20_000, 16
OTD_SETTINGS = OtdControls(
    model="mog",
    dim=10,
    k=5,
    sites=OTD_SITES,
    n_per_site=OTD_N,
    epsilon=0.5,
    delta=LESSON_DELTA,
    runs=OTD_RUNS,
    seed=LESSON_SEED,
    algorithms=("nonprivate", "cape", "conv"),
    calibration="analytic",
    sensitivity="paper",
    scaling="public",
    power="robust",  # restarts 10, 100 iterations, tolerance 1e-8
)

# Lesson 6, beyond the paper: the Trust models, Repeated releases and Attack audit pages at
# their own defaults where the lesson does not vary a setting.
BEYOND_SITES = 5  # S equal sites of N_s = 1000 at ε = 0.5, δ = LESSON_DELTA (as lesson 4)
BITS_GRID = (12, 14, 16, 18, 20, 24, 32)  # secure aggregation's bit width b
TRUST_DIM, TRUST_RUNS = 20, 10  # the Trust models page's D and PCA runs (its defaults)
RELEASES_GRID = (2, 5, 10, 20, 50, 100, 200)  # T releases of the same mean
JOINT_VIEW = "aggregator's joint view"  # the view Repeated releases counts by default
# The Attack audit's "joint-view gap" preset: ten equal sites of N_s = 1000 at ε_s = 0.5,
# δ_s = 10⁻³, analytic; the trials per audit are the lesson's control.
AUDIT_SITES, AUDIT_DELTA = 10, 1e-3
AUDIT_TRIALS_GRID = (10_000, 20_000, 50_000, 100_000, 200_000)
