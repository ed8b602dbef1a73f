"""``perturbation-bench report``: intervals, strata, paired comparisons and plots from lm-eval runs.

Writes everything below by calling the modules of this subpackage, one job each: ``runs.py``
(reading the runs), ``run_names.py`` (which runs are one row, and their names),
``consistency.py`` (shards and data checks), then each section of ``sections.SECTIONS`` (its
tables, figures and notes, computed by its own module), and ``markdown.py`` (``report.md``).

Input: one lm-eval ``--output_path`` folder per run, made with ``--log_samples`` (``runs.py``).
In every table and figure a run is one row, named by its model and what tells it apart from the
other runs of that model (``run_names.py``). Runs with ``scoring=embedding`` give a variant score,
not a preference between two windows: they enter the variant sections only, under the score's
name (``Embeddings.plus.euclidean_distance``, ...). Output folder:

- ``pairs.parquet``: one row per pair and run (pair id, task, both LLs, correct, margin, strata);
- ``report.json`` and ``report.md``: per model and task, accuracy with a seeded bootstrap and a
  Wilson 95% interval, both by cluster (``clusters.py``: gene, overlapping windows or pair, with
  the number of clusters, the effective n and the design effect), tie rate, margin mean and median, n; the unweighted mean over the tasks
  each model ran; accuracy by stratum (``fraction_codons_changed`` in fifths, ``exon_rank`` with
  5+ pooled, ``is_first_exon``, ``strand``, ``chr``, ``is_clamped``, and ``--by`` columns),
  strata under ``summaries.FEW_PAIRS`` pairs flagged; for every two models that ran a task, the
  accuracy difference with a paired cluster bootstrap interval and p-value and the exact McNemar
  p-value (pairs independent) over the pairs both scored (matched by ``pair_id``; pairs only one model scored are counted); and,
  where a published config is among the tasks, the published numbers of the Carbon report, as
  separate reference rows; intervals from fewer than ``summaries.THIN_PAIRS`` pairs (or
  by-chromosome ones over fewer than ``variant_metrics.FEW_CHROMOSOMES`` chromosomes) are marked
  thin in the tables and the notes;
- the context-length sweep: for every model and config scored at two or more context lengths
  (the ``perturbation_<config>_<L>bp`` tasks and the whole windows), accuracy per length with
  its bootstrap interval, as a table and as ``context_sweep.png``;
- ``accuracy.png``, ``margins.png``, and for syn tasks ``accuracy_by_codons_changed.png``
  (``plots.py``); each figure only where its data is;
- for labelled variant tasks, the ranking metrics with intervals, per stratum and paired
  (``variant_metrics.py``), and ``roc.png``, ``precision_recall.png``; for variant tasks with a
  ``consequence`` column, the class ladder (table and ``class_ladder.png``); for variant tasks
  with quantitative labels, Spearman's and Pearson's correlations with intervals, by chromosome
  and by stratum (``variant_correlations.py``), and ``score_against_label.png``;
- for labelled variant tasks with a stratum (``consequence``, ``--by``), the AUROC with the
  stratum held fixed, the share of it the stratum explains and the gain over the stratum
  (``confounders.py``);
- for variant tasks with a ``match_group`` column, match-group accuracy (strict, or TraitGym's
  rule under its convention) and the
  matched-pair pairwise accuracy, Global and Macro Avg over consequences (``matched.py``);
- for variant tasks with an ``assay`` column, each metric per assay and subset and the macro
  average over assays, gated (``assays.py``; their variants are left out of the pooled tables);
- for variant runs with ``rc_average``, how well the two strands agree (``strands.py``);
- where the pairs carry novelty columns (``annotate novelty``), accuracy by novelty and the
  membership floor (``novelty.py``);
- where a floor is among the runs (a ``kmer-markov`` run, a ``random_init=true`` run, or
  ``--floor``), each model read against it (``floors.py``);
- for footprint tasks (``build footprints``), DART-Eval's per-motif accuracy, Wilcoxon p and
  accuracy vs background, the dose-response, ``footprints.csv`` and ``footprints.png``
  (``kinds/footprints/section.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from perturbation_bench.families import DIRECTED_SCALES
from perturbation_bench.report.clusters import assign_clusters, cluster_column
from perturbation_bench.report.consistency import check_same_data, check_shards
from perturbation_bench.report.export import export_traitgym
from perturbation_bench.report.floors import check_floors_apply
from perturbation_bench.report.markdown import to_markdown
from perturbation_bench.report.output_folder import (
    MANIFEST,
    check_output_folder,
    make_folder,
    record_written,
    remove_previous,
    replace_output,
)
from perturbation_bench.report.runs import collect_pairs
from perturbation_bench.report.sections import SECTIONS, Inputs


def make_report(
    run_folders,
    out: str | Path,
    by: list[str] = (),
    seed: int = 0,
    n_boot: int = 2000,
    features=(),
    allow_different_data: bool = False,
    names: dict[str, str] | None = None,
    se_boot: int = 100,
    se_chrom_boot: int = 1000,
    floors=(),
    min_subset: int = 30,
    export: tuple[str, str] | None = None,
    cluster: str = "auto",
) -> dict:
    """Write everything listed in the module docstring to ``out``; return the report dict.

    ``features``: ``(chrom, start0, end0)`` CDS exons to draw under the saturation maps;
    ``allow_different_data``: compare runs that scored different data for a task; ``names``:
    ``folder -> label`` naming runs (``run_names.py`` names the others); ``se_boot``,
    ``se_chrom_boot``: resamples of the variant metrics' standard errors (``variant_metrics.py``);
    ``floors``: run folders read as floors besides the ``kmer-markov`` and ``random_init`` runs
    (``floors.py``); ``min_subset``: fewest pairs of a subset in the matched-group Macro Avg
    (``matched.py``); ``export``: ``(format, folder)`` to write the variant runs in an upstream's
    layout as well (``export.py``); ``cluster``: which pairs the intervals resample together,
    ``auto``, ``overlap``, ``none`` or a column (``clusters.py``).
    """
    if export is not None:  # refused before any work (output_folder.py)
        check_output_folder(export[1], f"--export {export[0]}")
    out = make_folder(out, "--out")
    remove_previous(out)  # an earlier report's files: none of them stays beside this one
    kept = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    provenance: dict = {}
    read = list(dict.fromkeys([*by, *filter(None, [cluster_column(cluster)])]))
    pairs, notes = collect_pairs(run_folders, read, provenance, names, list(floors))
    # one order whatever the files' (shards, reruns): the seeded bootstraps then repeat exactly
    pairs = pairs.sort_values(["task", "model", "pair_id", "ll_original"], kind="stable")
    pairs = assign_clusters(pairs.reset_index(drop=True), cluster)
    check_floors_apply(pairs, floors)
    notes += check_shards(pairs, provenance)
    notes += check_same_data(pairs, allow_different_data)
    _check_strata(pairs, by)
    pairs.to_parquet(out / "pairs.parquet", index=False)
    inputs = Inputs(
        pairs=pairs,
        preferences=pairs[pairs["scale"].isin(DIRECTED_SCALES)],
        by=list(by),
        seed=seed,
        n_boot=n_boot,
        se_boot=se_boot,
        se_chrom_boot=se_chrom_boot,
        min_subset=min_subset,
    )
    report = {
        "runs": [str(f) for f in run_folders],
        "seed": seed,
        "bootstrap_resamples": n_boot,
        "cluster": cluster,
    }
    for section in SECTIONS:
        tables = section.tables(inputs)
        place = report.setdefault(section.under, {}) if section.under else report
        place.update(zip(section.keys, tables, strict=True))
        notes += section.notes(*tables)
    report["notes"] = notes
    report["provenance"] = provenance
    if export is not None:
        written = replace_output(
            export[1],
            lambda folder: export_traitgym(pairs, report["variants"]["summary"], folder),
        )
        report["exported"] = [str(p) for p in written]
    report["saturation_maps"] = saturation_maps(pairs, out, features)
    report["figures"] = {}
    for section in SECTIONS:
        report["figures"].update(section.draw(out, inputs, *section.stored(report)))
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(to_markdown(report))
    written = [p for p in out.rglob("*") if p.is_file() and kept.get(p) != p.stat().st_mtime_ns]
    record_written(out, [p for p in written if p.name != MANIFEST])
    return report


def saturation_maps(pairs, out: Path, features=()) -> list[str]:
    """Draw ``saturation_<k>.png/.svg`` for every region of the saturation tasks; their names."""
    from perturbation_bench.report import variant_plots

    if "region" not in pairs.columns or pairs["region"].isna().all():
        return []
    names = []
    for k, (region, rows) in enumerate(pairs[pairs["region"].notna()].groupby("region", sort=True)):
        variant_plots.saturation_map(rows, region, out / f"saturation_{k + 1}.png", features)
        names.append(f"saturation_{k + 1}.png")
    return names


def _check_strata(pairs, by) -> None:
    """Refuse a ``--by`` column that no sample of the runs holds (a misspelt name, or a column the
    pair files lack), naming the nearest of the columns they hold (:func:`held_columns`)."""
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.wording import did_you_mean

    for column in by:
        if pairs[column].isna().all():
            held = held_columns(pairs)
            raise OptionsError(
                f"--by {column}: no sample of these runs holds this column"
                f"{did_you_mean(column, held)}; a --by column is a column of the pair files the "
                "runs scored"
            )


def held_columns(pairs) -> list[str]:
    """The columns a ``--by`` could name: those of the report's pairs that hold a value, and the
    document fields of each samples file's first sample."""
    from perturbation_bench.report.runs import find_run
    from perturbation_bench.report.samples import first_doc_fields

    held = [name for name in pairs.columns if pairs[name].notna().any()]
    for folder in pairs["run"].unique():
        for path in find_run(folder).samples.values():
            held += first_doc_fields(path)
    return sorted(set(held))
