"""Variant effect prediction: variant files and genomes made into pairs (``build variants``), and
the variant tables of in-silico scans.

Its inputs are read by ``formats/`` (variant files, MaveDB, NABench, BED, FASTA).

- ``windows.py``: a variant's reference and alternate windows, and the edge rules;
- ``build.py``: the variant pairs, written in the pair layout;
- ``tables.py``: writing variant tables; ``mutations.py``: mutations by consequence class
  (``build mutations``), drawn from ``consequences.py`` (each class's candidates);
  ``calibration_sites.py``: neutral sites with their context cells (``build calibration``); ``saturation.py``: every base to each other base (``build saturation``).
"""
