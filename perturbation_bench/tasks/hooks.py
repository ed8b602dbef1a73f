"""The functions the task YAMLs in ``lm_eval_tasks/`` name with ``!function``.

:func:`load_pairs` is the tasks' ``custom_dataset``: lm-eval calls it with the run's metadata
(``--metadata`` merged with ``--model_args``) and the task's ``dataset_kwargs``. It validates
the options, reads and checks the parquet files, and adds ``scoring_*`` columns that carry the
formatting (and, for a shorter context, each pair's crop) to :func:`doc_to_context` and
:func:`doc_to_sequences`, so that the documents keep the sequences exactly as published (logged
samples and reports match pairs by content).

``--metadata '{"shard": "I/N"}'`` scores the pairs whose 0-based row (in file order, over the
config's files) is ``I`` modulo ``N``: the N shards are disjoint and together hold every pair,
whatever N; ``perturbation-bench report`` merges them.

The context-length tasks (``perturbation_<config>_<L>bp``) fix ``L`` in their YAML's
``dataset_kwargs`` (``task_context_bp``); ``--metadata '{"context_bp": L}'`` crops any other task.
A built config's own task (``tasks/named.py``) fixes its folder the same way (``task_data_dir``,
which wins over a ``data_dir`` option meant for the other tasks of the run).
"""

from __future__ import annotations

import logging

import datasets
import pyarrow as pa
import pyarrow.compute as pc

from perturbation_bench.active_models import package_model_created
from perturbation_bench.errors import OptionsError, install_excepthook
from perturbation_bench.pair_files import SEQUENCE_COLUMNS, read_pairs
from perturbation_bench.paths import demo_data_dir
from perturbation_bench.tasks.crop import crop_start
from perturbation_bench.tasks.options import Formatting, parse_options
from perturbation_bench.tasks.sources import (
    config_folders,
    hub_parquet_files,
    local_parquet_files,
)
from perturbation_bench.tasks.token_counts import load_tokenizer, scored_tokens

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply

PREFIX_COLUMN = "scoring_prefix"
DATA_COLUMN = "scoring_data"
"""The data's identity, ``sha256:`` of the parquet files' bytes in file-name order (provenance)."""
SHARD_COLUMN = "scoring_shard"
"""``I/N`` of a sharded run, null otherwise (the report merges shards by it)."""
PRESET_COLUMN = "scoring_preset"
"""The preset's name, for messages (the models read these columns as literals)."""
KMER_COLUMN = "scoring_kmer_size"
RC_COLUMN = "scoring_rc_average"
CROP_START_COLUMN = "scoring_crop_start"
CONTEXT_COLUMN = "scoring_context_bp"
"""The crop of each pair (``tasks/crop.py``): its start, and its length (null: the whole window)."""
TOKENS_COLUMN = "scoring_token_counts"
"""With ``reduction: mean``: the number of scored tokens of each continuation, in choice order."""


def load_pairs(
    config_name: str | None = None,
    task_context_bp: int | None = None,
    task_data_dir: str | None = None,
    **metadata,
) -> datasets.DatasetDict:
    """Return ``{"test": Dataset}`` with every pair of ``config_name`` (see the module docstring).

    ``config_name`` comes from the task YAML; the ``perturbation_custom`` task has none and takes
    it from the ``config`` option instead, for datasets built with ``perturbation-bench build``.
    ``task_context_bp`` comes from the YAML of a context-length task, ``task_data_dir`` from
    that of a built config's own task.
    """
    install_excepthook()
    options = parse_options(metadata)
    if task_context_bp is not None and options.context_bp is not None:
        raise OptionsError(
            f"this task is fixed at {task_context_bp} bp; the context_bp option crops the "
            "8,192 bp tasks (perturbation_syn_human, ...) to another length"
        )
    context_bp = task_context_bp or options.context_bp
    if config_name is None:
        if not (options.config and options.data_dir):
            found = ""
            if options.data_dir:
                found = f"; configs in {options.data_dir}: "
                found += ", ".join(config_folders(options.data_dir)) or "none"
            raise OptionsError(
                "perturbation_custom and perturbation_variants need the config and its folder: "
                '--metadata \'{"config": "syn_zebrafish", "data_dir": "DIR"}\' '
                f"(DIR/syn_zebrafish/*.parquet){found}"
            )
        config_name = options.config
    elif options.config not in (None, config_name):
        raise OptionsError(
            f"the config option selects the data of perturbation_custom only; this task reads "
            f"{config_name!r} (run perturbation_custom for {options.config!r})"
        )
    if task_data_dir:
        files = local_parquet_files(task_data_dir, config_name)
    elif options.data_dir == "demo":
        files = local_parquet_files(demo_data_dir(), config_name)
    elif options.data_dir:
        files = local_parquet_files(options.data_dir, config_name)
    else:
        files = hub_parquet_files(config_name, options.dataset_revision)
    table = read_pairs(files, min_length=options.formatting.kmer_size)
    identity = data_identity(files)
    if options.shard is not None:
        index, count = options.shard
        total = table.num_rows
        table = table.take(pa.array(range(index, total, count), pa.int64()))
        if not table.num_rows:
            raise OptionsError(
                f"shard {index}/{count} of {config_name} holds no pair: the config has {total} "
                f"pairs; use at most {total} shards"
            )
        log.info("perturbation-bench %s: shard %d/%d, %d of %d pairs (rows %d, %d + %d, ...)",
                 config_name, index, count, table.num_rows, total, index, index, count)  # fmt: skip
    log.info(
        "perturbation-bench %s: %d pairs from %s (%s); %s",
        config_name,
        table.num_rows,
        files[0].parent,
        identity,
        options.describe(),
    )
    _log_lower_case(table)
    formatting, rows = options.formatting, table.num_rows
    table = (
        table.append_column(PREFIX_COLUMN, pa.array([formatting.dna_prefix] * rows, pa.string()))
        .append_column(PRESET_COLUMN, pa.array([options.preset] * rows, pa.string()))
        .append_column(DATA_COLUMN, pa.array([identity] * rows, pa.string()))
        .append_column(SHARD_COLUMN, pa.array([_shard_text(options.shard)] * rows, pa.string()))
        .append_column(KMER_COLUMN, pa.array([formatting.kmer_size] * rows, pa.int64()))
        .append_column(RC_COLUMN, pa.array([formatting.rc_average] * rows, pa.bool_()))
        .append_column(CROP_START_COLUMN, _crop_starts(table, context_bp, config_name))
        .append_column(CONTEXT_COLUMN, pa.array([context_bp] * rows, pa.int64()))
    )
    if options.reduction == "mean":
        table = table.append_column(TOKENS_COLUMN, _token_counts(table, formatting, metadata))
    if formatting.dna_prefix and "add_bos_token" not in metadata and not package_model_created():
        log.warning(
            "perturbation-bench: the DNA prefix %r is the start of every sequence, as in the "
            "reference scorer; with --model hf and a tokenizer that adds a BOS token, pass "
            "add_bos_token=False in --model_args, or lm-eval scores after BOS + prefix "
            "(--model dna-hf needs nothing: it defaults to that)",
            formatting.dna_prefix,
        )
    return datasets.DatasetDict({"test": datasets.Dataset(table)})


