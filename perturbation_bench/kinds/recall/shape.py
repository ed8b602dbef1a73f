"""What a recall document holds and asks (``pairs/shape.py``).

A recall file holds no pair of windows: each row is one target ``A`` and the two contexts it is
scored after (``rules.py``), declared as the document's two requests, so the core's file check
and ``validate`` read its sequences (``pairs/files.py``) and lm-eval asks them
(``tasks/document_requests.py``). Its task (``task.py``) makes each row a document whose pair is
the target twice (``original_sequence`` = ``sequence`` = ``A``, no changed span): what differs is
the context, so the pair's two log-likelihoods are ``LL(A | repeat)`` and ``LL(A | control)``,
and the core's pairwise accuracy, ties, margin and samples read them as any pair's. A pair's
identity is its content: the target and its two contexts (never its ``benchmark_id``, which
names the trial, not what is scored), so two trials that drew the same windows are one pair
(``build recall`` keeps the first, ``validate``'s ``distinct_pairs`` fails the second).
"""

from __future__ import annotations

from perturbation_bench.pairs.shape import DocumentShape, Request

TARGET = "target"
REQUESTS = (Request("context_repeat", TARGET), Request("context_control", TARGET))
"""The two requests, in order: the target after the repeat window's context first."""
FIELDS = ("distance", "copy", "control", "trial")
"""The columns that name a trial besides its sequences."""

SHAPE = DocumentShape(
    columns=FIELDS,
    sample_fields=("distance", "copy", "control", "trial", "target_bp"),
    identity=tuple(request.context for request in REQUESTS),
    invariants="perturbation_bench.kinds.recall.invariants:invariants",
    requests=REQUESTS,
    compared=("A | repeat", "A | control"),
)
CONTEXTS = SHAPE.contexts
"""The two contexts, in request order: the repeat window's first."""
