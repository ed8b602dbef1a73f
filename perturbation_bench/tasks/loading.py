"""Loading a task's pairs: lm-eval's ``custom_dataset`` of every perturbation-bench task.

:func:`load_pairs` is called by lm-eval with the run's metadata (``--metadata`` merged with
``--model_args``) and the task's ``dataset_kwargs``. It validates the options once, reads and
checks the parquet files in one pass (``tasks/documents.py``: the documents keep each window once,
the perturbed copy as its changed span, and a process holds only the pairs it scores), and gives
every document a reference to the task's one :class:`~perturbation_bench.pairs.settings.TaskSettings`
(formatting, crop length, data identity, shard), which ``tasks/document_requests.py`` reads to
build the requests. The sequences are kept exactly as published (logged samples and reports
match pairs by content).

``--metadata '{"shard": "I/N"}'`` scores the pairs whose 0-based row (in file order, over the
config's files) is ``I`` modulo ``N``: the N shards are disjoint and together hold every pair,
whatever N; ``perturbation-bench report`` merges them.

The context-length tasks (``perturbation_<config>_<L>bp``) fix ``L`` in their YAML's
``dataset_kwargs`` (``task_context_bp``); ``--metadata '{"context_bp": L}'`` crops any other task.
A built config's own task (``tasks/task_yaml.py``) fixes its folder the same way (``task_data_dir``,
which wins over a ``data_dir`` option meant for the other tasks of the run).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow.parquet as pq

from perturbation_bench.active_models import active_model, active_scoring, document_share
from perturbation_bench.errors import OptionsError, install_excepthook
from perturbation_bench.pairs.applicability import applicable, note
from perturbation_bench.pairs.conventions import check_model
from perturbation_bench.pairs.fields import ORIGINAL, TASK, TOKEN_COUNTS
from perturbation_bench.pairs.identity import data_identity
from perturbation_bench.pairs.kinds import KINDS, Kind
from perturbation_bench.pairs.settings import KIND_SETTINGS, TaskSettings
from perturbation_bench.paths import demo_data_dir
from perturbation_bench.tasks.document_requests import doc_to_sequences
from perturbation_bench.tasks.documents import TaskDocuments, read_documents
from perturbation_bench.tasks.options import TaskOptions, parse_options
from perturbation_bench.tasks.sources import (
    config_folders,
    hub_parquet_files,
    local_parquet_files,
)
from perturbation_bench.tasks.task_yaml import task_name
from perturbation_bench.tasks.token_counts import scored_counter
from perturbation_bench.wording import agree, counted

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply


def load_pairs(
    config_name: str | None = None,
    task_context_bp: int | None = None,
    task_data_dir: str | None = None,
    **metadata,
) -> dict[str, TaskDocuments]:
    """Return ``{"test": documents}`` with every pair of ``config_name`` (module docstring)."""
    install_excepthook()
    options = parse_options(metadata)
    config_name, files = task_files(options, config_name, task_data_dir)
    return pair_documents(options, config_name, files, task_context_bp, metadata)


def task_files(
    options: TaskOptions, config_name: str | None, task_data_dir: str | None
) -> tuple[str, list[Path]]:
    """The config a task reads and its parquet files, local or downloaded from the hub.

    ``config_name`` comes from the task YAML; the ``perturbation_custom`` task has none and takes
    it from the ``config`` option instead, for datasets built with ``perturbation-bench build``.
    ``task_data_dir`` comes from the YAML of a built config's own task.
    """
    if config_name is None:
        if not (options.config and options.data_dir):
            found = ""
            if options.data_dir:
                found = f"; configs in {options.data_dir}: "
                found += ", ".join(config_folders(options.data_dir)) or "none"
            tasks = list(dict.fromkeys(kind.task for kind in KINDS))
            raise OptionsError(
                f"{', '.join(tasks[:-1])} and {tasks[-1]} need the config and its folder: "
                '--metadata \'{"config": "syn_zebrafish", "data_dir": "DIR"}\' '
                f"(DIR/syn_zebrafish/*.parquet){found}"
            )
        config_name = options.config
    elif options.config not in (None, config_name):
        takers = list(dict.fromkeys(kind.task for kind in KINDS))
        raise OptionsError(
            f"the config option selects the data of {', '.join(takers[:-1])} and {takers[-1]} "
            f"only; the task of {config_name!r} reads its own (lm-eval hands every task of a run "
            "the same options: run "
            f"{options.config!r} apart, or as its built task {task_name(options.config)} with "
            "--include_path set to the folder it was built in)"
        )
    if task_data_dir:
        return config_name, local_parquet_files(task_data_dir, config_name)
    if options.data_dir == "demo":
        return config_name, local_parquet_files(demo_data_dir(), config_name)
    if options.data_dir:
        return config_name, local_parquet_files(options.data_dir, config_name)
    return config_name, hub_parquet_files(config_name, options.dataset_revision)


def pair_documents(
    options: TaskOptions,
    config_name: str,
    files: list[Path],
    task_context_bp: int | None,
    metadata: dict,
    kind: str | None = None,
    **kind_settings,
) -> dict[str, TaskDocuments]:
    """:func:`load_pairs` of ``files``: every document holds the options' settings completed with
    the data's identity, the crop length (``task_context_bp`` comes from the YAML of a
    context-length task) and the settings a task of ``kind`` (None: a pair task) fills in
    (``kind_settings``: the variant task's ``score``, ``labels`` and ``min_per_class``, the
    footprint task's ``ties`` and ``dose_axes``); a setting that does not apply to the task is
    None (``pairs/applicability.py``), and so is a ``context_bp`` that crops none of its
    windows."""
    settings = options.settings
    if task_context_bp is not None and settings.context_bp is not None:
        raise OptionsError(
            f"this task is fixed at {task_context_bp} bp; the context_bp option crops the "
            "8,192 bp tasks (perturbation_syn_human, ...) to another length"
        )
    identity = data_identity(files)
    settings = settings.replaced(
        data=identity,
        config=config_name,
        context_bp=task_context_bp or settings.context_bp,
        **{name: kind_settings.get(name) for name in KIND_SETTINGS},
    )
    settings = applicable(config_name, kind, settings, metadata)
    check_model(active_model(), settings, active_scoring())
    context_bp, formatting = settings.context_bp, settings.formatting
    share = document_share() or (0, 1)
    reading = read_documents(files, settings, options.shard, share)
    pairs, held = len(reading.documents), reading.documents.held
    if task_context_bp is None and settings.context_bp is not None:
        settings = _crop_applies(config_name, settings, held)
        context_bp = settings.context_bp
    if options.shard is not None:
        index, count = options.shard
        if not pairs:
            raise OptionsError(
                f"shard {index}/{count} of {config_name} holds no pair: the config has "
                f"{reading.total_rows} pairs; use at most {reading.total_rows} shards"
            )
        log.info(
            "perturbation-bench %s: shard %d/%d, %d of %d pairs (rows %d, %d + %d, ...)",
            config_name,
            index,
            count,
            pairs,
            reading.total_rows,
            index,
            index,
            count,
        )
    log.info(
        "perturbation-bench %s: %d pairs from %s (%s); %s",
        config_name,
        pairs,
        files[0].parent,
        identity,
        settings.describe(),
    )
    rank, world_size = share
    if world_size > 1:
        log.info(
            "perturbation-bench %s: this process scores %d of the %d pairs and holds only "
            "those (and the first, which lm-eval reads to check the task)",
            config_name,
            len(range(rank, pairs, world_size)),
            pairs,
        )
    if reading.lower_case_rows:
        log.info(
            "perturbation-bench: %d of %s %s lower-case (soft-masked) bases; they are "
            "upper-cased before tokenization",
            reading.lower_case_rows,
            counted(len(held), "pair"),
            agree(reading.lower_case_rows, "has", "have"),
        )
    if context_bp is not None:
        log.info(
            "perturbation-bench %s: pairs cropped to %d bp around their changes; %d of %s "
            "%s a span longer than that and %s only its centre",
            config_name,
            context_bp,
            reading.overflowing_crops,
            counted(len(held), "pair"),
            agree(reading.overflowing_crops, "changes", "change"),
            agree(reading.overflowing_crops, "keeps", "keep"),
        )
    if settings.reduction == "mean":
        _add_token_counts(held, formatting.dna_prefix, metadata, settings.bare_start)
    if formatting.dna_prefix and "add_bos_token" not in metadata and active_model() is None:
        log.warning(
            "perturbation-bench: the DNA prefix %r is the start of every sequence, as in the "
            "reference scorer; with --model hf and a tokenizer that adds a BOS token, pass "
            "add_bos_token=False in --model_args, or lm-eval scores after BOS + prefix "
            "(--model dna-hf needs nothing: it defaults to that)",
            formatting.dna_prefix,
        )
    return {"test": reading.documents}


def check_kind_columns(kind: Kind, files: list[Path]) -> None:
    """Refuse a file without a column ``kind``'s task reads (``pairs/kinds.py``), pointing a
    file of pairs to ``perturbation_custom``.

    Raises:
        OptionsError: naming the file, the columns it lacks and the build that writes them.
    """
    for path in files:
        missing = [name for name in kind.document.columns if name not in pq.read_schema(path).names]
        if missing:
            pairs = kind.document.requests is None  # perturbation_custom reads its pairs
            raise OptionsError(
                f"{path}: {kind.task} reads configs built by 'perturbation-bench build "
                f"{kind.name}'; this file has no {', '.join(missing)} column(s)"
                + (" (run perturbation_custom for it)" if pairs else "")
            )


def _crop_applies(config_name: str, settings: TaskSettings, held: list[dict]) -> TaskSettings:
    """The settings of ``held`` documents, ``context_bp`` None (not recorded, said once) where
    the option crops none of them: no window is longer (``pairs/applicability.py``)."""
    longest = max((len(doc[ORIGINAL]) for doc in held), default=0)
    crops = longest > settings.context_bp
    note("context_bp", config_name, crops)
    if crops:
        return settings
    settings = settings.replaced(context_bp=None)
    for doc in held:
        doc[TASK] = settings
    return settings


def _add_token_counts(documents: list[dict], dna_prefix: str, metadata: dict, bare: bool) -> None:
    """Scored tokens per continuation of every pair, with the run's tokenizer (``token_counts``);
    ``bare``: the sequences start with no token before them (``start_token: none``)."""
    from tqdm import tqdm

    count = scored_counter(metadata, active_model())
    for doc in tqdm(documents, desc="counting tokens (reduction: mean)"):
        doc[TOKEN_COUNTS] = [count(dna_prefix, s, bare) for s in doc_to_sequences(doc)]
