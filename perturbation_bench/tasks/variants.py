"""The variant task (``perturbation_variants``): a config built by ``perturbation-bench build
variants`` scored as pairs (reference window, alternate window), with TraitGym's metrics.

Per variant, the pair metrics of every task (``pairwise_acc``, ``tie_rate``, ``margin = LL(ref
window) - LL(alt window)``); where the data has a ``label`` column, also the metrics of
:mod:`perturbation_bench.pairs.ranking` on the score chosen with ``--metadata '{"score":
"llr"|"abs_llr"}'`` (default ``llr``): for binary labels (a bool column) the ranking metrics
``auroc``, ``auprc``, ``auroc_by_chrom``, ``auprc_by_chrom``; for quantitative labels (a float
column, ``formats/variant_files.py``) the correlations ``spearman`` and ``pearson``. The kind is the
column's type, the same on every process, and is kept in the task's settings (``labels``).
Variants whose label is null take part in the pair metrics only. Under ``scoring=embedding`` the
score is a distance, which has no direction: the task reports no pair metric, only the ranking
metrics and correlations of that distance.

Under a named convention (``pairs/conventions.py``) whose edge rule differs from the one the data
was built with (``window_edge``; ``shift`` for data built before that column), the task warns
before scoring, with the number of variants at a chromosome end, where the rules differ.

The ranking metrics aggregate over the whole task: each document hands lm-eval
``(score, label, chrom, one_class_chromosomes)`` and the aggregation (``variant_aggregations.py``),
run once on rank 0 after lm-eval has gathered every rank's documents, computes the metric over all
of them, so one and several processes give the same value.
"""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.parquet as pq

from perturbation_bench.active_models import active_model, active_scoring
from perturbation_bench.arguments import load_tokenizer, model_source, single_base_token_ids
from perturbation_bench.dna import BASES
from perturbation_bench.errors import OptionsError, install_excepthook
from perturbation_bench.families import reads_bases
from perturbation_bench.pairs.assays import oriented
from perturbation_bench.pairs.calibration import (
    calibration_offsets,
    cell_means,
    cell_of,
)
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.pairs.fields import CALIBRATION, CHANGE, CHANGE_START, ORIGINAL, TASK
from perturbation_bench.pairs.kinds import KIND
from perturbation_bench.tasks.loading import check_kind_columns, pair_documents, task_files
from perturbation_bench.tasks.options import parse_options
from perturbation_bench.tasks.pairing import compared_pairs
from perturbation_bench.tasks.pairing import process_results as pair_results
from perturbation_bench.tasks.variant_aggregations import (
    ASSAY_CORRELATION_METRICS,
    ASSAY_RANKING_METRICS,
    CORRELATION_METRICS,
    RANKING_METRICS,
)

log = logging.getLogger(f"lm_eval.{__name__}")


def load_variant_pairs(config_name=None, task_context_bp=None, task_data_dir=None, **metadata):
    """The task's ``custom_dataset``: :func:`~perturbation_bench.tasks.loading.load_pairs` of a
    variant config, with the score option and the label kind in the task's settings for
    :func:`process_results`."""
    install_excepthook()
    options = parse_options(metadata)
    config_name, files = task_files(options, config_name, task_data_dir)
    check_kind_columns(KIND["variants"], files)
    labels = label_kind(files)
    dataset = pair_documents(
        options,
        config_name,
        files,
        task_context_bp,
        metadata,
        kind="variants",
        score=options.settings.score,
        labels=labels,
        min_per_class=options.settings.min_per_class if labels is not None else None,
        calibration=options.settings.calibration,
    )
    documents = dataset["test"]
    score = options.settings.variant_score
    if score.reading.by_model and not reads_bases(active_model()):
        tokenizer = load_tokenizer(metadata)
        if tokenizer is not None:
            single_base_token_ids(tokenizer)  # before any weight is read, under check
    if score.reading.single_base:
        _check_single_bases(config_name, options.settings.score, documents.held)
    if score.base is not None:
        _calibrate(documents.held, options.settings, metadata)
    if labels is not None:
        held = documents.held
        labelled = sum(doc["label"] is not None for doc in held)
        log.info(
            "perturbation-bench variants: %d of %d variants labelled (%s); score %s",
            labelled,
            len(held),
            labels,
            options.settings.score,
        )
    if options.settings.convention:
        _check_edge(CONVENTIONS[options.settings.convention], documents.held)
    return dataset


