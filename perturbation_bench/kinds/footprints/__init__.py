"""The footprint kind (``build footprints``, the ``perturbation_footprints`` task, the report's
footprint section): a MEME motif's consensus inserted into background windows against a
permutation of the insert, as DART-Eval's footprinting task does.

- ``rules.py``: where an insert sits, the doses, and DART-Eval's per-motif metrics;
- ``shape.py``: what its documents hold and ask: the background, three comparisons;
- ``invariants.py``: its row invariants (``perturbation-bench validate``);
- ``settings.py``: its own settings (``ties``, ``dose_axes``), gathered into the settings table;
- ``builder.py``: the pairs of every motif, background, dose and orientation, and the options;
- ``command.py``: ``build footprints``: reading the motifs and backgrounds, building, printing;
- ``task.py``: the task's loader, results and per-motif aggregations;
- ``section.py``: the report's footprint tables, Markdown, ``footprints.csv`` and the figure.
"""
