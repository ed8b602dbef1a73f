"""lm-eval model classes (``--model dna-hf``, ...). They score requests of any task: nothing here
imports :mod:`perturbation_bench.tasks`."""
