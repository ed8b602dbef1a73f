"""The pair contract, the ground floor every other subpackage builds on.

A pair is a real window (``original_sequence``) and a perturbed copy of equal length
(``sequence``). Everything the tasks, the models and the report must agree on about pairs is
stated here once:

- ``files.py``: reading pair parquet files and the rules every pair must pass;
- ``kinds.py``: the kinds of pair files (syn, motif, controls, variants, footprints), one table
  of what each one's files, build, task, options and report fields are;
- ``shape.py``: what a kind's documents hold and ask (further sequences, comparisons), declared
  by the kind and read by the files' check, the documents, their requests and the report;
- ``layout.py``: the on-disk layout every build writes and every reader finds;
- ``changes.py``: where the two sequences differ (the changed span), and the perturbed copy
  stored as that span and rebuilt from it;
- ``windows.py``: the centre-and-clamp rule that places a window on a longer sequence;
- ``fields.py``: the names of the fields the tasks add to each document;
- ``settings.py``: the one table of a task's settings, and the object its documents share;
  ``setting_rows.py``: one row of it (its type checked), which a kind may declare in its folder;
- ``applicability.py``: which settings apply to which task, one rule for ``check`` and the run;
- ``requests.py``: how a pair becomes loglikelihood requests (formatting, requests per pair,
  the strand average) and how the responses pair up again;
- ``outcome.py``: the decision rule and the per-pair values (correct, tie, margin);
- ``ranking.py``: the variant ranking metrics (AUROC, AUPRC, by chromosome) and correlations;
- ``scores.py``: the variant scores, one table (what each reads, its TraitGym name);
  ``four_allele.py``: the four-allele reading of a single-base variant (its marginal, scores);
  ``calibration.py``: context-calibrated scores (cells, the calibration table, the offsets);
- ``assays.py``: those metrics per assay, the n-per-class gate, the macro over assays, and a
  quantitative label's declared direction;
- ``conventions.py``: upstream scoring conventions, and which settings apply to which model;
- ``identity.py``: the content hash of a pair and of a dataset's files, and a generator seeded
  by a key.

Imports only the ground floor (``dna.py``, ``errors.py``, ``families.py``, ...).
"""
