"""A page's calls into the core as mypy sees them (issue #51): checked by test.sh's own mypy
run (this file is in pyproject.toml's mypy ``files``), never imported or run.

The first call is right; each other one is wrong and carries a ``type: ignore`` comment naming
the code of the error mypy must report on it. ``warn_unused_ignores`` makes an ignore that
silences nothing an error, so if ``call_core`` stopped keeping the wrapped signature
(ParamSpec), or a cached wrapper took its ``int`` parameters positionally again, the project's
mypy run fails. Before the ParamSpec, ``call_core(fn: Callable[..., T], *args: Any, **kwargs:
Any)`` let all four through. The last goes through ``compute_slot`` under ``st.cache_data``.
tests/test_types.py checks that this file stays in the run and keeps its four probes.
"""

from dpcore import Sites
from ui.cached import call_core, trust_models_pca, trust_models_table


def page(sites: Sites, dim: int, bits: int) -> None:
    """Right: every argument by its name, of its type."""
    call_core(trust_models_table, sites, dim=dim, bits=bits, scale=None, sa_cal="ddg")


def positional(sites: Sites, dim: int, bits: int) -> None:
    """Wrong: ``bits`` and ``dim`` swapped, positionally."""
    call_core(trust_models_table, sites, bits, dim, None, "ddg")  # type: ignore[call-arg]


def misnamed(sites: Sites, dim: int, bits: int) -> None:
    """Wrong: ``bit`` for ``bits``."""
    call_core(
        trust_models_table, sites, dim=dim, bit=bits, scale=None, sa_cal="ddg"  # type: ignore[call-arg]
    )


def mistyped(sites: Sites, dim: int, bits: int) -> None:
    """Wrong: a text ``scale``."""
    call_core(
        trust_models_table, sites, dim=dim, bits=bits, scale="1e-3", sa_cal="ddg"  # type: ignore[arg-type]
    )


def missing(sites: Sites, dim: int, bits: int) -> None:
    """Wrong: ``seed`` left out (the cached wrapper's, through ``compute_slot``)."""
    call_core(
        trust_models_pca, sites, dim=dim, bits=bits, scale=None, sa_cal="ddg", runs=2  # type: ignore[call-arg]
    )
