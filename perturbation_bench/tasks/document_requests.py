"""What lm-eval asks of each document: its context and its choices (the task YAMLs name these).

One document is one pair. Its requests follow ``pairs/requests.py``: the context is the
family's DNA prefix, the choices are ``[original, perturbed]`` (``[o, p, rc(o), rc(p)]`` with
``rc_average``), each cropped first for the context-length tasks (``tasks/crop.py``) and then
formatted (upper case, trimmed to whole k-mers). The formatting comes from the task's settings,
one object shared by the task's documents (``pairs/settings.py``).
"""

from __future__ import annotations

from perturbation_bench.pairs.changes import perturbed_sequence
from perturbation_bench.pairs.fields import CROP_START, ORIGINAL, SOFT_MASKED, TASK


def doc_to_context(doc) -> str:
    """The loglikelihood context: the family's DNA prefix ("" = model's BOS/prefix token)."""
    return doc[TASK].formatting.dna_prefix


def doc_to_sequences(doc) -> list[str]:
    """The continuations (module docstring), in request order."""
    settings = doc[TASK]
    pair = doc[ORIGINAL], perturbed_sequence(doc)
    if settings.context_bp is not None:
        start, length = doc[CROP_START], settings.context_bp
        pair = tuple(sequence[start : start + length] for sequence in pair)
    return settings.formatting.continuations(*pair, soft_masked=doc.get(SOFT_MASKED, True))


def requests_per_pair(doc) -> int:
    """How many loglikelihood requests lm-eval makes for this document (``pairs/requests.py``)."""
    return doc[TASK].formatting.requests_per_pair
