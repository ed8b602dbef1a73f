"""Reports from finished lm-eval runs: reading run folders, statistics, tables and plots. Needs no
model and no lm-eval.

- ``runs.py``: run folders read as per-pair rows, each samples file by ``samples.py``; ``run_names.py``: which runs are one row and
  what each is called; ``consistency.py``: shards and data that belong together;
  ``comparability.py``: the one rule for which runs a column ranks or compares;
- ``statistics.py``: intervals and tests; ``clusters.py``: which pairs they resample together;
- ``summaries.py``: the accuracy tables; ``variant_metrics.py`` (with its Markdown in
  ``variant_markdown.py``), ``variant_correlations.py``: the variant sections; ``floors.py``: each model read against its floors; ``novelty.py``: against the novelty of its windows; ``confounders.py``: the AUROC
  with a stratum held fixed; ``matched.py``:
  matched-group metrics; ``strands.py``: strand consistency; the footprint
  kind's section is its own (``kinds/footprints/section.py``); ``assays.py``: variant metrics per assay and their macro; ``calibration.py``: the
  calibration table of neutral sites' scores by context;
  ``export.py``: variant runs in TraitGym's file layout; ``output_folder.py``: the folders
  written whole (an export, a leaderboard);
- ``sections.py``: the report's sections, one declared list (the runs each reads, its tables,
  Markdown, figures and notes); ``summary_markdown.py``: the Markdown of the accuracy tables;
- ``plots.py``, ``variant_plots.py``: the figures; ``markdown.py``: ``report.md``;
- ``make.py``: the whole report from run folders; ``leaderboard.py``: one table over many runs,
  written by ``leaderboard_files.py``.
"""
