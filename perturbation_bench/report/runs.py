"""Read lm-eval output folders of perturbation-bench runs as compact per-pair rows.

A run folder is what ``lm_eval --output_path RUN --log_samples`` wrote for one model: a
``results_<date>.json`` and one ``samples_<task>_<date>.jsonl`` per task (possibly one folder
down, under the model's sanitised name). Samples files are streamed line by line (one 8 kb pair
is ~30 KB of JSON); :func:`stream_sample_pairs` turns each line into one compact row, with the
task's ``config`` (the task name without a ``_<L>bp`` suffix) and the ``context_bp`` the pair
was scored at (its crop, or its whole length). Pairs are
identified by content: ``pair_id`` is a hash of both sequences, so two runs' pairs match
whatever their order.

Only ``perturbation_*`` tasks are read; samples of other tasks in the same folder are listed as
ignored, and of several samples files for one task the newest is read and the others listed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from perturbation_bench.comparison import original_wins
from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.pair_changes import perturbed_sequence
from perturbation_bench.ranking import variant_score

STRATA = ("fraction_codons_changed", "exon_rank", "is_first_exon", "strand", "chr", "is_clamped",
          "consequence")
SCORE_KEY = "scoring_score"  # the variant task's score option, written into each document
DATA_KEY = "scoring_data"  # the data's identity (sha256 of its files), written into each document
SHARD_KEY = "scoring_shard"  # "I/N" of a sharded run
VARIANT_FIELDS = ("pos", "ref", "alt", "region")  # of variant documents (build variants)
TASK_PREFIX = "perturbation_"
CONTEXT_KEY = "scoring_context_bp"  # the crop length the tasks write into each document
CONTEXT_SUFFIX = re.compile(r"_\d+bp$")


@dataclass
class Run:
    """One model's lm-eval output: its samples file per task, what was left out, and the
    ``--limit`` it ran with (None: every pair)."""

    folder: Path
    model: str
    samples: dict[str, Path]
    ignored: list[str] = field(default_factory=list)
    limit: float | None = None
    provenance: dict = field(default_factory=dict)
    """The results' ``config.perturbation_bench`` (version, model, settings, per-task data), if
    this package's model made the run."""
    scale: str = "causal"
    """What its LLs are: ``causal`` (whole sequences: causal LMs, Markov chains) or ``masked``
    (masked marginals over the differing positions, ``--model dna-mlm``): not one scale."""


def find_run(folder: str | Path) -> Run:
    """Locate the samples files of one run folder (module docstring).

    Raises:
        DataSourceError: no samples files, no perturbation-bench samples, or several models.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DataSourceError(f"{folder}: not a folder")
    files = sorted(folder.rglob("samples_*.jsonl"))
    if not files:
        raise DataSourceError(
            f"{folder}: no samples_*.jsonl files; run lm_eval with --log_samples --output_path {folder}"
        )
    parents = {f.parent for f in files}
    if len(parents) > 1:
        raise DataSourceError(
            f"{folder}: samples from several models ({', '.join(sorted(p.name for p in parents))}); "
            "pass each model's folder as its own RUN"
        )
    samples, ignored = {}, []
    for path in files:  # sorted: the newest date of a task comes last and wins
        task = path.stem[len("samples_") :].rsplit("_", 1)[0]
        if not task.startswith(TASK_PREFIX):
            ignored.append(f"{path.name} (not a perturbation-bench task)")
            continue
        if task in samples:
            ignored.append(f"{samples[task].name} (older run of {task})")
        samples[task] = path
    if not samples:
        raise DataSourceError(f"{folder}: no samples of perturbation-bench tasks ({TASK_PREFIX}*)")
    model, limit, scale, provenance = _run_settings(parents.pop())
    return Run(folder, model, samples, ignored, limit, provenance, scale)


MASKED_MODELS = ("dna-mlm",)
"""lm-eval model names whose LLs are masked marginals (:attr:`Run.scale`)."""


def _run_settings(folder: Path) -> tuple[str, float | None, str, dict]:
    """Model name, ``--limit``, score scale and provenance from the newest readable results file
    (the folder name, None, causal and {} without one)."""
    for results in sorted(folder.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(results.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        config = data.get("config") or {}
        scale = "masked" if config.get("model") in MASKED_MODELS else "causal"
        provenance = config.get("perturbation_bench") or {}
        return str(data.get("model_name") or folder.name), config.get("limit"), scale, provenance
    return folder.name, None, "causal", {}


def pair_id(original: str, perturbed: str) -> str:
    """A content hash of a pair: the same pair has the same id in every run."""
    return hashlib.sha256(f"{original}\n{perturbed}".encode()).hexdigest()[:16]


def stream_sample_pairs(
    path: Path, task: str, model: str, extra_columns=(), scale: str = "causal"
) -> Iterator[dict]:
    """Stream one samples file as per-pair rows, with a progress bar over its bytes.

    Raises:
        DataValidationError: a line that is not JSON (a truncated file) or not a sample of a
            perturbation-bench task, naming the file and the line.
    """
    from tqdm import tqdm

    columns = (*STRATA, *extra_columns)
    with (
        path.open("rb") as handle,
        tqdm(
            total=path.stat().st_size, unit="B", unit_scale=True, desc=f"{model} {task}"
        ) as progress,
    ):
        for number, line in enumerate(handle, start=1):
            progress.update(len(line))
            try:
                sample = json.loads(line)
                doc = sample["doc"]
                ll_original, ll_perturbed = (float(x) for x in sample["filtered_resps"][0])
                original, perturbed = doc["original_sequence"], perturbed_sequence(doc)
            except json.JSONDecodeError as err:
                raise DataValidationError(
                    f"{path}: line {number}: not valid JSON ({err.msg}); the file may be truncated"
                ) from None
            except (KeyError, TypeError, ValueError, IndexError) as err:
                raise DataValidationError(
                    f"{path}: line {number}: not a perturbation-bench sample (no {err}); expected "
                    "a doc with original_sequence and sequence and filtered_resps of LL pairs"
                ) from None
            yield {
                "pair_id": pair_id(original, perturbed),
                "task": task,
                "model": model,
                "scale": scale,
                "doc_id": int(sample.get("doc_id", number - 1)),
                "ll_original": ll_original,
                "ll_perturbed": ll_perturbed,
                "correct": int(original_wins(ll_original, ll_perturbed)),
                "tie": int(ll_original == ll_perturbed),
                "margin": ll_original - ll_perturbed,
                "data": doc.get(DATA_KEY),
                "shard": doc.get(SHARD_KEY),
                "label": doc.get("label"),
                "chrom": doc.get("chrom"),
                **{name: doc.get(name) for name in VARIANT_FIELDS},
                "score_kind": doc.get(SCORE_KEY),
                "score": variant_score(ll_original - ll_perturbed, doc.get(SCORE_KEY) or "llr"),
                "config": CONTEXT_SUFFIX.sub("", task),
                "context_bp": doc.get(CONTEXT_KEY) or len(original),
                **{name: doc.get(name) for name in columns},
            }
