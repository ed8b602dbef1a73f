"""The report's sections: one declared list that ``make.py`` computes and ``markdown.py`` writes.

A :class:`Section` declares the runs it reads, the keys it fills in ``report.json`` (under
``under`` where it has one: the variant sections under ``variants``), how it computes them from
the runs' pairs (``tables``), its Markdown (``markdown``, called with its tables in the order of
``keys``), the figures and files it writes (``draw``) and its notes (``notes``). :data:`SECTIONS`
is in the order of ``report.md``; a new section is one entry here and the module that computes
and writes it, as ``bench/`` is one module per benchmark. A kind's section lives in its folder
(``kinds/<kind>/section.py``), above this floor: its entry names that module's functions by
dotted path (:func:`kind_section`), imported when the report first calls them.

Every section reads :class:`Inputs`: all the pairs, and ``preferences``, those of runs that prefer
one window (an embedding distance has no direction: it enters the variant sections only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from perturbation_bench.paths import named
from perturbation_bench.report import (
    assays,
    calibration,
    confounders,
    floors,
    matched,
    novelty,
    strands,
    summaries,
    summary_markdown,
    variant_correlations,
    variant_markdown,
    variant_metrics,
)


@dataclass(frozen=True)
class Inputs:
    """What every section computes from: the pairs and the report's options (``make.py``)."""

    pairs: pd.DataFrame
    preferences: pd.DataFrame
    """The pairs of runs whose margins have a direction (``families.DIRECTED_SCALES``)."""
    by: list[str]
    seed: int
    n_boot: int
    se_boot: int
    se_chrom_boot: int
    min_subset: int


def _no_notes(*tables) -> list[str]:
    return []


def _no_figures(out: Path, inputs: Inputs, *tables) -> dict[str, bool]:
    return {}


@dataclass(frozen=True)
class Section:
    """One section of the report (module docstring)."""

    name: str
    runs: str
    keys: tuple[str, ...]
    tables: Callable[[Inputs], tuple]
    markdown: Callable[..., list[str]]
    under: str | None = None
    draw: Callable[..., dict[str, bool]] = _no_figures
    notes: Callable[..., list[str]] = _no_notes

    def stored(self, report: dict) -> tuple:
        """Its tables as ``report.json`` holds them, in the order of ``keys``."""
        place = report[self.under] if self.under else report
        return tuple(place[key] for key in self.keys)


def kind_section(name: str, runs: str, keys: tuple[str, ...], module: str) -> Section:
    """The section of a kind whose ``module`` (dotted path) defines ``section_tables``,
    ``markdown`` and ``write_files`` (module docstring)."""

    def later(function: str) -> Callable:
        return lambda *args: named(f"{module}:{function}")(*args)

    return Section(
        name, runs, keys, later("section_tables"), later("markdown"), draw=later("write_files")
    )


def _accuracy(inputs: Inputs) -> tuple:
    summary = summaries.summarize(inputs.preferences, inputs.seed, inputs.n_boot)
    return summary, summaries.group_means(summary)


def _draw_accuracy(out: Path, inputs: Inputs, summary, group_mean) -> dict[str, bool]:
    from perturbation_bench.report import plots

    if summary:
        plots.accuracy(summary, out / "accuracy.png")
    plots.margins(inputs.pairs, out / "margins.png")
    return {"accuracy": bool(summary), "margins": True}


def _draw_context_sweep(out: Path, inputs: Inputs, rows) -> dict[str, bool]:
    from perturbation_bench.report import plots

    if rows:
        plots.context_sweep(rows, out / "context_sweep.png")
    return {"context_sweep": bool(rows)}


def _draw_codons(out: Path, inputs: Inputs, rows) -> dict[str, bool]:
    from perturbation_bench.report import plots

    codons = [s for s in rows if s["column"] == "fraction_codons_changed"]
    if codons:
        plots.accuracy_by_codons_changed(codons, out / "accuracy_by_codons_changed.png")
    return {"accuracy_by_codons_changed": bool(codons)}


def _published(inputs: Inputs) -> tuple:
    if not summaries.has_published_config(inputs.pairs["task"].unique()):
        return ({},)
    return ({"source": summaries.PUBLISHED_SOURCE, "rows": summaries.PUBLISHED},)


def _ranking(inputs: Inputs) -> tuple:
    pairs, seed, n_boot = inputs.pairs, inputs.seed, inputs.n_boot
    return (
        variant_metrics.ranking_summary(pairs, seed, n_boot, inputs.se_boot, inputs.se_chrom_boot),
        variant_metrics.ranking_strata(pairs, inputs.by),
        variant_metrics.auprc_differences(pairs, seed, n_boot),
        variant_metrics.class_ladder(inputs.preferences, seed, n_boot),
    )


