"""One module per ``perturbation-bench build`` kind, each with its ``run(args)``: it checks the
arguments, calls the builder, prints what was written and excluded, and returns the config whose
task YAML ``commands/build.py`` writes (None for a variant table). The options of each kind are
declared beside its builder (``commands/build.BUILDS``).

- ``pairs.py``: ``syn`` and ``motif``;
- ``variants.py``: ``variants``;
- ``mutations.py``: ``mutations``;
- ``saturation.py``: ``saturation``;
- ``calibration.py``: ``calibration``;
- ``controls.py``: ``controls``;

The ``footprints`` build is its kind's own (``kinds/footprints/command.py``).
"""
