"""Which of this package's models were created in this process, for advice meant for others.

lm-eval creates the model before it builds the tasks, in the same process. This package's models
(``dna-hf``, ``dna-mlm``, ``kmer-markov``) :func:`announce` themselves when created, and the tasks
skip advice that only lm-eval's own ``hf`` model needs (``add_bos_token=False`` before a DNA
prefix) when one of them is scoring.
"""

from __future__ import annotations

_created: set[str] = set()


def announce(name: str) -> None:
    """Record that this package's model ``name`` was created in this process."""
    _created.add(name)


def package_model_created() -> bool:
    """Whether any of this package's models was created in this process."""
    return bool(_created)
