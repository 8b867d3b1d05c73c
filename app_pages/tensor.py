"""Tensor decomposition: component recovery of capeAGN and baselines for MOG or STM."""

import pandas as pd
import streamlit as st

from dpcore import is_heavy
from dpcore import reference_algorithms as references
from figures.memo import built
from figures.theme import AXIS_LABELS, label
from learning import explanations, snippets
from learning.settings import OtdControls
from ui import presenter
from ui.cached import (
    call_core,
    call_core_with_spinner,
    classic_warning,
    otd_example,
    otd_frame,
    otd_job,
)
from ui.controls import (
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
from ui.questions import Target, show_crossings
from ui.results import communication_table, show_sweep
from ui.specs import OTD_GRIDS, marker, otd_example_spec, otd_spec
from ui.state import bound
from ui.tables import arrow

st.title("Distributed private tensor decomposition")
presenter.intro(
    "Latent-variable models — a **mixture of Gaussians** or a **single-topic model** — are "
    "learned from the second and third moments of the data (M2, a D×D matrix; M3, a D×D×D "
    "tensor). **capeAGN** (Algorithm 2) computes both with CAPE: first M2 for the whitening "
    "W, then M3 projected to K×K×K at the sites, so only small tensors travel. The plot shows "
    "how far the recovered components are from the true ones (lower is better)."
)

P = "td_"  # this page's keys (docs/state.md)
side = st.sidebar
controls, main = presenter.split()
side.header("Model")
model = bound(  # a link may name the model by its key (mog) or its label
    side.radio,
    "Model",
    f"{P}model",
    options=["mog", "stm"],
    horizontal=True,
    format_func={"mog": "Mixture of Gaussians", "stm": "Topic model"}.get,
    help="MOG: samples = a component mean + Gaussian noise (σ² = 0.05). STM: "
    "documents of 3 words from one of K topics.",
)
dim = bound(
    side.select_slider,
    "Dimension D",
    f"{P}dim",
    options=[5, 10, 20, 50],
    value=10,
    help="Features (MOG) or vocabulary size (STM). M3 has D³ entries to "
    "noise, so larger D needs more samples.",
)
k = bounded_k(side, prefix=P, dim=int(dim), default=5, paper="K = 5 at D = 10")
current = sites_and_privacy(
    controls,
    sites=OTD_GRIDS["sites"],
    sites_default=5,
    n_values=OTD_GRIDS["n_per_site"],
    n_default=20000,
    prefix=P,
)
side.caption(
    "ε and δ are split equally between M2 and M3: (ε/2, δ/2) each, composing to (ε, δ) (Theorem 2)."
)
calibration, _ = calibration_controls(side, prefix=P)
sensitivity = side.radio(
    "Sensitivity",
    ["paper", "add-remove", "replace"],
    key=f"{P}sens",
    bind="query-params",
    persist_state="session",
    horizontal=True,
    help="paper: Appendix E's Δ₂, Δ₃. add-remove / replace: the exact sensitivities "
    "(largest change of the full moment tensors) for each neighbouring relation "
    "(docs/tensor.md).",
)
if model == "mog":
    scaling = side.radio(
        "Scaling into the unit ball",
        ["public", "max-norm"],
        key=f"{P}scaling",
        bind="query-params",
        persist_state="session",
        horizontal=True,
        help="public: divide by a bound from the model's public parameters and "
        "clip the rare samples beyond it (private). max-norm: divide by "
        "the data's largest norm, as the paper does (NOT private).",
    )
else:
    scaling = "public"
side.header("Experiment")
axis = sweep_axis_control(side, prefix=P)
runs = runs_slider(side, prefix=P)
variant = side.radio(
    "Power method",
    ["robust", "authors"],
    key=f"{P}tpm",
    bind="query-params",
    persist_state="session",
    horizontal=True,
    help="robust: 10 random restarts per component (Anandkumar et al. 2014). "
    "authors: one start, up to 1000 iterations, tolerance 1e-6.",
)
seed = seed_controls(side, prefix=P)
algorithms = algorithm_picker(side, "otd", prefix=P)
matched = side.toggle(
    "One-to-one matched error",
    key=f"{P}matched",
    bind="query-params",
    persist_state="session",
    help="Off: the paper's q_comp (each recovered vector to its nearest true "
    "one — two may share a match). On: a one-to-one matching.",
)
target_error = bound(
    side.number_input,
    "Target: component error below",
    f"{P}target",
    min_value=0.01,
    max_value=2.0,
    value=0.2,
    step=0.05,
    help="A dotted line on the chart; the table under it says where each algorithm's "
    "error first drops below it along the swept axis.",
)

if not algorithms:
    st.info("Choose at least one algorithm in the sidebar.")
    st.stop()
if model == "mog" and scaling == "max-norm":
    st.warning(
        "Max-norm scaling looks at the data: this preprocessing is **not** private.",
        icon=":material/warning:",
    )

chosen = OtdControls(
    model=model,
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
    sensitivity=sensitivity,
    scaling=scaling,
    power=variant,
    axis=axis,
)


def _named(example: pd.DataFrame, algorithms: tuple[str, ...]) -> pd.DataFrame:
    """One run's recovered weights, the algorithms' columns named as the legend names them."""
    return example.rename(columns={a: label(a) for a in algorithms})


spec = call_core(otd_spec, chosen)
heavy = is_heavy(spec)
with main:
    if run_gate((spec, seed), heavy, key=f"{P}run"):
        if heavy:  # a bounded child process, queued, with Cancel (ui.jobs)
            df = otd_job(spec, seed, gate=f"{P}run")
        else:
            df = call_core_with_spinner("Running the sweep…", otd_frame, spec, seed)
        metric = "component_error_matched" if matched else "component_error"
        y_title = "matched component error" if matched else "component error q_comp"
        show_sweep(
            df,
            axis=axis,
            metric=metric,
            y_title=y_title,
            current=marker(chosen),
            algorithms=algorithms,
            export=FigureExport(
                stem="cape_otd",
                title=f"Distributed private tensor decomposition: {y_title} vs {AXIS_LABELS[axis]}",
                page="tensor",
                params={**snippets.keywords(spec), "seed": seed},
                snippet=snippets.sweep(spec, seed),
            ),
            value_format=lambda v: f"{v:.3f}",
            help_text="Component error (lower is better)",
            target=float(target_error),
            explanation=explanations.TENSOR_SWEEP,
            key=(spec, seed),  # what made df
        )
        # each moment's release is calibrated to its stage's share of ε (Theorem 2)
        largest = spec.stages(spec.grid.largest("epsilon") if axis == "epsilon" else None)
        classic_warning(calibration, [stage.epsilon for stage in largest])
        show_crossings(
            df,
            axis=axis,
            metric=metric,
            target=Target(float(target_error), False, f"a component error below {target_error:g}"),
            algorithms=[a for a in algorithms if a not in references("otd")],
            key=(spec, seed),
        )
        if model == "stm":
            st.caption(
                "Planted topics: the first K columns of a random orthogonal matrix, **each flipped "
                "to sum positive**, negatives clipped to 0, normalised. The authors clip without "
                "the flip, which leaves mostly-negative columns as peaked topics; the flip changes "
                "the topics and every error here, the random baseline included (0.44 vs 0.47 on "
                "average at D = 10, K = 5). See docs/deviations.md."
            )
        if df["invalid_components"].sum():
            st.caption(
                f"{int(df['invalid_components'].sum())} recovered topic vectors had no "
                "positive entry and were replaced by the uniform distribution."
            )

        st.header("Recovered weights, one run")
        one_run = call_core(otd_example_spec, chosen)
        if heavy:  # one run at these settings is heavy too: a job, not the server's cores
            example = otd_job(one_run, seed, gate=f"{P}run", example=True)
        else:
            example = call_core(otd_example, one_run, seed)
        named = built(_named, example, tuple(algorithms), key=(one_run, seed, tuple(algorithms)))
        st.dataframe(
            arrow(named),
            hide_index=True,
            column_config={
                c: st.column_config.NumberColumn(format="%.3f")
                for c in example.columns
                if c != "component"
            },
        )
        st.caption(
            f"At the current settings (seed {seed}); recovered weights ŵ_k = 1/λ_k², "
            "matched one-to-one to the true components."
        )

        communication_table("otd", algorithms, dim=int(dim), k=int(k), sites=current.sites)

with st.expander("How it works — the equations"):
    st.markdown(
        paragraphs(
            "MOG moments with the σ² correction (Appendix D.2):",
            tex(
                r"M_2 = \mathbb E[x x^\top] - \sigma^2 I,\quad M_3 = \mathbb E[x^{\otimes 3}] - "
                r"\sigma^2\sum_d (m\otimes e_d\otimes e_d + e_d\otimes m\otimes e_d + "
                r"e_d\otimes e_d\otimes m)"
            ),
            "Both are low rank in the components (Appendix D):",
            tex(
                r"M_2 = \sum_k w_k a_k a_k^\top,\qquad M_3 = \sum_k w_k\, a_k\otimes a_k\otimes a_k"
            ),
            "capeAGN (Algorithm 2): whitening from the CAPE estimate of M2, then sites send "
            "projected K×K×K tensors; E3 cancels and F3 is subtracted (Appendix C.2):",
            tex(
                r"W = U D^{-1/2},\quad \tilde M_3 = \sum_s \mu_s\big(\hat M_3^s(W,W,W) - "
                r"F_3^s(W,W,W)\big) = \Big(\sum_s \mu_s (M_3^s + G_3^s)\Big)(W,W,W)"
            ),
            "Tensor power iteration (eq. (3)) and the error measure (Sec. 6.2):",
            tex(
                r"u \mapsto \frac{\tilde M_3(I,u,u)}{\|\tilde M_3(I,u,u)\|},\qquad "
                r"q_{\text{comp}} = \frac1K\sum_k \min_{k'}\|\hat a_k - a_{k'}\|_2"
            ),
        )
    )
