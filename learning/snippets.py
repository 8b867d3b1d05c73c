"""'Reproduce in Python': the dpcore code that gives a figure's numbers, as text.

Pure functions of the parameters the page used; tests execute each snippet and compare its
result with what the page computed (tests/ui/test_export.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpcore import OtdSpec, PcaSpec, Sites


def _kwargs(params: Mapping[str, Any], indent: str = "    ") -> str:
    return "".join(f"{indent}{k}={v!r},\n" for k, v in params.items())


def _data_line(source: tuple) -> str:
    """The line that loads a PCA data set the way the app does (ui.cached.load_dataset)."""
    kind = source[0]
    if kind == "mnist":
        return f"data = dpcore.load_mnist({source[1] or None!r})\n"
    if kind == "covtype":
        return (
            f"data = dpcore.load_covtype({source[1] or None!r}, rng=np.random.default_rng(0))\n"
        )
    if kind == "upload":
        return 'data = dpcore.load_csv(open("your.csv", "rb").read(), name="your CSV")\n'
    return f"data = dpcore.load_bundled({kind!r})\n"


def keywords(
    spec: PcaSpec | OtdSpec, source: tuple = ("synthetic",), *, short: bool = False
) -> dict[str, Any]:
    """The keywords that rebuild ``spec`` (``short``: those not at their default), without
    the data: ``source`` names it, and on a real data set it decides D and the pool."""
    drop = ("data",) if source[0] == "synthetic" else ("data", "dim", "pool_size")
    return {n: v for n, v in spec.keywords(defaults=not short).items() if n not in drop}


def sweep(spec: PcaSpec | OtdSpec, seed: int, source: tuple = ("synthetic",)) -> str:
    """``dpcore.pca_sweep`` / ``dpcore.otd_sweep`` with the page's spec: a tidy frame."""
    function = "pca_sweep" if isinstance(spec, PcaSpec) else "otd_sweep"
    head = "import numpy as np\n\nimport dpcore\n\n"
    params: dict[str, Any] = keywords(spec, source, short=True)
    if source[0] != "synthetic":
        head += _data_line(source)
        params = {"data": _Raw("data"), **params}
    params["rng"] = seed
    return head + f"df = dpcore.{function}(\n{_kwargs(params)})\nprint(df)\n"


class _Raw(str):
    """A name written as is (not quoted) in a keyword list."""

    def __repr__(self) -> str:
        return str(self)


def _site_lines(sites: Sites) -> str:
    return (
        "import numpy as np\n\nimport dpcore\n\n"
        f"n_per_site = {sites.n_per_site!r}\n"
        f"epsilon = {sites.epsilon!r}\n"
        f"delta = {sites.delta!r}\n"
        f"weights = {sites.weights!r}  # normalised to sum 1\n"
        "# each site releases its mean of values in [0, 1]: sensitivity 1/N_s\n"
        "tau = dpcore.gaussian_sigmas(\n"
        "    1.0 / np.asarray(n_per_site, float), epsilon=epsilon, delta=delta, "
        f"calibration={sites.calibration.kind!r}\n)\n"
    )


def averaging(sites: Sites, *, draws: int, seed: int) -> str:
    """The aggregate noise of ``draws`` CAPE and conventional runs (the histogram's draws)."""
    return _site_lines(sites) + (
        f"rng = np.random.default_rng({seed})\n"
        f"zeros = np.zeros((len(tau), {draws}))  # {draws} independent entries, one run\n"
        "cape_rng, conv_rng = rng.spawn(2)\n"
        "cape = dpcore.cape_average(zeros, tau, weights=weights, rng=cape_rng).estimate\n"
        "conv = dpcore.conventional_average(zeros, tau, weights=weights, rng=conv_rng).estimate\n"
        "design = dpcore.cape_design(tau, weights=weights)\n"
        "print(cape.std(), design.tau_agg, conv.std(), design.tau_conv)\n"
    )


