"""The benchmarks of ``perturbation-bench bench``, which print tables (never timed tests). Each
module owns its options (``add_arguments``) and its run (``run``); ``commands/bench.py`` picks one:

- ``throughput.py`` (no flag): a naive loop, lm-eval's ``hf``, ``dna-hf`` and ``dna-mlm`` on the
  same pairs;
- ``sharing.py`` (``--sharing``): what computing a pair's shared pieces once buys;
- ``saturation_scan.py`` (``--saturation``): what scoring each distinct input once buys on a scan;
- ``scale.py`` (``--scale``): where the time and the memory of a large run go, measured in each
  run's process by ``stage_clock.py``;
- ``pll.py`` (``--pll``): ``dna-mlm``'s pseudo-log-likelihood against a plain loop;
- ``embedding.py`` (``--embedding``): embedding scores against a plain loop of forward passes;
- ``protocol.py`` (``--protocol gpu``): marin-dna's inference protocol over a bare loop, lm-eval's
  ``hf`` and ``dna-hf``, with memory, MFU and agreement with float32;
- ``novelty.py`` (``--novelty``): ``annotate novelty``'s time per Gb of genome and per 10,000
  pairs, and its peak memory;
- ``measuring.py``: one method measured in a process of its own (its scores, time and peak
  memory), which the benchmarks share;
- ``inputs.py``: the random models and pairs the benchmarks score when given none;
- ``options.py``: the types of their integer options, each refused below its least value.
"""
