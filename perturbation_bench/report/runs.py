"""Read lm-eval output folders of perturbation-bench runs as compact per-pair rows.

A run folder is what ``lm_eval --output_path RUN --log_samples`` wrote for one model: a
``results_<date>.json`` and one ``samples_<task>_<date>.jsonl`` per task (possibly one folder
down, under the model's sanitised name); ``samples.py`` reads each samples file as one compact
row per pair.

:func:`collect_pairs` reads every run's pairs into one table. Only ``perturbation_*`` tasks are read; samples of other tasks in the same folder are listed as
ignored, and of several samples files for one task the newest is read and the others listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from perturbation_bench.arguments import model_source
from perturbation_bench.errors import DataSourceError
from perturbation_bench.families import GIVEN, floor_kind, scoring_of
from perturbation_bench.pairs.settings import TaskSettings, logged_settings
from perturbation_bench.report.comparability import scored_part
from perturbation_bench.report.run_names import identity, labels_by_folder, run_names, short_name
from perturbation_bench.report.samples import stream_sample_pairs

TASK_PREFIX = "perturbation_"


@dataclass
class Run:
    """One model's lm-eval output: its samples file per task, what was left out, and the
    ``--limit`` it ran with (None: every pair)."""

    folder: Path
    model: str
    """Where the run's name starts (``run_names.py``): ``pretrained``, else the lm-eval model."""
    samples: dict[str, Path]
    ignored: list[str] = field(default_factory=list)
    limit: float | None = None
    provenance: dict = field(default_factory=dict)
    """The results' ``config.perturbation_bench`` (version, model, settings, per-task data), if
    this package's model made the run."""
    scale: str = "causal"
    """What its LLs are: ``causal`` (whole sequences: causal LMs, Markov chains), ``masked``
    (masked marginals over the differing positions, ``--model dna-mlm``) or ``pll``
    (pseudo-log-likelihoods of whole sequences, ``dna-mlm`` with ``scoring=pll``) or
    ``embedding`` (each variant's embedding score as its margin, ``scoring=embedding``): not one
    scale."""
    score_kind: str | None = None
    """The variant score's name when the model gives it (``scoring=embedding``:
    ``Embeddings.plus.euclidean_distance``, ...); None: the task's ``score``."""
    model_type: str | None = None
    """lm-eval's model (``config.model``)."""
    model_args: dict = field(default_factory=dict)
    """lm-eval's model arguments (``config.model_args``)."""
    task_settings: dict[str, TaskSettings] = field(default_factory=dict)
    """Per task, the settings its first logged document carries (``pairs/settings.py``)."""

    def identity(self) -> dict:
        """What identifies the run (``run_names.identity``)."""
        return identity(
            self.model_type,
            self.model_args,
            self.provenance.get("settings") or {},
            self.task_settings,
        )


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
    model, limit, scale, provenance, model_type, model_args = _run_settings(parents.pop())
    task_settings = {task: _first_settings(path) for task, path in samples.items()}
    return Run(
        folder,
        model,
        samples,
        ignored,
        limit,
        provenance,
        scale,
        (provenance.get("settings") or {}).get("embedding_score"),
        model_type,
        model_args,
        task_settings,
    )


def _run_settings(folder: Path) -> tuple:
    """Name base, ``--limit`` (where it left pairs of a task unscored,
    ``comparability.scored_part``), score scale, provenance, lm-eval model and model arguments
    from the newest results file (the folder name, None, causal, {}, None, {} without one).

    Raises:
        DataSourceError: the newest results file is not readable JSON (naming it): the run's
            name and settings would otherwise be guessed.
    """
    for results in sorted(folder.glob("results_*.json"), reverse=True):
        data = read_results_file(results)
        config = data.get("config") or {}
        provenance = config.get("perturbation_bench") or {}
        model_args = parse_model_args(config.get("model_args"))
        scale = _scale(config.get("model"), provenance, model_args)
        limit, counts = config.get("limit"), (data.get("n-samples") or {}).values()
        cut = [scored_part(limit, count) for count in counts] or [scored_part(limit, None)]
        return (
            short_name(model_args, config.get("model"), folder.name),
            next((part for part in cut if part is not None), None),
            scale,
            provenance,
            config.get("model"),
            model_args,
        )
    return folder.name, None, "causal", {}, None, {}


