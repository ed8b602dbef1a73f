"""``perturbation-bench bench``: throughput benchmarks that print tables (never timed tests).

- ``throughput.py``: a naive loop, lm-eval's ``hf``, ``dna-hf`` and ``dna-mlm`` on the same pairs;
- ``sharing.py`` (``--sharing``): what computing a pair's shared pieces once buys;
- ``saturation.py`` (``--saturation``): what scoring each distinct input once buys on a scan.
"""