def _calibrate(held: list[dict], settings, metadata: dict) -> None:
    """Give each variant its cell's mean (``fields.CALIBRATION``) from the calibration table,
    the rows of this run's model, strands and window (``pairs/calibration.py``)."""
    if settings.calibration is None:
        raise OptionsError(
            f"score {settings.score} subtracts the mean of neutral sites of each variant's "
            "context: name their scored run or its table, --metadata "
            '\'{"calibration": "CAL_RUN"}\' or \'{"calibration": "REPORT/calibration.tsv"}\''
        )
    source = model_source(metadata)
    if source is None:
        raise OptionsError(
            f"score {settings.score}: the model has no pretrained (or fasta) to match the calibration table by"
        )
    window = settings.context_bp or (len(held[0][ORIGINAL]) if held else 0)
    from perturbation_bench.report.calibration import read_calibration  # a run's table

    table = read_calibration(settings.calibration)
    means = cell_means(
        table, settings.calibration, settings.score, source, settings.rc_average, window
    )
    cells = [cell_of(doc[ORIGINAL], doc[CHANGE_START], doc[CHANGE]) for doc in held]

    offsets = calibration_offsets(
        cells, means, settings.calibration, lambda index: _variant(held[index])
    )
    for doc, offset in zip(held, offsets, strict=True):
        doc[CALIBRATION] = offset


def _variant(doc: dict) -> str:
    """A variant as messages name it: ``chrom:pos ref>alt``."""
    return f"{doc['chrom']}:{doc['pos']} {doc['ref']}>{doc['alt']}"


def _check_single_bases(config_name: str, score: str, held: list[dict]) -> None:
    """Refuse a variant that is not one base of ACGT changed to another: a four-allele score
    reads the four alleles of one site (``pairs/four_allele.py``), jsd the bases after it."""
    broken = [
        doc
        for doc in held
        if len(doc[CHANGE]) != 1
        or doc[CHANGE].upper() not in BASES
        or doc[ORIGINAL][doc[CHANGE_START]].upper() not in BASES
    ]
    if broken:
        first = broken[0]
        raise OptionsError(
            f"score {score} reads single-base variants; {len(broken)} of "
            f"{len(held)} variants of {config_name} are not one (first: {_variant(first)}); "
            "build a config of single-base variants for it, or score these with llr"
        )


def label_kind(files) -> str | None:
    """``quantitative`` where the files' ``label`` column is float (``formats/variant_files.py``),
    ``binary`` for any other label column, None without one; read from the files' schemas, so
    every process finds the same kind."""
    types = {
        schema.field("label").type
        for schema in map(pq.read_schema, files)
        if "label" in schema.names
    }
    if not types:
        return None
    return "quantitative" if pa.float64() in types else "binary"


def _check_edge(convention, held: list[dict]) -> None:
    """Warn when the data's windows were cut by another edge rule than the convention's."""
    edges = {doc.get("window_edge") or "shift" for doc in held}
    at_ends = sum(bool(doc.get("is_clamped")) for doc in held)
    if edges != {convention.edge} and at_ends:
        log.warning(
            "perturbation-bench variants: convention %r cuts windows at chromosome ends by %r, "
            "this data by %s; %d of %d variants lie at a chromosome end and score otherwise than "
            "upstream (rebuild with 'perturbation-bench build variants --edge %s')",
            convention.name,
            convention.edge,
            ", ".join(map(repr, sorted(edges))),
            at_ends,
            len(held),
            convention.edge,
        )


def process_results(doc, results) -> dict:
    """The pair metrics, and for each ranking or correlation metric where the data has labels
    ``(score, label, chrom, one_class_chromosomes)``, or ``(assay, label, score, min_per_class)``
    for its per-assay form where the data has an ``assay`` column (module docstring); a
    quantitative label oriented by its declared direction (``pairs/assays.py``)."""
    metrics, pairs = pair_results(doc, results), compared_pairs(doc, results)
    if active_scoring() == "embedding" or doc[TASK].reading.by_model:
        metrics = {}  # a distance, a JSD: no direction (module docstring)
    if "label" in doc:
        settings = doc[TASK]
        score = settings.variant_score.value(doc, *pairs)  # its reading's, calibrated or not
        # a NaN score (jsd at a chromosome's last base, named in the model's log) ranks nothing
        label = doc["label"] if score == score else None
        quantitative = settings.labels == "quantitative"
        if quantitative and label is not None:
            label = oriented(label, doc.get("label_direction"))
        if doc.get("assay") is not None:
            item = (doc["assay"], label, score, settings.min_per_class)
            names = ASSAY_CORRELATION_METRICS if quantitative else ASSAY_RANKING_METRICS
        else:
            item = (score, label, doc["chrom"], settings.one_class_chromosomes)
            names = CORRELATION_METRICS if quantitative else RANKING_METRICS
        metrics.update({name: item for name in names})
    return metrics
