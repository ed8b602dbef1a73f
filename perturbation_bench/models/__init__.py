"""lm-eval models for DNA: ``dna-hf`` (causal LMs), ``dna-mlm`` (masked LMs), ``kmer-markov``
(the composition floor).

Their names, classes and kinds are the model table, ``perturbation_bench.families.MODELS``.
Importing this package imports nothing else. The models score requests of any task: nothing
here imports :mod:`perturbation_bench.tasks`.
"""
