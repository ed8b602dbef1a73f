"""Resumable runs for models whose score of a sequence depends on its partner (``dna-mlm``).

lm-eval's ``--use_cache PATH`` keys each result by its request alone, ``(context,
continuation)``. A masked marginal over the positions where two sequences differ depends on the
other sequence too, so one such entry would be served to any other pair that holds the same
sequence (a reference window shared by an SNV and a deletion at one site), and a pair whose
partner was cached would reach the model alone. This module keeps those scores in a store of
its own next to lm-eval's, keyed by everything they depend on::

    key = sha256(model, max_length, context, continuation_o, continuation_p)  ->  (LL_o, LL_p)

(a score the model computes from the pair, ``score: jsd``, keyed with its name too)

written as soon as a pair is scored (SQLite, committed on every write), and clears lm-eval's
per-request entries of that file when the run starts, so lm-eval never serves them: every
request reaches the model, which takes whole pairs from the store.
"""

from __future__ import annotations

import hashlib
import json
import logging

log = logging.getLogger(f"lm_eval.{__name__}")

SUFFIX = ".pairs.sqlite"


class PairStore:
    """The pair-keyed store beside lm-eval's cache file ``<PATH>_rank<r>.db`` (module docstring)."""

    def __init__(self, lm_eval_cache, model_key: list) -> None:
        from sqlitedict import SqliteDict

        self.path = f"{lm_eval_cache.filename}{SUFFIX}"
        self.model_key = model_key
        self.pairs = SqliteDict(self.path, autocommit=True)
        if len(lm_eval_cache):
            log.info(
                "%s: %d per-request entries cleared (this model caches whole pairs in %s)",
                lm_eval_cache.filename,
                len(lm_eval_cache),
                self.path,
            )
            lm_eval_cache.clear()

    @classmethod
    def for_hook(cls, cache_hook, model_key: list) -> PairStore | None:
        """The store for lm-eval's cache hook, or None when the run has no ``--use_cache``."""
        database = getattr(cache_hook, "dbdict", None)
        return cls(database, model_key) if database is not None else None

    def key(self, context: str, original: str, perturbed: str, score: str | None = None) -> str:
        """The pair's key (module docstring); ``score`` names a score the model computes."""
        named = [score] if score is not None else []
        text = json.dumps([*self.model_key, *named, context, original, perturbed])
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str):
        return self.pairs.get(key)

    def put(self, key: str, lls: tuple[float, float]) -> None:
        self.pairs[key] = lls
