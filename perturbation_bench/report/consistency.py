"""Checks that the runs a report pools or compares belong together: shards of one run, and the
same data wherever two runs are compared."""

from __future__ import annotations

import json

import pandas as pd

from perturbation_bench.errors import DataValidationError
from perturbation_bench.report.comparability import apart


def check_shards(pairs: pd.DataFrame, provenance: dict) -> list[str]:
    """Check the shard runs of every model and task (``--metadata '{"shard": "I/N"}'``), which
    the report then pools into one result; a note per merged task.

    Raises:
        DataValidationError: a shard missing, repeated, of another N, or foreign (other data or
            scorer settings than its siblings), naming which; or sharded and unsharded runs of
            one model and task mixed.
    """
    notes = []
    for (model, task), group in pairs.groupby(["model", "task"], sort=True):
        # an unsharded run's shard is None, or NaN once pandas has pooled it with sharded runs
        shards = group.groupby("run")["shard"].agg(
            lambda v: sorted({x if isinstance(x, str) else "None" for x in v})
        )
        if all(value == ["None"] for value in shards):
            continue
        where = f"{task} ({model})"
        if any(len(value) != 1 or value == ["None"] for value in shards):
            listed = "; ".join(
                f"{run}: " + ", ".join("unsharded" if v == "None" else f"shard {v}" for v in value)
                for run, value in shards.items()
            )
            raise DataValidationError(f"{where}: sharded and unsharded runs mixed: {listed}")
        by_run = {run: value[0] for run, value in shards.items()}
        counts = {text.split("/")[1] for text in by_run.values()}
        if len(counts) > 1:
            listed = "; ".join(f"{run}: shard {text}" for run, text in by_run.items())
            raise DataValidationError(f"{where}: shards of different N: {listed}")
        count = int(counts.pop())
        seen: dict[int, str] = {}
        for run, text in sorted(by_run.items()):
            index = int(text.split("/")[0])
            if index in seen:
                raise DataValidationError(
                    f"{where}: shard {text} repeated in {seen[index]} and {run}"
                )
            seen[index] = run
        missing = sorted(set(range(count)) - set(seen))
        if missing:
            raise DataValidationError(
                f"{where}: shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing"
            )
        data = group.groupby("run")["data"].first()
        settings = {
            run: json.dumps(provenance.get(run, {}).get("settings"), sort_keys=True)
            for run in by_run
        }
        for name, values in (("data", data.to_dict()), ("scorer settings", settings)):
            if len(set(values.values())) > 1:
                raise DataValidationError(f"{where}: a foreign shard, other {name}: {values}")
        notes.append(f"{where}: {count} shards merged ({len(group)} pairs)")
    return notes


def check_same_data(pairs: pd.DataFrame, allow_different: bool = False) -> list[str]:
    """Refuse (or, with ``allow_different``, note) a task whose runs are not one column by
    ``comparability.apart``, the rule the leaderboard ranks by: the report computes one metric
    for every run, so runs part only by their data (a run that recorded none is apart from one
    that did).

    Raises:
        DataValidationError: naming the task, the models and their data identities, and which
            run is apart and why.
    """
    notes = []
    data = pairs["data"].astype(object).where(pairs["data"].notna(), None)
    for task, group in pairs.assign(data=data).groupby("task", sort=True):
        by_model = group.groupby("model", sort=False)["data"].agg(
            lambda v: ", ".join(sorted({str(x) for x in v if x is not None})) or None
        )
        parted = apart({model: (None, data, None) for model, data in by_model.items()})
        if not parted:
            continue
        found = "; ".join(f"{model}: {data}" for model, data in sorted(by_model.items()))
        why = "; ".join(f"{model} is apart: {reason}" for model, reason in parted.items())
        message = f"{task} was scored on different data by the runs ({found}; {why})"
        if not allow_different:
            raise DataValidationError(
                f"{message}; comparing them would compare different pairs. Pass "
                "--allow-different-data to put them side by side anyway"
            )
        notes.append(f"{message}: compared anyway (--allow-different-data)")
    return notes