def _shard_text(shard) -> str | None:
    return f"{shard[0]}/{shard[1]}" if shard else None


def data_identity(files) -> str:
    """``sha256:<hex>`` of the files' bytes, in the (sorted) order they are read."""
    import hashlib

    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _log_lower_case(table: pa.Table) -> None:
    """Log how many rows have lower-case (soft-masked) letters; they are scored upper-cased."""
    lower = pc.or_(
        *(pc.match_substring_regex(table.column(name), "[acgtn]") for name in SEQUENCE_COLUMNS)
    )
    count = pc.sum(lower).as_py() or 0
    if count:
        log.info(
            "perturbation-bench: %d of %d pairs have lower-case (soft-masked) bases; "
            "they are upper-cased before tokenization",
            count,
            table.num_rows,
        )


def _crop_starts(table: pa.Table, context_bp: int | None, config_name: str) -> pa.Array:
    """Each pair's crop start (0 without a crop); logs how many pairs' changes overflow the crop."""
    if context_bp is None:
        return pa.array([0] * table.num_rows, pa.int64())
    starts, overflowing = [], 0
    for original, perturbed in zip(*(table.column(c).to_pylist() for c in SEQUENCE_COLUMNS)):
        start, overflows = crop_start(original, perturbed, context_bp)
        starts.append(start)
        overflowing += overflows
    log.info(
        "perturbation-bench %s: pairs cropped to %d bp around their changes; %d of %d pairs "
        "change a span longer than that and keep only its centre",
        config_name,
        context_bp,
        overflowing,
        table.num_rows,
    )
    return pa.array(starts, pa.int64())


def _token_counts(table: pa.Table, formatting: Formatting, metadata: dict) -> pa.Array:
    """Scored tokens per continuation of every pair, with the run's tokenizer (``token_counts``)."""
    from tqdm import tqdm

    tokenizer = load_tokenizer(metadata)
    counts = []
    progress = tqdm(total=table.num_rows, desc="counting tokens (reduction: mean)")
    for batch in table.to_batches():
        for doc in batch.to_pylist():
            counts.append(
                [scored_tokens(tokenizer, formatting.dna_prefix, s) for s in doc_to_sequences(doc)]
            )
            progress.update()
    progress.close()
    return pa.array(counts, pa.list_(pa.int64()))


def doc_to_context(doc) -> str:
    """The loglikelihood context: the family's DNA prefix ("" = model's BOS/prefix token)."""
    return doc[PREFIX_COLUMN]


def doc_to_sequences(doc) -> list[str]:
    """The continuations: ``[original, perturbed]`` cropped (context tasks), trimmed to whole
    k-mers, then with rc_average their reverse complements: see :meth:`Formatting.continuations`."""
    formatting = Formatting(kmer_size=doc[KMER_COLUMN], rc_average=doc[RC_COLUMN])
    pair = doc["original_sequence"], doc["sequence"]
    if doc.get(CONTEXT_COLUMN) is not None:
        start, length = doc[CROP_START_COLUMN], doc[CONTEXT_COLUMN]
        pair = tuple(sequence[start : start + length] for sequence in pair)
    return formatting.continuations(*pair)


def choices_per_pair(doc) -> int:
    """How many loglikelihood requests lm-eval makes for this document (2, or 4 with rc_average)."""
    return 4 if doc.get(RC_COLUMN) else 2
