"""Which runs are one row of the report, and what each row is called.

A run is identified by everything that changes its scores:

- the lm-eval model (``config.model``: ``dna-hf``, ``kmer-markov``, ...) and its arguments
  (``config.model_args``: ``pretrained``, ``order``, ``dtype``, ...), except
  :data:`SCORE_NEUTRAL` ones (where it runs, how it batches, what it caches);
- the scorer settings this package's models record (``config.perturbation_bench.settings``);
- per task, the settings its documents carry that identify a run (``pairs/settings.py``:
  ``IDENTIFYING``: preset, prefix, k-mer size, crop length, reduction, score, start token,
  convention, ...), the data's identity (sha256 of the files) among them; the shard is not part
  of it (shards of one run merge).

Its name starts from ``--name FOLDER=LABEL`` when given, else from the model's short name
(:func:`short_name`: the last path component of ``pretrained``, ``tiny-dna-lm`` for
``/tmp/x/tiny-dna-lm``) or, for a model without one (``kmer-markov``), the lm-eval model; runs
whose names start alike are told apart by what differs, ``key=value`` each (``kmer-markov
order=2`` and ``kmer-markov order=5``; a data identity by its first 8 hex digits), whether or not
one of them is named with ``--name``. A setting a run does not have (None, or an empty value such
as no ``dna_prefix``) is never in its name; the whole identity stays in the report's provenance
table. A setting of :data:`NAMED_UNLESS_DEFAULT` other than its default is in the name even of
a run alone (``scoring=pll``; ``random_init=True seed=42`` for a random-weights floor; an
embedding score by its own name, ``Embeddings.plus.euclidean_distance``, which stands for the
``scoring``, ``distance``, ``pooling`` and ``layer`` it implies, :data:`IMPLIED`). Two unsharded runs with the same name and the same task are refused: their
pairs would count twice (shard runs are checked by ``consistency.check_shards``).
"""

from __future__ import annotations

from collections import defaultdict

from perturbation_bench.arguments import FALSE_WORDS
from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.families import DEFAULT_SCORINGS
from perturbation_bench.pairs.settings import IDENTIFYING

SCORE_NEUTRAL = frozenset(
    {
        "device",
        "batch_size",
        "max_batch_size",
        "trust_remote_code",
        "counts",
        "parallelize",
        "share_prefix",
        "dedupe",
        "log_softmax",
        "revision",
    }
)
"""Model arguments and settings that do not change a score."""
NAMED_UNLESS_DEFAULT = {
    "scoring": DEFAULT_SCORINGS,
    "embedding_score": (),
    "random_init": ("False", *FALSE_WORDS),
    "seed": (),
}
"""Settings named in every run's name when given and not at a default (module docstring)."""
IMPLIED = {"embedding_score": ("scoring", "distance", "pooling", "layer")}
"""A setting whose value implies others: where it is named, they are not."""
BARE = frozenset({"embedding_score"})
"""Settings named by their value alone (it names itself: ``Embeddings.plus.cosine_distance``)."""
TASK_KEYS = tuple(name for name in IDENTIFYING if name != "data")
"""The per-task settings that identify a run (``data`` is compared per task apart)."""


def identity(
    model: str, model_args: dict, settings: dict, task_settings: dict
) -> dict[str, str | None]:
    """The run's identity as flat ``key -> value`` items (module docstring); a per-task setting
    that is the same for every task of the run is one item, else one per task (``task:key``)."""
    items = {"model": _plain(model)}
    for source in (model_args, settings):
        items |= {k: _plain(v) for k, v in source.items() if k not in SCORE_NEUTRAL}
    for key in TASK_KEYS:
        values = {task: _plain(s.get(key)) for task, s in task_settings.items()}
        if len(set(values.values())) <= 1:
            items[key] = next(iter(values.values()), None)
        else:
            items |= {f"{task}:{key}": value for task, value in values.items()}
    items |= {f"{task}:data": _plain(s.get("data")) for task, s in task_settings.items()}
    return items