def collusion(sites: Sites, *, ng: bool, design: str, rounds: int = 1) -> str:
    """Effective ε of the most exposed site against the number of colluders (over all T
    rounds of CAPE per round when ``rounds`` > 1)."""
    if rounds > 1:
        return _site_lines(sites) + (
            "from dpcore import rounds_collusion_curve\n\n"
            "curve = rounds_collusion_curve(\n"
            f"    tau, rounds={rounds!r}, sensitivity=1.0 / np.asarray(n_per_site, float),\n"
            f"    epsilon=epsilon, delta=delta, weights=weights, design={design!r}, "
            f"noise_generator={ng!r}\n)\n"
            "print(curve)\n"
        )
    return _site_lines(sites) + (
        "from dpcore import design_for\n\n"
        f"made = design_for({design!r}, tau, weights=weights)\n"
        "curve = dpcore.collusion_curve(\n"
        "    made, sensitivity=1.0 / np.asarray(n_per_site, float), delta=delta, epsilon=epsilon, "
        f"noise_generator={ng!r}\n)\n"
        "print(curve)\n"
    )


def audit_tradeoff(sites: Sites, site: int, colluding, trials: int, seed: int) -> str:
    """The Attack audit's trade-off chart: each view's audit, its μ, curve, dip and posteriors
    (``site`` and ``colluding`` 0-based, as the page's cached call takes them)."""
    views = [("release", ()), ("joint", ())] + (
        [("coalition", tuple(colluding))] if colluding else []
    )
    return _site_lines(sites) + (
        "from dpcore import design_for\n\n"
        f"site, trials, views = {site}, {trials}, {views!r}\n"
        f"streams = iter(np.random.default_rng({seed}).spawn(2 * len(views)))\n"
        "rows, curves = [], []\n"
        "for kind in ('cape', 'joint'):\n"
        "    made = design_for(kind, tau, weights=weights)\n"
        "    mus = {}\n"
        "    for view, colluding in views:\n"
        "        audit = dpcore.audit_protocol(\n"
        "            made, sensitivity=1.0 / np.asarray(n_per_site, float), site=site, view=view,\n"
        "            colluding=colluding, delta=delta[site], trials=trials, rng=next(streams)\n"
        "        ).audit\n"
        "        mus[view] = 1.0 / audit.noise_multiplier\n"
        "        promise = {'epsilon': epsilon[site], 'delta': delta[site]}\n"
        "        reading = dpcore.read_view(mus[view], **promise)\n"
        "        box = dpcore.attack_box(audit.false_positives, audit.negatives,\n"
        "                                  audit.false_negatives, audit.positives)\n"
        "        rows.append((kind, view, reading, box))\n"
        "    curves.append(dpcore.tradeoff_curves(mus, **promise))\n"
        "for row in rows:\n"
        "    print(*row, sep='\\n  ')\n"
    )


def calibration(grid, delta: float) -> str:
    """Classic and analytic σ/Δ over ε at δ."""
    return (
        "import dpcore\n\n"
        f"grid = {tuple(grid)!r}\n"
        f"table = dpcore.calibration_comparison(grid, delta={delta!r})\n"
        "print(table)\n"
    )


def gain(total: int, sites: int, points: int = 60) -> str:
    """The gain curves as the largest site grows (common ε; CAPE weights N_s/N)."""
    return (
        "import numpy as np\n\nimport dpcore\n\n"
        f"total, sites, points = {total}, {sites}, {points}\n"
        "rows = []\n"
        "for share in np.linspace(1.0 / sites, (total - sites + 1) / total, points):\n"
        "    sizes = dpcore.one_large_site(total, sites, float(share))\n"
        "    weights = sizes / sizes.sum()\n"
        "    design = dpcore.cape_design(1.0 / sizes, weights=weights)\n"
        "    joint = dpcore.joint_safe_design(1.0 / sizes, weights=weights)\n"
        "    rows.append((sizes[0] / sizes.sum(), design.gain_same_weights,\n"
        "                 joint.gain_same_weights, dpcore.cape_gain(sizes),\n"
        "                 dpcore.best_conventional_gain(sizes)))\n"
        "print(np.array(rows))  # share, same weights, joint-safe, paper G(n), best conventional\n"
    )


def paper_panel(key: str, *, runs: int, seed: int, calibration: str) -> str:
    """One panel of the paper's figures, as ``python -m paper`` computes it."""
    return (
        "import dpcore\n\n"
        f"panel = dpcore.panel_by_key({key!r})\n"
        f"df = dpcore.run_panel(panel, runs={runs}, seed={seed}, calibration={calibration!r})\n"
        "print(df)\n"
        + (
            f"# or, from a shell: python -m paper --figure {key} --runs {runs} --seed {seed} "
            f"--calibration {calibration}\n"
            if "~" not in key
            else "# a stand-in panel: python -m paper --precompute computes it with the others\n"
        )
    )
