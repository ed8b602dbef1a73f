"""lm-eval models for DNA: ``dna-hf`` (causal LMs), ``dna-mlm`` (masked LMs), ``kmer-markov``
(the composition floor).

:data:`MODELS` is the one table of this package's model names: the autoload hook registers them
with lm-eval from it (lazily, without importing them), each adapter takes its name from it
(``adapter.registered``), and a test holds ``setup.cfg``'s ``lm_eval.models`` entry points to it.
Importing this package imports nothing else. The models score requests of any task: nothing
here imports :mod:`perturbation_bench.tasks`.
"""

MODELS = {
    "dna-hf": "perturbation_bench.models.dna_hf:DnaHFLM",
    "dna-mlm": "perturbation_bench.models.dna_mlm:DnaMaskedLM",
    "kmer-markov": "perturbation_bench.models.kmer_markov:KmerMarkovLM",
}
"""lm-eval model name -> ``module:Class``."""