def _draw_ranking(out: Path, inputs: Inputs, summary, strata, differences, ladder) -> dict:
    from perturbation_bench.report import variant_plots

    if ladder:
        order = sorted({r["consequence"] for r in ladder}, key=variant_metrics.ladder_order)
        variant_plots.class_ladder(ladder, order, out / "class_ladder.png")
    if summary:
        variant_plots.ranking_curves(
            variant_metrics.labelled(inputs.pairs), out / "roc.png", out / "precision_recall.png"
        )
    return {"class_ladder": bool(ladder), "roc": bool(summary), "precision_recall": bool(summary)}


def _draw_correlations(out: Path, inputs: Inputs, summary, strata) -> dict[str, bool]:
    from perturbation_bench.report import variant_plots

    if summary:
        variant_plots.score_against_label(
            variant_correlations.quantitative(inputs.pairs), out / "score_against_label.png"
        )
    return {"score_against_label": bool(summary)}


def _draw_calibration(out: Path, inputs: Inputs, rows) -> dict[str, bool]:
    calibration.write(rows, out)
    return {}


def _assays(inputs: Inputs) -> tuple:
    cells = assays.assay_cells(inputs.pairs, inputs.by)
    return cells, assays.assay_macros(cells)


# fmt: off
SECTIONS = (
    Section("accuracy", "runs that prefer a window", ("summary", "group_mean"), _accuracy,
            summary_markdown.accuracy, draw=_draw_accuracy,
            notes=lambda summary, group_mean: summaries.thin_notes(summary)),
    Section("context sweep", "configs scored at two or more context lengths", ("context_sweep",),
            lambda i: (summaries.context_sweep(i.preferences, i.seed, i.n_boot),),
            summary_markdown.context_sweep, draw=_draw_context_sweep),
    Section("paired comparisons", "tasks two or more models ran", ("comparisons",),
            lambda i: (summaries.model_comparisons(i.preferences, i.seed, i.n_boot),),
            summary_markdown.comparisons),
    Section("strata", "runs that prefer a window", ("strata",),
            lambda i: (summaries.strata(i.preferences, i.by, i.seed, i.n_boot),),
            summary_markdown.strata, draw=_draw_codons),
    Section("published reference", "the published configs", ("published_reference",),
            _published, summary_markdown.published),
    Section("floors", "runs beside a floor", ("paired", "variants"),
            lambda i: (floors.floor_comparisons(i.preferences, i.seed, i.n_boot),
                       floors.floor_variant_comparisons(i.pairs)),
            floors.markdown, under="floors"),
    Section("novelty", "paired tasks whose pairs carry novelty columns (annotate novelty)",
            ("bins", "membership"),
            lambda i: (novelty.novelty_bins(i.preferences, i.seed, i.n_boot),
                       novelty.membership_floor(i.preferences, i.seed, i.n_boot)),
            novelty.markdown, under="novelty"),
    Section("matched groups", "variant tasks with a match_group column", ("matched",),
            lambda i: (matched.matched_metrics(i.pairs, i.by[0] if i.by else "consequence",
                                               i.min_subset),),
            matched.markdown, under="variants"),
    Section("strands", "variant runs with rc_average", ("strands",),
            lambda i: (strands.strand_consistency(i.pairs),), strands.markdown, under="variants"),
    kind_section("footprints", "footprint tasks", ("footprints",),
                 "perturbation_bench.kinds.footprints.section"),
    kind_section("recall", "recall tasks", ("recall",), "perturbation_bench.kinds.recall.section"),
    Section("variant ranking", "variant tasks with labels or a consequence column",
            ("summary", "strata", "auprc_differences", "class_ladder"), _ranking,
            variant_markdown.markdown, under="variants", draw=_draw_ranking,
            notes=lambda summary, *rest: variant_metrics.thin_notes(summary)),
    Section("confounders held fixed", "labelled variant tasks with a stratum column",
            ("confounders",), lambda i: (confounders.confounder_table(i.pairs, i.by, i.seed, i.n_boot),),
            confounders.markdown, under="variants"),
    Section("variant correlations", "variant tasks with quantitative labels",
            ("correlations", "correlation_strata"),
            lambda i: (variant_correlations.correlation_summary(i.pairs, i.seed, i.n_boot),
                       variant_correlations.correlation_strata(i.pairs, i.by)),
            variant_correlations.markdown, under="variants", draw=_draw_correlations),
    Section("variant effect per assay", "variant tasks with an assay column",
            ("assays", "assay_macros"), _assays, assays.markdown, under="variants"),
    Section("calibration", "runs of calibration configs (build calibration)", ("calibration",),
            lambda i: (calibration.calibration_table(i.pairs),), calibration.markdown,
            draw=_draw_calibration),
)
# fmt: on
"""The report's sections, in the order of ``report.md``."""
