"""The recall kind (``build recall``, the ``perturbation_recall`` task, the report's recall
section): does a model use a distant base? recall-bench's repeat-copy probe, scored on a
continuation span.

- ``rules.py``: the windows (pieces, their lengths, the copies, the seeded draws) and the copy
  advantage with its bootstrap interval;
- ``shape.py``: what its documents hold and ask: two requests, one target after two contexts;
- ``invariants.py``: its row invariants (``validate``, and each row ``build recall`` writes);
- ``builder.py``: the rows of every distance and trial, and the options;
- ``command.py``: ``build recall``: reading the genome's N-free stretches, building, printing;
- ``task.py``: the task's loader, its two requests per row and its metrics;
- ``section.py``: the report's copy advantage against distance, its table and ``recall.csv``.
"""
