"""What every lm-eval model of this package does, stated once.

:func:`registered` registers an adapter class with lm-eval under its name in the model table
(``models/__init__.py``). :class:`PackageModel` is the checklist each adapter runs in its
``__init__``, in this order:

1. :meth:`~PackageModel._check_arguments`, before any weight is read: a user error prints as one
   line (``errors.install_excepthook``); the package's model announces itself (the tasks then
   load for it, ``active_models.py``); every model argument must be one it takes
   (``model_arguments.py``), and the values of those it reads itself are checked and returned
   (:meth:`~PackageModel.argument_values`, which ``perturbation-bench check`` reads too);
   ``pretrained``/``tokenizer`` a folder or a usable hub id and the batch size valid
   (``arguments.py``);
2. :meth:`~PackageModel._ready`, once the model is loaded and its processes joined: the rank and
   world size lm-eval shards documents by are announced (a process then holds only its own
   documents); the scorer settings are recorded for the results file (``provenance.py``); a model
   that tokenizes counts unknown tokens (``tokens.py``).

Under lm-eval's ``--use_cache`` every adapter keeps its answers in a store keyed by what was
computed (``result_store.py``), set up by :meth:`~PackageModel.set_cache_hook`.

:class:`PairsOnly` refuses what a pair scorer cannot do (rolling log-likelihoods, generation).
"""

from __future__ import annotations

from lm_eval.api.registry import register_model

from perturbation_bench.active_models import announce, announce_share
from perturbation_bench.arguments import (
    check_batch_size,
    check_model_source,
    check_remote_code,
)
from perturbation_bench.errors import UnsupportedTaskError, install_excepthook
from perturbation_bench.families import MODELS
from perturbation_bench.models.model_arguments import check_model_arguments
from perturbation_bench.models.provenance import Provenance
from perturbation_bench.models.result_store import ResultStore, source_identity
from perturbation_bench.models.tokens import UnknownTokenCounter


def registered(cls):
    """Class decorator: register ``cls`` with lm-eval under its name in :data:`MODELS`, which it
    also keeps as ``cls.model_name``.

    lm-eval imports its own models (``hf``, ...) only when a name is looked up in an empty
    registry, so they are imported first: registering into the empty registry would hide them.
    """
    import lm_eval.models  # noqa: F401  (lm-eval's models, before ours fill the registry)

    target = f"{cls.__module__}:{cls.__qualname__}"
    names = [name for name, model in MODELS.items() if model.target == target]
    if len(names) != 1:
        raise LookupError(f"{target} is not (or not once) in perturbation_bench.families.MODELS")
    cls.model_name = names[0]
    return register_model(names[0])(cls)


class PackageModel:
    """The checklist of the module docstring, for a class that also derives from lm-eval's LM."""

    model_name: str

    def _check_arguments(
        self,
        given: dict,
        sources: dict | None = None,
        batch_size=None,
        trust_remote_code=False,
        scoring: str | None = None,
    ) -> dict:
        """Step 1; return the values the model reads (:meth:`argument_values`). ``given`` holds
        the model arguments (``pretrained`` among them); ``sources`` maps ``pretrained``/``tokenizer`` to the value given (None
        and model objects are not checked); ``batch_size`` None is not checked; a folder that
        ships its own code needs ``trust_remote_code``; ``scoring`` (the model's ``scoring``
        argument) is announced with the model."""
        install_excepthook()
        announce(self.model_name, scoring)
        for argument, value in (sources or {}).items():
            if isinstance(value, str):
                check_model_source(value, argument)
                check_remote_code(value, trust_remote_code)
        values = check_model_arguments(self.model_name, given)  # scoring among them
        if batch_size is not None:
            check_batch_size(batch_size)
        return values

    @classmethod
    def argument_values(cls, model_args: dict) -> dict:
        """The values of the arguments the model reads itself, checked before any weight, from
        every argument given, its constructor's defaults filled in; ``perturbation-bench check``
        and the constructor both read them (``model_arguments.check_model_arguments``).

        Raises:
            OptionsError: naming the argument and what it takes.
        """
        return {}

    def _ready(self, settings: dict, tokenizes: bool = True) -> None:
        """Step 2, with the scorer ``settings`` that change numbers (dtype, max_length, ...)."""
        announce_share(self.rank, self.world_size)
        self._provenance = Provenance(self.model_name, settings)
        if tokenizes:
            self._unknown = UnknownTokenCounter(self.model_name)
            self._unknown_summary = self._unknown.summary(1)

    _store: ResultStore | None = None
    """The run's store of answers under ``--use_cache`` (``result_store.py``); None without."""

    def set_cache_hook(self, cache_hook) -> None:
        """lm-eval's ``--use_cache``: answers go to a store keyed by the model, every setting
        that changes its numbers, and what each request is computed as (``result_store.py``)."""
        super().set_cache_hook(cache_hook)
        identity = [
            self.model_name,
            source_identity(self._source()),
            self._provenance.scorer_settings(),
        ]
        self._store = ResultStore.for_hook(cache_hook, identity)

    def _source(self):
        """Where the model's numbers come from: its checkpoint (``name_or_path``)."""
        return getattr(getattr(self, "model", None), "name_or_path", None)

    def _stored_or_computed(self, requests, compute, stores_itself: bool = False) -> list:
        """Each request's answer: from the store where it holds one, else from ``compute`` (a
        function of a list of requests), which is then stored unless ``compute``
        ``stores_itself`` as it goes (for a model whose answer depends on the request alone)."""
        if self._store is None:
            return compute(requests)
        keys = [self._store.key(request.doc, *request.args) for request in requests]
        answers = [self._store.get(key) for key in keys]
        todo = [index for index, answer in enumerate(answers) if answer is None]
        self._store.taken(self.model_name, len(requests) - len(todo), len(requests), "requests")
        for index, answer in zip(todo, compute([requests[i] for i in todo]), strict=True):
            answers[index] = answer
            if not stores_itself:
                self._store.put(keys[index], answer)
        return answers


class PairsOnly:
    """Refusals of a model that scores loglikelihood requests of pairs only."""

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise UnsupportedTaskError(f"{self.model_name} scores loglikelihood requests of pairs only")

    def generate_until(self, requests, disable_tqdm: bool = False):
        raise UnsupportedTaskError(f"{self.model_name} scores loglikelihood requests of pairs only")
