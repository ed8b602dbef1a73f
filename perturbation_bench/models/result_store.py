"""Resumable runs under lm-eval's ``--use_cache``, keyed by what was computed.

lm-eval's ``--use_cache PATH`` keys each answer by its request alone, ``(context,
continuation)``. This package's models compute more than one thing from the same request: a
log-likelihood, an embedding distance (each distance, pooling and layer), a score of the model's
own (``score: jsd``), with or without a start token, and a score that depends on the pair's
other sequence (a masked marginal, a distance, a JSD). An answer keyed by the request alone
would be served to a run that computes another of these from the same windows. So every model
of the package keeps its answers in a store of its own next to lm-eval's file, keyed by
everything they depend on::

    key = sha256(model, scoring, read_by_model(doc), context, continuation[, partner])

``model`` and ``scoring``: the model's identity (its class, and its source: a hub id, or a local
folder or file by its absolute path and each file's size and modification time, so a checkpoint
saved again or a genome rewritten at the same path is another model) and every setting that
changes its numbers (``provenance.py``'s scorer settings: dtype, max_length, the scoring and an
embedding score's distance, pooling and layer, ...); ``read_by_model(doc)``: the task settings
the model reads from a document (``pairs/settings.py``: the score, the start token);
``partner``: the pair's other sequence, for an answer that depends on it. Answers are written as
soon as they are complete (SQLite, committed on every write) and the file's lm-eval entries are
cleared when the run starts, so lm-eval never serves them: every request reaches the model,
which takes what its store holds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os

from perturbation_bench.pairs.settings import read_by_model

log = logging.getLogger(f"lm_eval.{__name__}")

SUFFIX = ".results.sqlite"


class ResultStore:
    """The store beside lm-eval's cache file ``<PATH>_rank<r>.db`` (module docstring)."""

    def __init__(self, lm_eval_cache, model: list) -> None:
        from sqlitedict import SqliteDict

        self.path = f"{lm_eval_cache.filename}{SUFFIX}"
        self.model = model
        self.answers = SqliteDict(self.path, autocommit=True)
        if len(lm_eval_cache):
            log.info(
                "%s: %d per-request entries cleared (this model keeps its answers in %s)",
                lm_eval_cache.filename,
                len(lm_eval_cache),
                self.path,
            )
            lm_eval_cache.clear()

    @classmethod
    def for_hook(cls, cache_hook, model: list) -> ResultStore | None:
        """The store for lm-eval's cache hook, or None when the run has no ``--use_cache``."""
        database = getattr(cache_hook, "dbdict", None)
        return cls(database, model) if database is not None else None

    def key(self, doc, context: str, *continuations: str) -> str:
        """The key of an answer (module docstring): a request's ``(context, continuation)``, and
        its partner's continuation where the answer depends on it."""
        text = json.dumps([*self.model, read_by_model(doc), context, *continuations])
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str):
        return self.answers.get(key)

    def put(self, key: str, answer) -> None:
        self.answers[key] = answer

    def taken(self, name: str, taken: int, total: int, unit: str) -> None:
        """Log how many of ``total`` answers (``unit``: requests, pairs) came from the store."""
        log.info("%s: %d of %d %s taken from the cache %s", name, taken, total, unit, self.path)


def source_identity(source) -> list:
    """A model source as the key holds it (module docstring): a hub id as given; a local path
    absolute, with ``(name, size, mtime_ns)`` of the file or of each file in the folder."""
    if not isinstance(source, str) or not os.path.exists(source):
        return [source]
    path = os.path.abspath(source)
    files = (
        [path]
        if os.path.isfile(path)
        else sorted(entry.path for entry in os.scandir(path) if entry.is_file())
    )
    return [
        path,
        *([os.path.basename(f), os.stat(f).st_size, os.stat(f).st_mtime_ns] for f in files),
    ]


def split_stored(store: ResultStore | None, requests, pairs, totals: list) -> tuple[dict, list]:
    """``(keys, todo)`` for ``pairs`` of lm-eval ``Instance`` objects whose answers depend on
    the partner: each stored pair's two answers written into ``totals``, the others in
    ``todo``; ``keys`` maps a pair's first index to its key (empty without a store)."""
    if store is None:
        return {}, list(pairs)
    keys, todo = {}, []
    for first, second in pairs:
        context, original = requests[first].args
        other_context, perturbed = requests[second].args
        differs = [other_context] if other_context != context else []  # asks a continuation
        keys[first] = store.key(requests[first].doc, context, original, perturbed, *differs)
        stored = store.get(keys[first])
        if stored is None:
            todo.append((first, second))
        else:
            totals[first], totals[second] = stored
    return keys, todo
