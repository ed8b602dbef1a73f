"""The names of a pair document's fields, stated once for the tasks, the models and the report.

A document is one row of a pair file (its columns as they are, ``sequence`` excepted) plus the
fields the tasks add, all named ``scoring_*`` so that they never collide with a data column:

    original_sequence      the real window, as published
    scoring_change_start   where the perturbed copy's changed span starts (changes.py)
    scoring_change         the perturbed copy's characters in that span
    scoring_soft_masked    whether either sequence has lower-case letters (upper-cased to score)
    scoring_crop_start     where the pair's crop starts (context-length tasks only)
    scoring_token_counts   scored tokens per continuation (``reduction: mean`` only)
    scoring_task           the task's settings, one object shared by every document (settings.py)
    scoring_calibration    a calibrated score's mean over the variant's cell (calibration.py)
    scoring_<name>_start, scoring_<name>_change
                           a further sequence a kind declares (``shape.py``: a footprint pair's
                           background) as its changed span against the original, like the
                           perturbed copy

A pair file annotated by ``perturbation-bench annotate novelty`` (``dataset/novelty.py``) has two
more columns, ``novel_k<K>_original`` and ``novel_k<K>_perturbed``: how many of each window's
canonical K-mers the genome lacks (:func:`novelty_columns`).
"""

import re

ORIGINAL = "original_sequence"
PERTURBED = "sequence"
SEQUENCE_COLUMNS = (ORIGINAL, PERTURBED)
"""The two sequence columns of a pair file: the real window, the perturbed copy."""

CHANGE_START = "scoring_change_start"
CHANGE = "scoring_change"
SOFT_MASKED = "scoring_soft_masked"
CROP_START = "scoring_crop_start"
TOKEN_COUNTS = "scoring_token_counts"
TASK = "scoring_task"
CALIBRATION = "scoring_calibration"
NOVELTY_COLUMN = re.compile(r"^novel_k(\d+)_(original|perturbed)$")
"""A novelty column's name: its k and its window."""


def novelty_columns(k: int) -> tuple[str, str]:
    """The novelty columns of the original and the perturbed window, at k-mer size ``k``."""
    return f"novel_k{k}_original", f"novel_k{k}_perturbed"
