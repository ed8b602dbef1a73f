"""``perturbation-bench report``: intervals, strata, paired comparisons and plots from lm-eval runs.

Input: one lm-eval ``--output_path`` folder per model, made with ``--log_samples`` (``runs.py``).
Output folder:

- ``pairs.parquet``: one row per pair and model (pair id, task, both LLs, correct, margin, strata);
- ``report.json`` and ``report.md``: per model and task, accuracy with a seeded bootstrap and a
  Wilson 95% interval, tie rate, margin mean and median, n; the unweighted mean over the tasks
  each model ran; accuracy by stratum (``fraction_codons_changed`` in fifths, ``exon_rank`` with
  5+ pooled, ``is_first_exon``, ``strand``, ``chr``, ``is_clamped``, and ``--by`` columns),
  strata under :data:`FEW_PAIRS` pairs flagged; for every two models that ran a task, the
  accuracy difference with a paired-bootstrap interval and the exact McNemar p-value over the
  pairs both scored (matched by ``pair_id``; pairs only one model scored are counted); and the
  published numbers of the Carbon report, as separate reference rows;
- the context-length sweep: for every model and config scored at two or more context lengths
  (the ``perturbation_<config>_<L>bp`` tasks and the whole windows), accuracy per length with
  its bootstrap interval, as a table and as ``context_sweep.png``;
- ``accuracy.png``, ``accuracy_by_codons_changed.png``, ``margins.png`` (``plots.py``);
- for labelled variant tasks, the ranking metrics with intervals, per stratum and paired
  (``variant_metrics.py``), and ``roc.png``, ``precision_recall.png``; for variant tasks with a
  ``consequence`` column, the class ladder (table and ``class_ladder.png``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd

from perturbation_bench.errors import DataValidationError
from perturbation_bench.report import variant_metrics
from perturbation_bench.report.runs import CONTEXT_SUFFIX, STRATA, find_run, stream_sample_pairs
from perturbation_bench.report.statistics import (
    bootstrap_interval,
    mcnemar_exact,
    paired_bootstrap_difference,
    wilson_interval,
)

FEW_PAIRS = 30
"""Strata with fewer pairs than this are flagged: their intervals are wide."""

PUBLISHED = [  # Carbon technical report (Allal et al., 2026), token-level scoring, accuracy %
    {"model": "Carbon-3B", "motif": 85.20, "synonymous": 88.89},
    {"model": "Carbon-8B", "motif": 89.05, "synonymous": 91.46},
    {"model": "GENERator-v2 3B", "motif": 83.06, "synonymous": 87.03},
    {"model": "Evo2-7B", "motif": 88.43, "synonymous": 91.59},
]
PUBLISHED_SOURCE = (
    "Carbon technical report (Allal et al., 2026), token-level scoring; published, not measured "
    "here; whether 'synonymous' pools human and mouse is not stated"
)
CODON_BINS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def collect_pairs(
    run_folders: list[str | Path], by: list[str] = (), provenance: dict | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """All runs' pairs as one table, plus the notes on files left out; ``provenance`` (if
    given) receives each run's, by model."""
    rows, notes = [], []
    for folder in run_folders:
        run = find_run(folder)
        if provenance is not None:
            provenance[str(run.folder)] = {"model": run.model, **{
                ("scorer" if key == "model" else key): value for key, value in run.provenance.items()}}  # fmt: skip
        notes += [f"{run.folder}: ignored {item}" for item in run.ignored]
        if run.limit is not None:
            notes.append(
                f"{run.folder}: run with --limit {run.limit:g}: only the first pairs of each task "
                "were scored, not the whole benchmark"
            )
        for task, path in sorted(run.samples.items()):
            for row in stream_sample_pairs(path, task, run.model, by, run.scale):
                rows.append({**row, "run": str(run.folder)})
    return pd.DataFrame(rows), notes


