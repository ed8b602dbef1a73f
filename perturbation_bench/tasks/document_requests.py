"""What lm-eval asks of each document: its context and its choices (the task YAMLs name these).

One document is one pair. Its requests follow ``pairs/requests.py``: the context is the
family's DNA prefix, the choices are ``[original, perturbed]`` (``[o, p, rc(o), rc(p)]`` with
``rc_average``), each cropped first for the context-length tasks (``tasks/crop.py``) and then
formatted (upper case, trimmed to whole k-mers). The formatting comes from the task's settings,
one object shared by the task's documents (``pairs/settings.py``).

A footprint document (``build footprints``: motif window ``o``, control window ``p``, raw
background ``r``) asks for three comparisons, each a pair's requests as above, in this order::

    (o, p)    the motif against its control        (the pair of every task)
    (o, r)    the motif against the background
    (p, r)    the control against the background

so that every model of this package, which scores pairs, gives each of the three a log-likelihood on
the same terms (DART-Eval's accuracy vs background, ``kinds/footprints/rules.py``).

A variant document scored by its four-allele marginal (``score: marginal_llr`` or ``entropy``,
``pairs/marginal.py``) asks for two comparisons: its pair ``(w_ref, w_alt)``, then the windows
of the two other bases at the site, in ``ACGT`` order.
"""

from __future__ import annotations

from perturbation_bench.pairs.changes import background_sequence, perturbed_sequence
from perturbation_bench.pairs.fields import (
    BACKGROUND_CHANGE,
    CROP_START,
    ORIGINAL,
    SOFT_MASKED,
    TASK,
)
from perturbation_bench.pairs.marginal import other_windows
from perturbation_bench.pairs.scores import MARGINAL_SCORES


def doc_to_context(doc) -> str:
    """The loglikelihood context: the family's DNA prefix ("" = model's BOS/prefix token)."""
    return doc[TASK].formatting.dna_prefix


def comparisons(doc) -> list[tuple[str, str]]:
    """The pairs of sequences a document's requests compare, in request order (module
    docstring), uncropped."""
    original, perturbed = doc[ORIGINAL], perturbed_sequence(doc)
    background = background_sequence(doc)
    if background is not None:
        return [(original, perturbed), (original, background), (perturbed, background)]
    if doc[TASK].score in MARGINAL_SCORES:
        return [(original, perturbed), other_windows(doc)]
    return [(original, perturbed)]


def comparison_count(doc) -> int:
    """How many comparisons a document asks for (module docstring): three for a footprint
    document, two for a variant scored by its marginal, else one."""
    if doc.get(BACKGROUND_CHANGE) is not None:
        return 3
    return 2 if doc[TASK].score in MARGINAL_SCORES else 1


def doc_to_sequences(doc) -> list[str]:
    """The continuations (module docstring), in request order."""
    settings = doc[TASK]
    continuations = []
    for pair in comparisons(doc):
        if settings.context_bp is not None:
            start, length = doc[CROP_START], settings.context_bp
            pair = tuple(sequence[start : start + length] for sequence in pair)
        soft_masked = doc.get(SOFT_MASKED, True)
        continuations += settings.formatting.continuations(*pair, soft_masked=soft_masked)
    return continuations


def requests_per_comparison(doc) -> int:
    """How many loglikelihood requests one comparison of this document takes (2, or 4 with
    ``rc_average``: ``pairs/requests.py``)."""
    return doc[TASK].formatting.requests_per_pair


def requests_per_document(doc) -> int:
    """How many loglikelihood requests lm-eval makes for this document: those of one
    comparison, times its comparisons."""
    return requests_per_comparison(doc) * comparison_count(doc)
