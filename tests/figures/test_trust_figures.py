"""The Trust models chart's labels and colours (figures/trust.py): each scheme of the core's
registry has both with no entry of its own in figures/, a new scheme too (issue #51)."""

import pytest

import dpcore
from figures import theme
from figures.trust import _SPARE, COLORS, LABELS, scheme_colors

# The schemes that are registered algorithms, and the algorithm whose colour each wears.
REGISTERED = {
    "local": "local",
    "conventional": "conv",
    "cape": "cape",
    "cape_joint": "cape_joint",
    "secagg": "secagg",
}


def _shared(colors: dict[str, str]) -> dict[str, list[str]]:
    """The colours two or more schemes wear, with those schemes."""
    by_color: dict[str, list[str]] = {}
    for scheme, color in colors.items():
        by_color.setdefault(color, []).append(scheme)
    return {color: schemes for color, schemes in by_color.items() if len(schemes) > 1}


def test_every_scheme_has_the_records_label_and_a_colour_of_its_own():
    assert list(LABELS) == list(dpcore.TRUST_SCHEMES)
    assert all(label.strip() for label in LABELS.values())
    assert len(set(LABELS.values())) == len(LABELS)  # one bar each, told apart by its label
    assert list(COLORS) == list(dpcore.TRUST_SCHEMES)
    assert not _shared(COLORS), f"schemes sharing a colour: {_shared(COLORS)}"


def test_a_scheme_that_is_a_registered_algorithm_wears_its_colour():
    for scheme, algorithm in REGISTERED.items():
        assert COLORS[scheme] == theme.style(algorithm).color, scheme


def test_a_new_scheme_gets_a_colour_of_its_own_without_an_edit():
    # planted: two schemes no algorithm is registered under, after the registry's
    planted = (*dpcore.TRUST_SCHEMES, "helper", "notary")
    colors = scheme_colors(planted)
    assert {s: colors[s] for s in dpcore.TRUST_SCHEMES} == COLORS  # the others' unchanged
    worn = set(COLORS.values()) | {theme.style(a).color for a in dpcore.algorithm_names()}
    assert colors["helper"] != colors["notary"]
    assert not {colors["helper"], colors["notary"]} & worn
    # more new schemes than spare colours: they repeat, and the check above names them
    many = (*dpcore.TRUST_SCHEMES, *(f"new{i}" for i in range(len(_SPARE) + 1)))
    assert "new0" in str(_shared(scheme_colors(many)))


@pytest.mark.parametrize("color", _SPARE)
def test_a_new_schemes_colour_reads_as_a_mark_on_both_themes(color):
    # WCAG 2.1 non-text contrast (1.4.11): 3:1 against the page's background, light and dark
    for background in theme.BACKGROUND.values():
        assert theme.contrast_ratio(color, background) >= 3, (color, background)
