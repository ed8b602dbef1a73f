"""Grouping lm-eval's loglikelihood requests into the pairs of a perturbation-bench document.

lm-eval hands a model every request as an ``Instance`` with ``task_name``, ``doc_id`` and
``idx`` (the choice index). A perturbation-bench document makes 2 requests ``[original,
perturbed]`` (4 with ``rc_average``: ``[o, p, rc(o), rc(p)]``), all with the same context and
continuations of equal length; the pairs are ``(idx 0, idx 1)`` and ``(idx 2, idx 3)``.
"""

from __future__ import annotations

from collections import defaultdict

from perturbation_bench.errors import UnsupportedTaskError


def document_pairs(requests, strict: bool) -> list[tuple[int, int]]:
    """Indices ``(original, perturbed)`` of every pair in ``requests``.

    Args:
        strict: raise :class:`UnsupportedTaskError` for a document whose requests do not form
            such pairs (a model that scores only pairs); else leave that document out.
    """
    documents = defaultdict(list)
    for index, request in enumerate(requests):
        documents[(request.task_name, request.doc_id)].append(index)
    pairs = []
    for (task, doc), indices in documents.items():
        indices.sort(key=lambda i: requests[i].idx)
        contexts = {requests[i].args[0] for i in indices}
        lengths = [len(requests[i].args[1]) for i in indices]
        if len(indices) % 2 or len(contexts) > 1 or lengths[0::2] != lengths[1::2]:
            if strict:
                raise UnsupportedTaskError(
                    f"this model scores pairs of equal-length sequences (perturbation-bench "
                    f"tasks); task {task!r} document {doc} has {len(indices)} request(s) with "
                    f"continuations of {lengths} characters; run other tasks with --model hf"
                )
            continue
        pairs += list(zip(indices[0::2], indices[1::2]))
    return pairs