def read_results_file(path: Path) -> dict:
    """One lm-eval ``results_*.json``, read.

    Raises:
        DataSourceError: naming the file, when it cannot be read, is not JSON (a file cut
            short) or is not a JSON object.
    """
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as err:  # ValueError: not JSON, or not UTF-8
        raise DataSourceError(
            f"{path}: not a readable results file ({err}); restore it, or remove it"
        ) from None
    if not isinstance(data, dict):
        raise DataSourceError(
            f"{path}: not a readable results file (a JSON {type(data).__name__}, not the object "
            "lm-eval writes); restore it, or remove it"
        )
    return data


def _scale(model: str | None, provenance: dict, model_args: dict) -> str:
    """:attr:`Run.scale` of a run of lm-eval model ``model``."""
    scoring = (provenance.get("settings") or {}).get("scoring") or model_args.get("scoring")
    return scoring_of(model, scoring).scale


def parse_model_args(value) -> dict:
    """lm-eval's ``model_args`` as a dict: a dict already, or its ``k=v,k=v`` string."""
    if isinstance(value, dict):
        return value
    pairs = [item.split("=", 1) for item in str(value or "").split(",") if "=" in item]
    return {key.strip(): text.strip() for key, text in pairs}


def _first_settings(path: Path) -> TaskSettings:
    """The task settings of a samples file's first document (the defaults if it has none)."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        return logged_settings(json.loads(first)["doc"])
    except (ValueError, KeyError, TypeError):  # ValueError: not JSON, or not UTF-8
        return TaskSettings()  # a bad line is named with its number when the file is read


def collect_pairs(
    run_folders: list[str | Path],
    by: list[str] = (),
    provenance: dict | None = None,
    names: dict[str, str] | None = None,
    floors: list[str | Path] = (),
):
    """All runs' pairs (``run_folders`` and ``floors``) as one pandas table, each row's ``model``
    the run's name (``run_names.py``; ``names``: ``folder -> label`` from ``--name``) and
    ``floor`` whether its run is a floor and ``floor_kind`` which (``families.floor_kind``: a
    ``kmer-markov`` run, a ``random_init`` run; or one of ``floors``: ``floors.py``), plus the
    notes on files left out; ``provenance`` (if given) receives each run's, by folder."""
    runs = [find_run(folder) for folder in [*run_folders, *floors]]
    floor_folders = {Path(folder).resolve() for folder in floors}
    named = run_names(
        [
            {
                "folder": str(run.folder),
                "base": run.model,
                "identity": run.identity(),
                "shards": {t: s.shard for t, s in run.task_settings.items()},
            }
            for run in runs
        ],
        labels_by_folder([str(run.folder) for run in runs], names or {}),
    )
    rows, notes = [], []
    for run in runs:
        name = named[str(run.folder)]
        if provenance is not None:
            provenance[str(run.folder)] = {
                "model": name,
                **{
                    ("scorer" if key == "model" else key): value
                    for key, value in run.provenance.items()
                },
            }
        notes += [f"{run.folder}: ignored {item}" for item in run.ignored]
        if run.limit is not None:
            notes.append(
                f"{run.folder}: run with --limit {run.limit:g}: only the first pairs of each task "
                "were scored, not the whole benchmark"
            )
        kind = floor_kind(run.model_type, run.provenance.get("settings"))
        kind = kind or (GIVEN if run.folder.resolve() in floor_folders else None)
        kept = {
            "run": str(run.folder),
            "floor": kind is not None,
            "floor_kind": kind,
            "source": model_source(run.model_args),
        }
        for task, path in sorted(run.samples.items()):
            for row in stream_sample_pairs(path, task, name, by, run.scale, run.score_kind):
                rows.append({**row, **kept})
    import pandas as pd

    return pd.DataFrame(rows), notes
