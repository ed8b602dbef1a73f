"""Content identities: of one pair (to match pairs across runs and to drop duplicates), and of a
dataset's files (to tell whether two runs scored the same data)."""

from __future__ import annotations

import hashlib

import numpy as np


def pair_id(original: str, perturbed: str, *within: str | None) -> str:
    """``sha256(original + "\\n" + perturbed)``, first 16 hex digits: the same pair has the same id
    in every file and every run. A pair ``within`` something its kind declares
    (``shape.DocumentShape.identity``: a variant's assay, ``assays.py``) is that one's:
    ``sha256(assay + "\\n" + original + "\\n" + perturbed)``, so two assays that measure the same
    pair (replicates, assays sharing a wild type) keep a pair each; a None is left out, so a
    pair without an assay keeps the id it always had."""
    key = "\n".join([*(part for part in within if part is not None), original, perturbed])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def data_identity(files) -> str:
    """``sha256:<hex>`` of the files' bytes, in the (sorted) order they are read."""
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def keyed_rng(*key) -> np.random.Generator:
    """A generator seeded by ``sha256(repr(key))`` mod 2**128: one per key, whatever else is
    drawn (the elements here, a motif in one background in ``kinds/footprints/builder.py``)."""
    digest = hashlib.sha256(repr(key).encode()).hexdigest()
    return np.random.default_rng(int(digest, 16) % 2**128)