def short_name(model_args: dict, model: str | None, fallback: str) -> str:
    """Where a run's name starts: the last path component of ``pretrained`` (a trailing ``/``
    ignored; in the Hugging Face cache's ``models--ORG--NAME/snapshots/HASH``, ``NAME``), else
    the lm-eval ``model``, else ``fallback`` (the run's folder name)."""
    parts = str(model_args.get("pretrained") or "").rstrip("/").split("/")
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3].split("--")[-1]
    return parts[-1] or model or fallback


def run_names(runs: list[dict], names: dict[str, str] | None = None) -> dict[str, str]:
    """``folder -> name`` for ``runs`` (each ``{"folder", "base", "identity", "shards"}``, with
    ``shards`` = ``{task: "I/N" or None}``); ``names``: ``folder -> label`` from ``--name``.

    Raises:
        DataValidationError: two unsharded runs would share a name and a task, naming both
            folders.
    """
    names = names or {}
    groups = defaultdict(list)
    for run in runs:
        groups[run["base"]].append(run)
    out = {}
    for base, members in groups.items():
        differing = {
            key
            for run in members
            for key in run["identity"]
            if len({other["identity"].get(key) for other in members}) > 1
        }
        for run in members:
            out[run["folder"]] = names.get(run["folder"]) or " ".join(
                [base, *_suffix(run["identity"], differing)]
            )
    _refuse_double_counting(runs, out)
    return out


def labels_by_folder(folders: list[str], names: dict[str, str]) -> dict[str, str]:
    """``--name FOLDER=LABEL`` options (``names``) keyed by the run folders as given
    (``folders``), each matched by its resolved path.

    Raises:
        OptionsError: a FOLDER that is none of ``folders``.
    """
    from pathlib import Path

    out = {}
    for folder, label in names.items():
        matched = [given for given in folders if Path(given).resolve() == Path(folder).resolve()]
        if not matched:
            raise OptionsError(f"--name {folder}={label}: {folder} is not one of the RUN folders")
        out[matched[0]] = label
    return out


def _suffix(items: dict, differing: set) -> list[str]:
    """The ``key=value`` parts of a run's name (module docstring): the keys that differ within
    its group or are named unless default, less those it lacks and those another part implies."""
    shown = differing | {
        key
        for key, defaults in NAMED_UNLESS_DEFAULT.items()
        if items.get(key) not in (None, *defaults)
    }
    shown = {key for key in shown if items.get(key) not in (None, "")}
    shown -= {implied for key in shown for implied in IMPLIED.get(key, ())}
    return [
        _shown(items[key]) if key in BARE else f"{_short(key)}={_shown(items[key])}"
        for key in sorted(shown)
    ]


def _refuse_double_counting(runs: list[dict], named: dict[str, str]) -> None:
    by_name_task = defaultdict(list)
    for run in runs:
        for task, shard in run["shards"].items():
            by_name_task[(named[run["folder"]], task)].append((run["folder"], shard))
    for (name, task), found in sorted(by_name_task.items()):
        whole = [folder for folder, shard in found if shard is None]
        if len(whole) > 1:  # shards repeated or mixed with whole runs: consistency.check_shards
            folders = " and ".join(whole)
            raise DataValidationError(
                f"{folders} would both be the row {name!r} of {task} (the same model, settings "
                "and data, or the same --name) without being shards of one run: their pairs "
                "would count twice. Pass one of them, or name each with --name FOLDER=LABEL"
            )


def _plain(value) -> str | None:
    """Values compared as text: ``order=5`` from a command line equals ``{"order": 5}``."""
    return None if value is None else str(value)


def _short(key: str) -> str:
    return key.removeprefix("perturbation_")


def _shown(value) -> str:
    if isinstance(value, str) and value.startswith("sha256:"):
        return value[len("sha256:") :][:8]
    return str(value)
