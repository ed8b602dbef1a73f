"""lm-eval models for DNA: ``dna-hf`` (causal LMs), ``dna-mlm`` (masked LMs), ``kmer-markov``
(the composition floor).

Their names, classes and kinds are the model table, ``perturbation_bench.families.MODELS``.
Importing this package imports nothing else. The models score requests of any task: nothing
here imports :mod:`perturbation_bench.tasks`.

- ``adapter.py``: what every model of this package does (argument checks, provenance, ...);
- ``model_arguments.py``: the model arguments each model takes, read off its code;
- ``dna_hf.py``: ``dna-hf``, with ``causal_plan.py`` (which token passes a set of requests
  needs, long ones in sliding windows), ``causal_batches.py`` (their batches),
  ``causal_scoring.py`` (running them),
  ``document_cache.py`` (the store of answers filled document by document),
  ``sharing_choice.py`` (``share_prefix=auto``: shared or plain, by measurement) and
  ``causal_model_scores.py`` (the embedding and JSD scores its model computes);
- ``dna_mlm.py``: ``dna-mlm``, with ``masked_scoring.py`` (masked marginals and PLL),
  ``masked_inputs.py`` (its inputs: masks, windows, the tokens a change covers) and
  ``masked_head.py`` (the output layer at the read positions only);
- ``random_weights.py``: ``random_init=true``, the checkpoint's architecture with fresh weights;
- ``result_store.py``: every model's answers under ``--use_cache``, keyed by what was computed;
- ``embedding_scoring.py``: embedding-distance variant scores, for ``dna-hf`` and ``dna-mlm``;
- ``jsd_scoring.py``: downstream JSD of single-base variants (``score: jsd``), for ``dna-hf`` and ``dna-mlm``;
- ``kmer_markov.py``: ``kmer-markov``, with ``markov_chain.py`` (the chain counted on a genome);
- ``parallel.py``: data parallelism on GPUs and CPUs;
- ``tokens.py``: unknown tokens, counted or refused;
- ``architecture.py``: a checkpoint's architecture against the model, from its config.json;
- ``provenance.py``: what a results file records of the run.
"""
