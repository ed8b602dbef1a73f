"""What lm-eval's task YAMLs call: options and presets, data loading, the pair filter, the metrics.

Imports nothing from :mod:`perturbation_bench.dataset` or :mod:`perturbation_bench.models`: a task
works with any model, and reads datasets only through :mod:`perturbation_bench.pair_files`.
"""
