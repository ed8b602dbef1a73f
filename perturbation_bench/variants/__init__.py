"""Variant effect prediction: variant files and genomes made into pairs (``build variants``), and
the variant tables of in-silico scans.

- ``reading.py``: variant files (VCF, tables); ``mavedb.py``: MaveDB score tables;
  ``bed.py``: BED regions; ``hgvs.py``: genomic HGVS (``g.``) changes made alleles;
  ``nabench.py``: NABench's assay files made pairs (wild type against measured sequence);
- ``windows.py``: a variant's reference and alternate windows, and the edge rules;
- ``build.py``: the variant pairs, written in the pair layout;
- ``tables.py``: writing variant tables; ``mutations.py``: mutations by consequence class
  (``build mutations``), drawn from ``consequences.py`` (each class's candidates);
  ``calibration_sites.py``: neutral sites with their context cells (``build calibration``); ``saturation.py``: every base to each other base (``build saturation``).
"""