def summarize(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Per model and task: accuracy with both intervals, tie rate, margin mean/median, n."""
    out = []
    for (model, task), group in pairs.groupby(["model", "task"], sort=True):
        out.append({"model": model, "task": task, **_accuracy(group["correct"], seed, n_boot),
                    "tie_rate": float(group["tie"].mean()),
                    "margin_mean": float(group["margin"].mean()),
                    "margin_median": float(group["margin"].median())})  # fmt: skip
    return out


def _accuracy(correct: pd.Series, seed: int, n_boot: int) -> dict:
    k, n = int(correct.sum()), len(correct)
    return {
        "n": n,
        "pairwise_acc": k / n,
        "bootstrap_95": list(bootstrap_interval(correct.to_numpy(), seed=seed, n_boot=n_boot)),
        "wilson_95": list(wilson_interval(k, n)),
    }


def group_means(summary: list[dict]) -> list[dict]:
    """Unweighted mean of ``pairwise_acc`` over the whole-window tasks each model ran (the
    context-length tasks are left out: an average over crop lengths means nothing)."""
    frame = pd.DataFrame(summary)
    frame = frame[~frame["task"].str.contains(CONTEXT_SUFFIX)]
    return [
        {
            "model": model,
            "tasks": sorted(g["task"]),
            "mean_pairwise_acc": float(g["pairwise_acc"].mean()),
        }
        for model, g in frame.groupby("model", sort=True)
    ]


def strata(
    pairs: pd.DataFrame, by: list[str] = (), seed: int = 0, n_boot: int = 2000
) -> list[dict]:
    """Accuracy per stratum value, per model and task (module docstring for the binning)."""
    frame = pairs.copy()
    if frame["fraction_codons_changed"].notna().any():
        frame["fraction_codons_changed"] = pd.cut(
            frame["fraction_codons_changed"], CODON_BINS, include_lowest=True
        ).astype(str)
    frame["exon_rank"] = frame["exon_rank"].map(
        lambda r: None if pd.isna(r) else ("5+" if r >= 5 else str(int(r)))
    )
    out = []
    for column in (*STRATA, *by):
        present = frame[frame[column].notna() & (frame[column].astype(str) != "nan")]
        for (model, task, value), group in present.groupby(["model", "task", column], sort=True):
            acc = _accuracy(group["correct"], seed, n_boot)
            out.append({"model": model, "task": task, "column": column, "value": str(value),
                        **acc, "few_pairs": acc["n"] < FEW_PAIRS})  # fmt: skip
    return out


def context_sweep(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Accuracy per model, config and context length, for each model and config scored at two
    or more lengths."""
    out = []
    for (model, config), group in pairs.groupby(["model", "config"], sort=True):
        if group["context_bp"].nunique() < 2:
            continue
        for length, rows in group.groupby("context_bp", sort=True):
            out.append({"model": model, "config": config, "context_bp": int(length),
                        **_accuracy(rows["correct"], seed, n_boot)})  # fmt: skip
    return out


def comparisons(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Every two models on every task both ran: paired difference and exact McNemar."""
    out = []
    for task, group in pairs.groupby("task", sort=True):
        tables = {
            m: g.set_index("pair_id")["correct"] for m, g in group.groupby("model", sort=True)
        }
        for a, b in itertools.combinations(sorted(tables), 2):
            common = tables[a].index.intersection(tables[b].index)
            x, y = tables[a].loc[common].to_numpy(), tables[b].loc[common].to_numpy()
            diff, low, high = paired_bootstrap_difference(x, y, seed=seed, n_boot=n_boot)
            only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
            out.append({
                "task": task, "model_a": a, "model_b": b, "n_common": len(common),
                "only_in_a": len(tables[a]) - len(common), "only_in_b": len(tables[b]) - len(common),
                "acc_difference": diff, "paired_bootstrap_95": [low, high],
                "a_right_b_wrong": only_a, "b_right_a_wrong": only_b,
                "mcnemar_exact_p": mcnemar_exact(only_a, only_b),
            })  # fmt: skip
    return out


def saturation_maps(pairs: pd.DataFrame, out: Path, features=()) -> list[str]:
    """Draw ``saturation_<k>.png/.svg`` for every region of the saturation tasks; their names."""
    from perturbation_bench.report import plots

    if "region" not in pairs.columns or pairs["region"].isna().all():
        return []
    names = []
    for k, (region, rows) in enumerate(pairs[pairs["region"].notna()].groupby("region", sort=True)):
        plots.saturation_map(rows, region, out / f"saturation_{k + 1}.png", features)
        names.append(f"saturation_{k + 1}.png")
    return names


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
        shards = group.groupby("run")["shard"].agg(lambda v: sorted(set(map(str, v))))
        if all(value == ["None"] for value in shards):
            continue
        where = f"{task} ({model})"
        if any(len(value) != 1 or value == ["None"] for value in shards):
            raise DataValidationError(f"{where}: sharded and unsharded runs mixed: {dict(shards)}")
        by_run = {run: value[0] for run, value in shards.items()}
        counts = {text.split("/")[1] for text in by_run.values()}
        if len(counts) > 1:
            raise DataValidationError(f"{where}: shards of different N: {by_run}")
        count = int(counts.pop())
        seen: dict[int, str] = {}
        for run, text in sorted(by_run.items()):
            index = int(text.split("/")[0])
            if index in seen:
                raise DataValidationError(f"{where}: shard {text} repeated in {seen[index]} and {run}")
            seen[index] = run
        missing = sorted(set(range(count)) - set(seen))
        if missing:
            raise DataValidationError(
                f"{where}: shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing"
            )
        data = group.groupby("run")["data"].first()
        settings = {run: json.dumps(provenance.get(run, {}).get("settings"), sort_keys=True)
                    for run in by_run}  # fmt: skip
        for name, values in (("data", data.to_dict()), ("scorer settings", settings)):
            if len(set(values.values())) > 1:
                raise DataValidationError(f"{where}: a foreign shard, other {name}: {values}")
        notes.append(f"{where}: {count} shards merged ({len(group)} pairs)")
    return notes


def check_same_data(pairs: pd.DataFrame, allow_different: bool = False) -> list[str]:
    """Refuse (or, with ``allow_different``, note) a task that two runs scored on different data.

    Raises:
        DataValidationError: naming the task, the models and both data identities.
    """
    notes = []
    for task, group in pairs[pairs["data"].notna()].groupby("task", sort=True):
        by_model = group.groupby("model")["data"].agg(lambda v: ", ".join(sorted(set(v))))
        if by_model.nunique() < 2:
            continue
        found = "; ".join(f"{model}: {data}" for model, data in by_model.items())
        message = f"{task} was scored on different data by the runs ({found})"
        if not allow_different:
            raise DataValidationError(
                f"{message}; comparing them would compare different pairs. Pass "
                "--allow-different-data to put them side by side anyway"
            )
        notes.append(f"{message}: compared anyway (--allow-different-data)")
    return notes


def make_report(
    run_folders, out: str | Path, by: list[str] = (), seed: int = 0, n_boot: int = 2000,
    features=(), allow_different_data: bool = False,
) -> dict:  # fmt: skip
    """Write everything listed in the module docstring to ``out``; return the report dict.

    ``features``: ``(chrom, start0, end0)`` CDS exons to draw under the saturation maps;
    ``allow_different_data``: compare runs that scored different data for a task.
    """
    from perturbation_bench.report import plots

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    provenance: dict = {}
    pairs, notes = collect_pairs(run_folders, list(by), provenance)
    # one order whatever the files' (shards, reruns): the seeded bootstraps then repeat exactly
    pairs = pairs.sort_values(["task", "model", "pair_id", "ll_original"], kind="stable")
    pairs = pairs.reset_index(drop=True)
    notes += check_shards(pairs, provenance)
    notes += check_same_data(pairs, allow_different_data)
    for column in by:
        if pairs[column].isna().all():
            notes.append(f"--by {column}: no sample has this column")
    pairs.to_parquet(out / "pairs.parquet", index=False)
    summary = summarize(pairs, seed, n_boot)
    report = {
        "runs": [str(f) for f in run_folders],
        "seed": seed,
        "bootstrap_resamples": n_boot,
        "summary": summary,
        "group_mean": group_means(summary),
        "strata": strata(pairs, list(by), seed, n_boot),
        "comparisons": comparisons(pairs, seed, n_boot),
        "context_sweep": context_sweep(pairs, seed, n_boot),
        "variants": {
            "summary": variant_metrics.ranking_summary(pairs, seed, n_boot),
            "strata": variant_metrics.ranking_strata(pairs, list(by)),
            "auprc_differences": variant_metrics.auprc_differences(pairs, seed, n_boot),
            "class_ladder": variant_metrics.class_ladder(pairs, seed, n_boot),
        },
        "published_reference": {"source": PUBLISHED_SOURCE, "rows": PUBLISHED},
        "notes": notes,
        "provenance": provenance,
    }
    report["saturation_maps"] = saturation_maps(pairs, out, features)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "report.md").write_text(to_markdown(report))
    plots.accuracy(summary, out / "accuracy.png")
    plots.accuracy_by_codons_changed(
        [s for s in report["strata"] if s["column"] == "fraction_codons_changed"],
        out / "accuracy_by_codons_changed.png",
    )
    plots.margins(pairs, out / "margins.png")
    if report["context_sweep"]:
        plots.context_sweep(report["context_sweep"], out / "context_sweep.png")
    if report["variants"]["class_ladder"]:
        ladder = report["variants"]["class_ladder"]
        order = sorted({r["consequence"] for r in ladder}, key=variant_metrics.ladder_order)
        plots.class_ladder(ladder, order, out / "class_ladder.png")
    if report["variants"]["summary"]:
        plots.ranking_curves(
            variant_metrics.labelled(pairs), out / "roc.png", out / "precision_recall.png"
        )
    return report


def to_markdown(report: dict) -> str:
    """The report as Markdown tables."""

    def pct(x):
        return f"{100 * x:.2f}"

    def interval(pair):
        return f"[{pct(pair[0])}, {pct(pair[1])}]"

    lines = ["# perturbation-bench report", "", "## Accuracy (measured)", "",
             "| model | task | n | pairwise_acc % | bootstrap 95% | Wilson 95% | tie rate % | margin mean | margin median |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s in report["summary"]:
        lines.append(
            f"| {s['model']} | {s['task']} | {s['n']} | {pct(s['pairwise_acc'])} | "
            f"{interval(s['bootstrap_95'])} | {interval(s['wilson_95'])} | {pct(s['tie_rate'])} | "
            f"{s['margin_mean']:.3f} | {s['margin_median']:.3f} |"
        )
    lines += ["", "Unweighted mean over the tasks each model ran:", ""]
    lines += [f"- {g['model']}: {pct(g['mean_pairwise_acc'])}% ({', '.join(g['tasks'])})"
              for g in report["group_mean"]]  # fmt: skip
    if report["context_sweep"]:
        lines += ["", "## Context-length sweep", "",
                  "Pairs cropped to L bp around their changes (the `_<L>bp` tasks); the largest L is the whole window.", "",
                  "| model | config | context (bp) | n | pairwise_acc % | bootstrap 95% |", "|---|---|---|---|---|---|"]  # fmt: skip
        lines += [
            f"| {r['model']} | {r['config']} | {r['context_bp']:,} | {r['n']} | "
            f"{pct(r['pairwise_acc'])} | {interval(r['bootstrap_95'])} |"
            for r in report["context_sweep"]
        ]
        lines += ["", "![accuracy against context length](context_sweep.png)"]
    lines += ["", "## Paired comparisons", ""]
    if report["comparisons"]:
        lines += ["| task | A | B | common pairs | only A / only B | A - B (pts) | paired bootstrap 95% | A right, B wrong | B right, A wrong | McNemar exact p |",
                  "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for c in report["comparisons"]:
            lines.append(
                f"| {c['task']} | {c['model_a']} | {c['model_b']} | {c['n_common']} | "
                f"{c['only_in_a']} / {c['only_in_b']} | {pct(c['acc_difference'])} | "
                f"{interval(c['paired_bootstrap_95'])} | {c['a_right_b_wrong']} | "
                f"{c['b_right_a_wrong']} | {c['mcnemar_exact_p']:.3g} |"
            )
    else:
        lines.append("(one model per task: nothing to compare)")
    lines += ["", "## Strata", "", f"Strata with fewer than {FEW_PAIRS} pairs are marked (few).", "",
              "| model | task | column | value | n | pairwise_acc % | Wilson 95% |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for s in report["strata"]:
        few = " (few)" if s["few_pairs"] else ""
        lines.append(
            f"| {s['model']} | {s['task']} | {s['column']} | {s['value']} | {s['n']}{few} | "
            f"{pct(s['pairwise_acc'])} | {interval(s['wilson_95'])} |"
        )
    published = report["published_reference"]
    lines += ["", "## Published reference (not measured here)", "", published["source"], "",
              "| model | motif % | synonymous % |", "|---|---|---|"]  # fmt: skip
    lines += [
        f"| {r['model']} | {r['motif']:.2f} | {r['synonymous']:.2f} |" for r in published["rows"]
    ]
    variants = report["variants"]
    lines += variant_metrics.markdown(
        variants["summary"], variants["strata"], variants["auprc_differences"],
        variants["class_ladder"],
    )
    if any(len(made) > 1 for made in report["provenance"].values()):
        lines += ["", "## Provenance", "", "| model | package | scorer | settings | task: data |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for _, made in sorted(report["provenance"].items()):
            model = made.get("model")
            if len(made) == 1:  # no provenance beyond the model's name
                continue
            settings = ", ".join(f"{k}={v}" for k, v in made.get("settings", {}).items())
            tasks = "; ".join(f"{task}: {info.get('data')} ({', '.join(f'{k}={v}' for k, v in info.items() if k != 'data')})"
                              for task, info in sorted(made.get("tasks", {}).items()))  # fmt: skip
            lines.append(f"| {model} | {made.get('version')} | {made.get('scorer')} | {settings} | {tasks} |")
    if report["saturation_maps"]:
        lines += ["", "## Saturation maps", ""]
        lines += [f"![saturation map]({name})" for name in report["saturation_maps"]]
    if report["notes"]:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in report["notes"]]
    lines += ["", "![accuracy](accuracy.png)", "", "![accuracy by codons changed](accuracy_by_codons_changed.png)",
              "", "![margins](margins.png)", ""]  # fmt: skip
    return "\n".join(lines)
