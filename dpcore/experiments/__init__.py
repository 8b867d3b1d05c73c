"""Floor 5, experiments: sweeps and studies built from the floors below.

The sweeps behind the PCA, tensor and dropout pages (:mod:`.sweeps`), their work limits
(:mod:`.limits`), the paper's figures (:mod:`.paper`), the quiz questions (:mod:`.questions`)
real data (:mod:`.realdata`, :mod:`.csv_text`) and the reproduction of a published baseline
figure (:mod:`.grammenos`), the power methods' block size (:mod:`.block_size`). Only
``cli``, ``paper_cli`` and ``cluster`` sit above.
"""

from dpcore.experiments import (
    block_size,
    csv_text,
    grammenos,
    limits,
    paper,
    questions,
    realdata,
    sweeps,
)

__all__ = [
    "block_size",
    "csv_text",
    "grammenos",
    "limits",
    "paper",
    "questions",
    "realdata",
    "sweeps",
]
