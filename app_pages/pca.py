"""PCA: captured energy of capePCA and baselines along one swept parameter."""

import pandas as pd
import streamlit as st

import dpcore
from ui.controls import (
    SWEEP_GRIDS,
    algorithm_picker,
    calibration_controls,
    delta_slider,
    download_buttons,
    epsilon_slider,
    run_gate,
    seed_controls,
    sweep_axis_control,
    sweep_values,
)
from ui.core import call_core, classic_warning, pca_results
from ui.figures import figure_html, sweep_figure
from ui.theme import AXIS_LABELS, label

st.title("Distributed private PCA")
st.markdown(
    "S sites each hold samples; together they want the top-K principal subspace without "
    "revealing any individual. **CAPE** (capePCA, Algorithm 1) reaches the accuracy of a trusted "
    "curator holding all the data; **conventional** averaging of independently noised site "
    "matrices needs S times the noise variance. The plot shows how much of the data's variance "
    "each method's K directions capture."
)

side = st.sidebar
side.header("Data")
dim = side.select_slider(
    "Dimension D",
    [20, 50, 100, 200],
    value=50,
    key="dim",
    bind="query-params",
    help="Features per sample. Noise is added to every entry of a D×D "
    "matrix, so larger D needs more samples for the same accuracy.",
)
k = side.number_input(
    "Components K",
    min_value=1,
    max_value=200,
    value=10,
    key="k",
    bind="query-params",
    help="Size of the subspace to find (K ≤ D). The paper uses K = 50 at D = 200.",
)
side.header("Sites and privacy")
sites = side.select_slider(
    "Sites S",
    [2, 3, 5, 10, 20, 50],
    value=10,
    key="sites",
    bind="query-params",
    help="More sites: conventional noise variance grows S-fold over CAPE's.",
)
n_per_site = side.select_slider(
    "Samples per site N_s",
    SWEEP_GRIDS["n_per_site"],
    value=1000,
    key="ns",
    bind="query-params",
    help="Noise std per site ∝ 1/N_s: more samples, less noise.",
)
epsilon = epsilon_slider(side)
delta = delta_slider(side)
sizes = side.radio(
    "Site sizes",
    ["equal", "one site holds half"],
    key="sizes",
    bind="query-params",
    horizontal=True,
    help="Unequal sites: CAPE weights sites by N_s/N and still matches pooled noise.",
)
calibration, relation = calibration_controls(side)
side.header("Experiment")
axis = sweep_axis_control(side)
runs = side.slider(
    "Runs per point",
    1,
    20,
    5,
    key="runs",
    bind="query-params",
    help="Independent noise draws per grid point; the band shows ±1 std.",
)
seed = seed_controls(side)
algorithms = algorithm_picker(
    side, dpcore.PCA_ALGORITHMS, ["nonprivate", "cape", "conv", "dpdis", "local"]
)
absolute = side.toggle(
    "Absolute captured energy",
    key="absolute",
    bind="query-params",
    help="Off: as a fraction of the best possible (top-K eigenvalue sum).",
)

if not algorithms:
    st.info("Choose at least one algorithm in the sidebar.")
    st.stop()

current = {"epsilon": epsilon, "delta": delta, "n_per_site": n_per_site, "sites": sites}
params = {
    "dim": int(dim),
    "k": int(k),
    "runs": int(runs),
    "seed": seed,
    "algorithms": tuple(algorithms),
    "calibration": calibration,
    "neighbouring": relation,
    **current,
    axis: sweep_values(axis, current[axis]),
}
if sizes != "equal" and axis != "sites":
    params["site_shares"] = (sites - 1,) + (1,) * (sites - 1)
elif sizes != "equal":
    st.caption("Sweeping S: sites are equal (unequal shares need a fixed S).")
heavy = dim >= 200 or runs * len(params[axis]) > 100
if run_gate(params, heavy, key="pca"):
    with st.spinner("Running the sweep…"):
        df = call_core(pca_results, **params)
    eps_values = params["epsilon"] if axis == "epsilon" else [epsilon]
    classic_warning(calibration, eps_values)
    metric, y_title = (
        ("captured_energy", "captured energy tr(V̂ᵀAV̂)")
        if absolute
        else ("captured_energy_ratio", "captured energy / optimum")
    )
    at_current = df[df[axis] == current[axis]].groupby("algorithm")[metric].mean()
    cols = st.columns(len(algorithms))
    for col, alg in zip(cols, algorithms, strict=True):
        value = at_current[alg]
        col.metric(
            label(alg),
            f"{value:.1%}" if not absolute else f"{value:.3g}",
            help=f"Mean over {runs} runs at {AXIS_LABELS[axis]} = {current[axis]:g}.",
        )
    fig = sweep_figure(
        df, axis=axis, metric=metric, y_title=y_title, algorithms=algorithms, marker=current[axis]
    )
    st.plotly_chart(fig, key="pca_chart")
    download_buttons(st, df, figure_html(fig), "cape_pca")

    st.subheader("Communication cost")
    cost = pd.DataFrame(
        [
            {
                "algorithm": label(a),
                **dpcore.communication_cost(
                    a, problem="pca", dim=int(dim), k=min(int(k), int(dim)), sites=sites
                ),
            }
            for a in algorithms
        ]
    )
    st.dataframe(cost, hide_index=True)
    st.caption(f"Real numbers sent per run at D = {dim}, K = {k}, S = {sites}.")

with st.expander("How it works — the equations"):
    st.markdown(
        "Each site's second-moment matrix and the noise it needs on its own "
        "(Gaussian mechanism, Sec. 2 and Sec. 4):"
    )
    st.latex(
        r"A_s = \tfrac{1}{N_s} X_s X_s^\top,\quad "
        r"\tau_s = \frac{\Delta_s}{\epsilon}\sqrt{2\ln\tfrac{1.25}{\delta}},\quad "
        r"\Delta_s = \tfrac{1}{N_s}"
    )
    st.markdown("CAPE noise (eq. (2)); site s sends Â_s = A_s + E_s + F_s + G_s (Algorithm 1):")
    st.latex(
        r"\tau_e^2 = \tau_f^2 = \left(1-\tfrac{1}{S}\right)\tau_s^2,\qquad "
        r"\tau_g^2 = \tfrac{\tau_s^2}{S},\qquad \textstyle\sum_s E_s = 0"
    )
    st.markdown("The aggregator subtracts the F_s; the E_s cancel (Appendix C.1):")
    st.latex(
        r"\hat A = \tfrac{1}{S}\sum_s (\hat A_s - F_s) = \tfrac{1}{S}\sum_s (A_s + G_s),"
        r"\qquad \operatorname{std} = \tfrac{\tau_s}{S} = \tau_{\text{pooled}}"
    )
    st.markdown("Quality: the captured energy of the top-K eigenvectors V̂ of Â (Sec. 2, 6.1):")
    st.latex(r"q(\hat V) = \operatorname{tr}(\hat V^\top A \hat V) \le \sum_{k\le K}\lambda_k(A)")
    st.caption(
        f"Data: the paper's synthetic set scaled to D = {dim}: eigenvalues linspace(10, 1, K) "
        "then 0.5·U(0,1); 60,000 samples scaled into the unit ball by the largest norm (not "
        f"private). Sweeping {AXIS_LABELS[axis]}; top-K by signed eigenvalue."
    )
