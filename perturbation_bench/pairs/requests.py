"""How a pair becomes loglikelihood requests, and how their answers pair up again.

Formatting, per sequence ``s`` of a pair (both members get the same treatment)::

    context      = dna_prefix                      # "" means: lm-eval conditions on BOS/prefix token
    continuation = upper(s)[: len(s) - len(s) % kmer_size]  # soft-masked bases read as bases;
                                                            # right-trim to whole k-mers
    with kmer_overlap (DNABERT), no trimming; the text is the overlapping k-mers, space-separated:
    continuation = " ".join(upper(s)[i : i + k] for i in range(len(s) - k + 1))    # k = kmer_size

so a sequence of ``L`` bases is ``L - k + 1`` words, the ``i``-th covering bases ``i .. i + k - 1``,
and each base lies in up to ``k`` of them (what ``dna-mlm`` masks for a changed base,
``models/masked_scoring.py``). The reverse complement (``rc_average``) is taken of the bases,
then written as k-mers.

A document asks for its continuations in this order, one loglikelihood request each::

    [o, p]                      plain                          2 requests per pair
    [o, p, rc(o), rc(p)]        rc_average (reverse complements) 4 requests per pair

so requests ``(0, 1)`` and ``(2, 3)`` are the pairs of each strand, and the pair's
log-likelihoods are the strand average::

    LL(original) = mean(ll[0], ll[2]),   LL(perturbed) = mean(ll[1], ll[3])      (strand_average)

lm-eval keeps a document's requests together; :func:`document_pairs` finds them among a model's
requests, the task's filter reads them back with :func:`strand_average`.

A document may instead ask for one continuation after contexts that are part of the question
(a recall document, ``kinds/recall/``: its target after the repeat and the control window):
such a request's context is more than the DNA prefix (:func:`asks_continuation`). Its two
requests still form a pair when the contexts are equal in length (a scorer then shares what
they have in common), and a model never crops such a context (:func:`refuse_cropped_context`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from perturbation_bench.dna import reverse_complement
from perturbation_bench.errors import OptionsError, UnsupportedTaskError
from perturbation_bench.pairs.fields import TASK


@dataclass(frozen=True)
class Formatting:
    """How one model family reads DNA.

    Attributes:
        dna_prefix: literal text placed before the sequence as the loglikelihood context;
            empty for models that start from their BOS token.
        kmer_size: sequences are trimmed on the right to a multiple of this many bases
            (1 = no trimming), for tokenizers that read non-overlapping k-mers; with
            ``kmer_overlap``, the k of the overlapping k-mers instead.
        rc_average: score each sequence and its reverse complement and use the mean.
        kmer_overlap: give the model the sequence as overlapping k-mers (module docstring).
    """

    dna_prefix: str = ""
    kmer_size: int = 1
    rc_average: bool = False
    kmer_overlap: bool = False

    @property
    def requests_per_pair(self) -> int:
        """2, or 4 with ``rc_average`` (module docstring)."""
        return 4 if self.rc_average else 2

    def trim(self, sequence: str, soft_masked: bool = True) -> str:
        """Return ``sequence`` in upper case, cut on the right to a whole number of k-mers.

        ``soft_masked=False`` says the sequence has no lower-case letter (the tasks know it per
        pair): it is then not copied to upper-case it, and with whole k-mers the same string
        object comes back (the requests share the document's text).
        """
        if not self.kmer_overlap:
            sequence = sequence[: len(sequence) - len(sequence) % self.kmer_size]
        return sequence.upper() if soft_masked else sequence

    def as_text(self, sequence: str) -> str:
        """``sequence`` as the model reads it: itself, or its overlapping k-mers."""
        if not self.kmer_overlap:
            return sequence
        k = self.kmer_size
        return " ".join(sequence[i : i + k] for i in range(len(sequence) - k + 1))

    def continuations(self, original: str, perturbed: str, soft_masked: bool = True) -> list[str]:
        """The strings to score for one pair, in request order (module docstring)."""
        pair = [self.trim(original, soft_masked), self.trim(perturbed, soft_masked)]
        strands = pair + [reverse_complement(s) for s in pair] if self.rc_average else pair
        return [self.as_text(s) for s in strands]


def strand_pairs(indices: list) -> list[tuple]:
    """``(original, perturbed)`` of each strand from a document's requests in request order."""
    return list(zip(indices[0::2], indices[1::2], strict=True))


def strand_average(lls: list[float]) -> tuple[float, float]:
    """``(LL(original), LL(perturbed))`` from a document's log-likelihoods in request order."""
    strands = len(lls) // 2
    return sum(lls[0::2]) / strands, sum(lls[1::2]) / strands


def _documents(requests) -> dict[tuple, list[int]]:
    """The indices of each document's requests, ``(task_name, doc_id) -> indices`` in the order
    of ``idx`` (the choice index)."""
    documents = defaultdict(list)
    for index, request in enumerate(requests):
        documents[(request.task_name, request.doc_id)].append(index)
    for indices in documents.values():
        indices.sort(key=lambda i: requests[i].idx)
    return documents


def comparison_links(requests) -> list[tuple[int, int]]:
    """Links between the comparisons of one document on one strand: each later comparison's
    first request of a strand with the first comparison's, for a scorer that scores linked
    requests as one group, their common prefix once (``models/causal_plan.py``): a marginal
    document's four alleles (``pairs/four_allele.py``), a footprint document's three windows.
    Documents of tasks of other packages have no comparisons and no links."""
    links = []
    for indices in _documents(requests).values():
        doc = getattr(requests[indices[0]], "doc", None)
        settings = doc.get(TASK) if isinstance(doc, dict) else None
        if settings is None:
            continue
        per = settings.formatting.requests_per_pair
        for start in range(per, len(indices), per):
            links += [(indices[s], indices[start + s]) for s in range(0, per, 2)]
    return links


def asks_continuation(request) -> bool:
    """Whether an lm-eval ``Instance`` asks for its continuation after a context that is part of
    the question (module docstring): a document of this package's whose request's context is
    not its DNA prefix."""
    doc = getattr(request, "doc", None)
    settings = doc.get(TASK) if isinstance(doc, dict) else None
    return settings is not None and request.args[0] != settings.formatting.dna_prefix


def refuse_cropped_context(request, tokens: int, max_length: int, model: str) -> None:
    """Refuse a request that asks a continuation (:func:`asks_continuation`) and does not fit
    the model's ``max_length`` tokens whole: cropping its context would change the question.

    Raises:
        OptionsError: naming the request, its tokens and the model's positions.
    """
    if tokens > max_length and asks_continuation(request):
        doc = request.doc
        raise OptionsError(
            f"{request.task_name} doc {request.doc_id} ({doc.get('benchmark_id')}): its context "
            f"and continuation are {tokens} tokens, more than {model}'s max_length={max_length}; "
            "a context that is part of the question is never cropped: rebuild without the "
            "distances past the model's positions, or give a max_length the model has"
        )


def _paired(requests, indices) -> bool:
    """Whether a document's requests form pairs (:func:`document_pairs`)."""
    contexts = {requests[i].args[0] for i in indices}
    lengths = [len(requests[i].args[1]) for i in indices]
    if len(indices) % 2 or lengths[0::2] != lengths[1::2]:
        return False
    if len(contexts) == 1:
        return True
    return (
        all(asks_continuation(requests[i]) for i in indices) and len(set(map(len, contexts))) == 1
    )


def document_pairs(requests, strict: bool) -> list[tuple[int, int]]:
    """Indices ``(original, perturbed)`` of every strand's pair among lm-eval ``Instance``
    objects, grouped by ``(task_name, doc_id)`` and ordered by ``idx`` (the choice index).

    A document forms pairs when it has an even number of requests with continuations of equal
    length pairwise and one context, or contexts of one length that ask a continuation (module
    docstring).

    Args:
        strict: raise :class:`UnsupportedTaskError` for a document whose requests do not form
            such pairs (a model that scores only pairs); else leave that document out.
    """
    pairs = []
    for (task, doc), indices in _documents(requests).items():
        if not _paired(requests, indices):
            if strict:
                lengths = [len(requests[i].args[1]) for i in indices]
                raise UnsupportedTaskError(
                    f"this model scores pairs of equal-length sequences (perturbation-bench "
                    f"tasks); task {task!r} document {doc} has {len(indices)} request(s) with "
                    f"continuations of {lengths} characters; run other tasks with --model hf"
                )
            continue
        pairs += strand_pairs(indices)
    return pairs
