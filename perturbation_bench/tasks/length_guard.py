"""Turn lm-eval's bare ``assert len(continuation_enc) <= self.max_length`` into a clear error.

lm-eval's ``hf`` model (HFLM) cannot score a continuation longer than its context and stops
with an AssertionError that names neither number. :func:`install_length_guard` wraps
``HFLM._loglikelihood_tokens`` so that such a request raises :class:`SequenceTooLongError`
first, with the model's limit, the sequence's token count and the ways out. Requests that fit
pass through unchanged. It is installed when a perturbation-bench task loads its data.
"""

from __future__ import annotations

import functools

from perturbation_bench.errors import SequenceTooLongError


def check_lengths(max_length: int, requests) -> None:
    """Raise for the longest continuation in ``requests`` if it exceeds ``max_length`` tokens.

    Args:
        max_length: the model's context in tokens.
        requests: HFLM's ``((context, continuation), context_enc, continuation_enc)`` tuples.
    """
    longest = max(requests, key=lambda request: len(request[2]), default=None)
    if longest is None or len(longest[2]) <= max_length:
        return
    (_, continuation), _, continuation_enc = longest
    raise SequenceTooLongError(
        f"a sequence of {len(continuation)} bp is {len(continuation_enc)} tokens, longer than "
        f"the model's max_length of {max_length} tokens. Fix: use --model dna-hf, which "
        f"scores long sequences with sliding windows; or raise max_length=... in --model_args "
        f"if the model was trained on longer contexts; or use the preset that matches the "
        f'model\'s tokenizer (a 6-mer model needs --metadata \'{{"preset": "carbon"}}\' or '
        f"'generator')."
    )


def install_length_guard() -> None:
    """Wrap ``HFLM._loglikelihood_tokens`` with :func:`check_lengths` (once)."""
    from lm_eval.models.huggingface import HFLM

    original = HFLM._loglikelihood_tokens
    if getattr(original, "_length_guard", False):
        return

    @functools.wraps(original)
    def guarded(self, requests, *args, **kwargs):
        check_lengths(self.max_length, requests)
        return original(self, requests, *args, **kwargs)

    guarded._length_guard = True
    HFLM._loglikelihood_tokens = guarded
