"""The footprint task (``perturbation_footprints``): a config built by ``perturbation-bench build
footprints`` scored as DART-Eval's motif footprinting (``kinds/footprints/rules.py``).

Each document asks for its three comparisons (motif against control, each against the raw
background; ``tasks/document_requests.py``). Per document, lm-eval gets the pair metrics of every
task on the first (``pairwise_acc`` strict, ``tie_rate``, ``margin``), ``background_acc``
(DART-Eval's accuracy vs background, 0 or 1) and, for the aggregations over motifs, the row's
:class:`~perturbation_bench.kinds.footprints.rules.FootprintRow` with the task's ``ties`` rule::

    motif_acc            mean over motif-doses of the per-motif accuracy (ties rule)
    motifs_significant   share of motif-doses with Wilcoxon p < 0.05 (one-sided, greater)
    copies_spearman      mean over motifs of rho(margin, copies)     where copies vary
    spacing_spearman     mean over motifs of rho(margin, spacing)    where spacing varies

``--metadata '{"ties": "correct"}'`` counts a tie as right in ``motif_acc`` (DART-Eval's
number); ``pairwise_acc`` stays strict, as in every task.

Under ``scoring=embedding`` (``models/embedding_scoring.py``) each comparison's score is the
distance between its two windows' embeddings, so ``background_acc`` is DART-Eval's embedding
footprint accuracy, the share of rows with ``d(motif, background) > d(control, background)``
(strict), and it is the only metric reported: the others read a likelihood's direction.

The aggregations run once on rank 0 over every rank's documents, so one and several processes
give the same value.
"""

from __future__ import annotations

import pyarrow.parquet as pq

from perturbation_bench.active_models import active_model, active_scoring
from perturbation_bench.errors import install_excepthook
from perturbation_bench.families import scoring_of
from perturbation_bench.kinds.footprints.rules import (
    DOSE_AXES,
    SIGNIFICANCE,
    FootprintRow,
    beats_background,
    dose_of,
    dose_spearman,
    mean_of,
    motif_doses,
)
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.kinds import KIND
from perturbation_bench.tasks.loading import check_kind_columns, pair_documents, task_files
from perturbation_bench.tasks.metrics import pair_metrics
from perturbation_bench.tasks.options import parse_options
from perturbation_bench.tasks.pairing import compared_pairs


def load_footprint_pairs(config_name=None, task_context_bp=None, task_data_dir=None, **metadata):
    """The task's ``custom_dataset``: the pairs of a footprint config, with the ``ties`` rule
    and the dose columns that vary (read from the files, the same on every process) in the
    task's settings."""
    install_excepthook()
    options = parse_options(metadata)
    config_name, files = task_files(options, config_name, task_data_dir)
    check_kind_columns(KIND["footprints"], files)
    values = {axis: set() for axis in DOSE_AXES}
    for path in files:
        table = pq.read_table(path, columns=list(DOSE_AXES))
        for axis in DOSE_AXES:
            values[axis].update(table[axis].unique().to_pylist())
    axes = [axis for axis in DOSE_AXES if len(values[axis]) > 1]
    return pair_documents(
        options,
        config_name,
        files,
        task_context_bp,
        metadata,
        kind="footprints",
        ties=options.settings.ties,
        dose_axes=axes,
    )


def process_results(doc, results) -> dict:
    """The metrics of one footprint document (module docstring)."""
    motif_pair, motif_background, control_background = compared_pairs(doc, results)
    metrics = pair_metrics(*motif_pair)
    motif_margin = motif_background.original - motif_background.perturbed
    control_margin = control_background.original - control_background.perturbed
    metrics["background_acc"] = float(beats_background(motif_margin, control_margin))
    if not scoring_of(active_model(), active_scoring()).directed:  # the background comparison alone
        return {"background_acc": metrics["background_acc"]}
    settings = doc[TASK]
    row = FootprintRow(
        doc["motif"],
        *dose_of(doc),
        motif_pair.original,
        motif_pair.perturbed,
        motif_margin,
        control_margin,
    )
    item = (tuple(row), settings.ties)
    metrics["motif_acc"] = metrics["motifs_significant"] = item
    for axis in settings.dose_axes or ():
        metrics[f"{axis}_spearman"] = item
    return metrics


def _rows(items) -> tuple[list[FootprintRow], str]:
    return [FootprintRow(*row) for row, _ in items], items[0][1]


def motif_acc(items) -> float:
    """lm-eval aggregation: the mean over motif-doses of the per-motif accuracy."""
    doses = motif_doses(*_rows(items))
    return sum(dose.accuracy for dose in doses) / len(doses)


def motifs_significant(items) -> float:
    """lm-eval aggregation: the share of motif-doses with Wilcoxon p < ``SIGNIFICANCE``."""
    doses = motif_doses(*_rows(items))
    return sum(dose.wilcoxon_p < SIGNIFICANCE for dose in doses) / len(doses)


def copies_spearman(items) -> float:
    """lm-eval aggregation: the mean over motifs of rho(margin, copies)."""
    return mean_of(dose_spearman(_rows(items)[0], "copies").values())


def spacing_spearman(items) -> float:
    """lm-eval aggregation: the mean over motifs of rho(margin, spacing)."""
    return mean_of(dose_spearman(_rows(items)[0], "spacing").values())
