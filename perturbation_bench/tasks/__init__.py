"""What lm-eval's task YAMLs call, one module per hook kind:

- ``loading.py``: ``custom_dataset`` (options, files, documents; ``documents.py``, ``sources.py``,
  ``options.py``, ``crop.py``, ``token_counts.py`` serve it);
- ``document_requests.py``: ``doc_to_text`` and ``doc_to_choice``;
- ``pairing.py``: the pair filter and ``process_results``;
- ``metrics.py``: the per-pair metrics and what a task's ties mean;
- ``variants.py``: the variant task's loader and results; ``variant_aggregations.py``: its
  ranking, correlation and per-assay aggregations;
- ``task_yaml.py``: the YAML of a built config's own task.

Imports nothing from :mod:`perturbation_bench.dataset` or :mod:`perturbation_bench.models`: a task
works with any model, and reads pairs only through :mod:`perturbation_bench.pairs`.
"""
