"""The recall task (``perturbation_recall``): a config built by ``perturbation-bench build
recall``, each row scored as two loglikelihood requests (``rules.py``)::

    (dna_prefix + context_repeat,  target)        LL(A | repeat)
    (dna_prefix + context_control, target)        LL(A | control)

lm-eval asks them as a task of several inputs (as Winogrande's): the contexts are the choices,
the target the continuation, so a model scores only the target's tokens after the whole context.
A document's pair is its target twice (``shape.py``): lm-eval's pair filter joins the two
answers, and per document the task reports::

    copy_advantage   (LL(A | repeat) - LL(A | control)) / target_bp     nats per base
    pairwise_acc     1[LL(A | repeat) > LL(A | control)]                 strict: a tie is wrong
    tie_rate         1[LL(A | repeat) == LL(A | control)]
    margin           LL(A | repeat) - LL(A | control)                     nats

each averaged over the documents (the report gives each distance's mean and its bootstrap
interval, ``section.py``). A context is never cropped: a model whose positions do not hold a
window refuses it (``dna-hf`` and ``dna-mlm``: ``pairs/requests.check_whole``), so no distance is
reported past the model's positions.

The loader checks each file as the core checks any (``pairs/files.py``: the contexts of one
length per row, letters ACGTN) and refuses, naming the file and the row, a row that holds a
letter other than A/C/G/T or whose contexts or target are not whole k-mers of the run's preset (rebuild with ``--align``
its k-mer size); and the settings a context and a continuation cannot take: ``rc_average``,
overlapping k-mers, ``context_bp`` (a crop), ``scoring=embedding`` and ``scoring=pll``.
"""

from __future__ import annotations

import re

from perturbation_bench.active_models import active_model, active_scoring
from perturbation_bench.errors import DataValidationError, OptionsError, install_excepthook
from perturbation_bench.kinds.recall.rules import copy_advantage as advantage
from perturbation_bench.kinds.recall.shape import CONTEXTS, TARGET
from perturbation_bench.pairs.applicability import applicable
from perturbation_bench.pairs.conventions import check_model
from perturbation_bench.pairs.fields import CHANGE, CHANGE_START, ORIGINAL, SOFT_MASKED, TASK
from perturbation_bench.pairs.files import read_pair_file
from perturbation_bench.pairs.identity import data_identity
from perturbation_bench.pairs.kinds import KIND
from perturbation_bench.pairs.settings import KIND_SETTINGS
from perturbation_bench.tasks.documents import TaskDocuments
from perturbation_bench.tasks.loading import check_kind_columns, task_files
from perturbation_bench.tasks.metrics import pair_metrics
from perturbation_bench.tasks.options import parse_options
from perturbation_bench.tasks.pairing import compared_pairs

_NOT_ACGT = re.compile("[^ACGTacgt]")


def load_recall(config_name=None, task_context_bp=None, task_data_dir=None, **metadata):
    """The task's ``custom_dataset``: ``{"test": documents}``, one per row (module docstring),
    each holding the task's settings; with ``shard: I/N``, the rows ``I`` modulo ``N``."""
    install_excepthook()
    options = parse_options(metadata)
    config_name, files = task_files(options, config_name, task_data_dir)
    check_kind_columns(KIND["recall"], files)
    settings = options.settings.replaced(
        data=data_identity(files), config=config_name, **dict.fromkeys(KIND_SETTINGS)
    )
    settings = applicable(config_name, "recall", settings, metadata)
    check_model(active_model(), settings, active_scoring())
    _refuse_settings(settings, task_context_bp)
    kmer = settings.formatting.kmer_size
    rows = [(path, row) for path in files for row in read_pair_file(path, kmer).to_pylist()]
    if options.shard is not None:
        index, count = options.shard
        rows = rows[index::count]
    held = {}
    for position, (path, row) in enumerate(rows):
        check_row(path, position, row, kmer)
        held[position] = {
            **row,
            ORIGINAL: row[TARGET],
            CHANGE_START: 0,
            CHANGE: "",
            SOFT_MASKED: True,
            TASK: settings,
        }
    features = dict.fromkeys([*(held[0] if held else {})])
    return {"test": TaskDocuments(held, len(held), features)}


def _refuse_settings(settings, task_context_bp) -> None:
    """Refuse what a context and a continuation cannot take (module docstring)."""
    formatting = settings.formatting
    refused = [
        (formatting.rc_average, "rc_average (a context and its target have no reverse pair)"),
        (formatting.kmer_overlap, "overlapping k-mers (the preset's text of a context)"),
        (task_context_bp or settings.context_bp, "context_bp (a recall window is never cropped)"),
        (active_scoring() == "embedding", "scoring=embedding (the task reads log-likelihoods)"),
        (active_scoring() == "pll", "scoring=pll (a pseudo-log-likelihood reads a whole window)"),
    ]
    for taken, what in refused:
        if taken:
            raise OptionsError(f"perturbation_recall does not take {what}")


def check_row(path, position: int, row: dict, kmer: int) -> None:
    """Refuse a row the task cannot score as it is (module docstring).

    Raises:
        DataValidationError: naming the file, the row and the reason.
    """
    contexts = [row[name] for name in CONTEXTS]
    reasons = [
        (any(_NOT_ACGT.search(s) for s in (*contexts, row[TARGET])), "a letter other than ACGT"),
        (
            len(contexts[0]) % kmer or len(row[TARGET]) % kmer,
            f"a context or the target is not whole {kmer}-mers, as the preset reads them "
            f"(rebuild with --align {kmer})",
        ),
    ]
    for failed, reason in reasons:
        if failed:
            raise DataValidationError(f"{path}: row {position}: {reason}")


def process_results(doc, results) -> dict[str, float]:
    """The metrics of one recall document (module docstring)."""
    pair = compared_pairs(doc, results)[0]
    metrics = pair_metrics(pair.original, pair.perturbed)
    metrics["copy_advantage"] = advantage(pair.original, pair.perturbed, len(doc[TARGET]))
    return metrics
