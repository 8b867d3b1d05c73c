"""Floor 1, mechanisms: one release's noise and what it promises.

The Gaussian calibrations (classic, analytic) and sensitivities (:mod:`.calibration`), the
noise samplers (:mod:`.noise`, :mod:`.discrete`) and the reading of a promise ε as odds
(:mod:`.promise`). Imports only dpcore's base (``_validation``, ``resources``).
"""

from dpcore.mechanisms import calibration, discrete, noise, promise

__all__ = ["calibration", "discrete", "noise", "promise"]
