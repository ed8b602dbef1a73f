"""``kmer-markov``: the composition floor, an order-K Markov chain counted on a genome.

Registered with lm-eval as ``--model kmer-markov``; runs on the CPU (numpy). Model
arguments: ``fasta=PATH`` (plain or bgzip; required), ``order=K`` (default 5),
``pseudocount=a`` (default 1), ``counts=PATH`` (where to cache the counts; default next to the
FASTA). Under ``torchrun`` or ``accelerate launch`` each process scores its share of the
pairs (``models/parallel.py``). Each request's LL is the chain's log-likelihood of its continuation after its context
(:mod:`perturbation_bench.models.markov_chain` states the formula); under ``start_token: none``
(``pairs/conventions.py``) the continuation's first base is its context instead, unscored. How far composition alone
gets on a benchmark is the floor a DNA model has to beat.
"""

from __future__ import annotations

from lm_eval.api.model import LM
from tqdm import tqdm

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.adapter import PackageModel, PairsOnly, registered
from perturbation_bench.models.markov_chain import chain_for, chain_settings
from perturbation_bench.models.parallel import DataParallel
from perturbation_bench.pairs.conventions import bare_start


@registered
class KmerMarkovLM(PackageModel, PairsOnly, DataParallel, LM):
    """lm-eval adapter around :class:`~perturbation_bench.models.markov_chain.MarkovChain`."""

    def __init__(
        self,
        fasta: str | None = None,
        order: int = 5,
        pseudocount: float = 1.0,
        counts: str | None = None,
        **unused,
    ) -> None:
        named = {"fasta": fasta, "order": order, "pseudocount": pseudocount}
        values = self._check_arguments({**unused, **named})  # lm-eval's batch_size and device
        super().__init__()
        self._device = self._start_data_parallel("cpu")
        self.chain = chain_for(fasta, values["order"], values["pseudocount"], counts)
        self._ready({"fasta": fasta, **values}, tokenizes=False)

    @classmethod
    def argument_values(cls, model_args: dict) -> dict:
        """``fasta`` given, ``order`` and ``pseudocount`` as the chain takes them
        (``markov_chain.chain_settings``; ``PackageModel.argument_values``)."""
        if not model_args["fasta"]:
            raise OptionsError("kmer-markov needs the genome to count: --model_args fasta=PATH")
        order, pseudocount = chain_settings(model_args["order"], model_args["pseudocount"])
        return {"order": order, "pseudocount": pseudocount}

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """``(LL, False)`` per request, in order."""
        self._provenance.note(requests)
        return self._stored_or_computed(
            requests,
            lambda todo: [
                (self.chain.log_likelihood(*_scored_part(request)), False)
                for request in tqdm(todo, desc="kmer-markov", disable=disable_tqdm)
            ],
        )

    def _source(self) -> str:
        """The genome the chain was counted on."""
        return self._provenance.settings["fasta"]

    def get_model_info(self) -> dict:
        """What lm-eval records about the model in the results' config (``models/provenance.py``)."""
        return self._provenance.info()


def _scored_part(request) -> tuple[str, str]:
    """``(context, continuation)`` the chain scores for lm-eval ``Instance`` ``request``."""
    context, continuation = request.args
    if bare_start(getattr(request, "doc", None)):
        return continuation[:1], continuation[1:]
    return context, continuation
