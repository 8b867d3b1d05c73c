"""Named sections of the app's long pages, so that a link can land on the one it is about.

A link names its section in the URL (``?section=calibration``, the one key besides
``present`` that no page owns: it says where to look, not what to compute). The page's header
carries the same name as its anchor, and :func:`ui.sections.land` scrolls to it once the page
has drawn (issue #40 item 2: lesson 1's calibration link opened three screens above its chart).
"""

from __future__ import annotations

from learning.glossary import GLOSSARY

PARAM = "section"

# Overview (app_pages/overview.py): what ε promises one person (the plan's first slot)
OVERVIEW_PROMISE = "what-epsilon-promises"
# For the lecturer (app_pages/classroom.py): the reveal (the plan's "What the class predicted")
CLASSROOM_REVEAL = "reveal"
# Privacy explorer (app_pages/privacy.py)
PRIVACY_VIEWS = "who-sees-what"
PRIVACY_COLLUSION = "collusion"
PRIVACY_DROPOUTS = "dropouts"
PRIVACY_CALIBRATION = "calibration"
# Attack audit (app_pages/audit.py)
AUDIT_NUMBERS = "audit-numbers"
AUDIT_TRADEOFF = "attack-tradeoff"
AUDIT_POSTERIOR = "largest-posterior"
# CAPE averaging (app_pages/averaging.py)
AVERAGING_DESIGN = "noise-design-per-site"
AVERAGING_GAINS = "what-cape-gains"
# Repeated releases (app_pages/composition.py)
COMPOSITION_ACCOUNTANTS = "accountants"
COMPOSITION_PROFILES = "privacy-profiles"
COMPOSITION_LEDGER = "ledger"
# Trust models (app_pages/trust_models.py)
TRUST_SCHEMES = "schemes"
TRUST_FEDERATION = "across-real-sites"

ANCHORS = frozenset(
    {
        OVERVIEW_PROMISE,
        CLASSROOM_REVEAL,
        PRIVACY_VIEWS,
        PRIVACY_COLLUSION,
        PRIVACY_DROPOUTS,
        PRIVACY_CALIBRATION,
        AUDIT_NUMBERS,
        AUDIT_TRADEOFF,
        AUDIT_POSTERIOR,
        AVERAGING_DESIGN,
        AVERAGING_GAINS,
        COMPOSITION_ACCOUNTANTS,
        COMPOSITION_PROFILES,
        COMPOSITION_LEDGER,
        TRUST_SCHEMES,
        TRUST_FEDERATION,
    }
    | {term.anchor for term in GLOSSARY}  # the glossary page: one anchor per term
)


def requested(value: object) -> str | None:
    """The section a URL value names, or None when it names none of :data:`ANCHORS` (a link
    can only ask for a known section: the name goes into a script)."""
    text = value[-1] if isinstance(value, list) and value else value
    return text if isinstance(text, str) and text in ANCHORS else None
