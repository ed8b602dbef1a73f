"""The run's store of answers (``result_store.py``, under ``--use_cache``) filled document by
document as ``dna-hf`` scores, so a killed run keeps every document it completed."""

from __future__ import annotations

Request = tuple  # HFLM's ((context, continuation), context_enc, continuation_enc)


class DocumentCache:
    """Hands the store each document's answers as soon as every request of the document is
    scored, so a killed run keeps every document it completed and a rerun of the same command
    scores only the rest. Without instances (not called through
    :meth:`dna_hf.DnaHFLM.loglikelihood`) each request counts as its own document."""

    def __init__(self, store, requests: list[Request], instances: list) -> None:
        self.store, self.requests, self.results = store, requests, {}
        self.docs = [getattr(instance, "doc", None) for instance in instances]
        self.members: dict = {}  # document -> its request indices
        self.document_of = []
        for index, instance in enumerate(instances):
            key = (instance.task_name, instance.doc_id) if instance is not None else index
            self.members.setdefault(key, []).append(index)
            self.document_of.append(key)
        self.waiting = {key: len(indices) for key, indices in self.members.items()}

    def complete(self, index: int, result: tuple[float, bool]) -> None:
        """``CausalScorer.score``'s callback: request ``index`` is scored."""
        self.results[index] = result
        key = self.document_of[index]
        self.waiting[key] -= 1
        if self.waiting[key]:
            return
        for done in self.members[key]:
            (context, continuation), _, _ = self.requests[done]
            self.store.put(
                self.store.key(self.docs[done], context, continuation), self.results[done]
            )
