"""What lm-eval asks of each document: its context and its choices (the task YAMLs name these).

One document is one pair. Its requests follow ``pairs/requests.py``: the context is the
family's DNA prefix, the choices are ``[original, perturbed]`` (``[o, p, rc(o), rc(p)]`` with
``rc_average``), each cropped first for the context-length tasks (``tasks/crop.py``) and then
formatted (upper case, trimmed to whole k-mers). The formatting comes from the task's settings,
one object shared by the task's documents (``pairs/settings.py``).

A document of a kind that declares more comparisons (``pairs/shape.py``: a footprint
document's motif and control windows each against its background) asks for each, in the
order declared, each a pair's requests as above, so that every model of this package, which
scores pairs, gives each a log-likelihood on the same terms.

A kind that declares its requests instead (``shape.py``: the recall kind) is asked as a task of
several inputs, lm-eval's form for one continuation after several contexts: its contexts are the
choices, its continuation the target (:func:`doc_to_contexts`, :func:`doc_to_continuation`).

A variant document scored by its four-allele reading (``score: marginal_llr`` or ``entropy``,
``pairs/four_allele.py``) asks for two comparisons: its pair ``(w_ref, w_alt)``, then the windows
of the two other bases at the site, in ``ACGT`` order (``pairs/scores.Reading.comparisons``).
"""

from __future__ import annotations

from perturbation_bench.pairs.changes import copy_sequence, perturbed_sequence
from perturbation_bench.pairs.fields import CROP_START, ORIGINAL, SOFT_MASKED, TASK
from perturbation_bench.pairs.four_allele import other_windows
from perturbation_bench.pairs.kinds import shape_of
from perturbation_bench.pairs.shape import ORIGINAL_NAME, PERTURBED_NAME


def doc_to_first(doc) -> int:
    """lm-eval's ``doc_to_text`` of a task of several inputs (a kind's requests, ``shape.py``):
    the index of its first request's context, the one its comparison reads first."""
    return 0


def doc_to_contexts(doc) -> list[str]:
    """The contexts of a kind's requests (``shape.py``), in request order: the family's DNA
    prefix, then the context in upper case."""
    prefix = doc[TASK].formatting.dna_prefix
    return [prefix + doc[name].upper() for name in shape_of(doc).contexts]


def doc_to_continuation(doc) -> str:
    """The continuation a kind's requests share (``shape.py``), in upper case."""
    return doc[shape_of(doc).requests[0].continuation].upper()


def doc_to_context(doc) -> str:
    """The loglikelihood context: the family's DNA prefix ("" = model's BOS/prefix token)."""
    return doc[TASK].formatting.dna_prefix


def comparisons(doc) -> list[tuple[str, str]]:
    """The pairs of sequences a document's requests compare, in request order (module
    docstring), uncropped."""
    shape = shape_of(doc)
    if len(shape.comparisons) > 1:
        sequences = {ORIGINAL_NAME: doc[ORIGINAL], PERTURBED_NAME: perturbed_sequence(doc)}
        sequences |= {copy.name: copy_sequence(doc, copy) for copy in shape.copies}
        return [(sequences[c.first], sequences[c.second]) for c in shape.comparisons]
    pair = (doc[ORIGINAL], perturbed_sequence(doc))
    return [pair, other_windows(doc)] if doc[TASK].reading.comparisons > 1 else [pair]


def comparison_count(doc) -> int:
    """How many comparisons a document asks for (module docstring): its shape's, or its
    score's reading's (two for a four-allele score)."""
    declared = len(shape_of(doc).comparisons)
    return declared if declared > 1 else doc[TASK].reading.comparisons


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
