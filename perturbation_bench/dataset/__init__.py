"""Build and check datasets in the published schema; independent of the lm-eval tasks (the
genome and the annotation are read by ``formats/``):

- ``codons.py``: codon usage tables, the most frequent synonym, translation;
- ``settings.py``: what decides a ``build syn`` / ``build motif`` output, and its rules;
- ``schema.py``: the published dataset's columns and dtypes;
- ``build.py``: the ``syn`` and ``motif`` pairs, written in the pair layout;
- ``validate.py``: checking a dataset against ``invariants.py``, the properties its rows must
  hold (optionally against the genome);
- ``synthetic.py``: the synthetic genome and annotation behind the demo data;
- ``novelty.py``: each window's k-mers absent from a genome (``annotate novelty``).
"""
