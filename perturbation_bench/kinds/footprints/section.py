"""Motif footprints in the report: DART-Eval's per-motif table, the summary over motifs, and
the dose-response, for every model and footprint task (``build footprints``).

Computed from each run's samples with the formulas of ``kinds/footprints/rules.py``, under the ties
rule the run was scored with (``ties``: strict unless the run said ``correct``), which the
tables name:

- per model, task, motif and dose: rows, ties, accuracy, the one-sided Wilcoxon p-value and the
  accuracy vs background (``footprints.csv``);
- per model and task: motifs, their mean accuracy, the share with p < 0.05, the accuracy vs
  background over all rows, and the mean rho of the margin with each dose that varies;
- ``footprints.png``: each model's per-motif accuracies as a histogram, as DART-Eval draws them
  (the runs' bars side by side in each bin, never over each other), and where copies vary, the
  mean margin at each copy number, a line per run and spacing where spacings vary (a single copy
  has no spacing: its point starts every spacing's line).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from perturbation_bench.kinds.footprints.rules import (
    DOSE_AXES,
    SIGNIFICANCE,
    FootprintRow,
    beats_background,
    dose_spearman,
    mean_of,
    motif_doses,
)

SHOWN_MOTIFS = 40
"""The most per-motif rows the Markdown shows of each run (the CSV holds them all)."""
ACCURACY_BINS = 20
"""Bins of the per-motif accuracy histogram over [0, 1]."""


def footprint_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of footprint samples (those with a background comparison)."""
    if "motif_margin" not in pairs.columns:
        return pairs.iloc[0:0]
    return pairs[pairs["motif_margin"].notna() & pairs["motif"].notna()]


def _rows(group: pd.DataFrame) -> list[FootprintRow]:
    columns = ["motif", *DOSE_AXES, "ll_original", "ll_perturbed"]
    return [
        FootprintRow(str(m), int(c), int(s), float(a), float(b), float(mo), float(mp))
        for m, c, s, a, b, mo, mp in zip(
            *(group[name] for name in columns),
            group["motif_margin"],
            group["control_margin"],
            strict=True,
        )
    ]


def footprint_tables(pairs: pd.DataFrame) -> dict[str, list[dict]]:
    """``{"motifs": [...], "summary": [...]}``: the per-motif rows and the per-run summary of
    the module docstring; empty lists without footprint samples."""
    rows = footprint_pairs(pairs)
    motifs, summary = [], []
    for (model, task), group in rows.groupby(["model", "task"], sort=True):
        ties = str(group["ties_rule"].iloc[0] or "strict")
        found = _rows(group)
        doses = sorted(motif_doses(found, ties), key=lambda d: (d.motif, d.copies, d.spacing))
        motifs += [{"model": model, "task": task, "ties_rule": ties, **d._asdict()} for d in doses]
        entry = {
            "model": model,
            "task": task,
            "ties_rule": ties,
            "rows": len(found),
            "motif_doses": len(doses),
            "motif_acc": sum(d.accuracy for d in doses) / len(doses),
            "motifs_significant": sum(d.wilcoxon_p < SIGNIFICANCE for d in doses) / len(doses),
            "background_acc": sum(beats_background(r.motif_margin, r.control_margin) for r in found)
            / len(found),
        }
        for axis in DOSE_AXES:
            if group[axis].nunique() > 1:
                entry[f"{axis}_spearman"] = mean_of(dose_spearman(found, axis).values())
        summary.append(entry)
    return {"motifs": motifs, "summary": summary}


def section_tables(inputs) -> tuple[dict[str, list[dict]]]:
    """The section's one table (:func:`footprint_tables`), from the report's runs whose margins
    have a direction (``report/sections.Inputs.preferences``)."""
    return (footprint_tables(inputs.preferences),)


def write_files(out: Path, inputs, tables: dict[str, list[dict]]) -> dict[str, bool]:
    """``footprints.csv`` (the per-motif rows) and ``footprints.png`` (:func:`draw`) into
    ``out``, each where it has rows; whether the figure was drawn."""
    if tables["motifs"]:
        pd.DataFrame(tables["motifs"]).to_csv(out / "footprints.csv", index=False)
    if tables["summary"]:
        draw(tables, inputs.pairs, out / "footprints.png")
    return {"footprints": bool(tables["summary"])}


def markdown(tables: dict[str, list[dict]]) -> list[str]:
    """The report's section on motif footprints (nothing without footprint runs)."""
    if not tables["summary"]:
        return []
    lines = [
        "",
        "## Motif footprints",
        "",
        "Per motif and dose: accuracy = mean of 1[LL(motif) > LL(control)] (ties: strict) or "
        ">= (ties: correct, DART-Eval's rule); Wilcoxon signed-rank p, one-sided (greater); "
        "accuracy vs background = mean of 1[|LL(bg) - LL(motif)| > |LL(bg) - LL(control)|].",
        "",
        "| model | task | ties rule | rows | motif-doses | mean motif accuracy | p < 0.05 | "
        "accuracy vs background | rho(margin, copies) | rho(margin, spacing) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in tables["summary"]:
        rhos = [f"{r[f'{a}_spearman']:.3f}" if f"{a}_spearman" in r else "-" for a in DOSE_AXES]
        lines.append(
            f"| {r['model']} | {r['task']} | {r['ties_rule']} | {r['rows']} | {r['motif_doses']} | "
            f"{r['motif_acc']:.3f} | {r['motifs_significant']:.3f} | "
            f"{r['background_acc']:.3f} | {' | '.join(rhos)} |"
        )
    motifs = tables["motifs"]
    runs = [(r["model"], r["task"]) for r in tables["summary"]]
    shown = [
        r
        for run in runs
        for r in [m for m in motifs if (m["model"], m["task"]) == run][:SHOWN_MOTIFS]
    ]
    lines += [
        "",
        f"Per motif ({len(motifs)} rows in footprints.csv"
        + (f"; the first {SHOWN_MOTIFS} of each run here):" if len(shown) < len(motifs) else "):"),
        "",
        "| model | task | motif | copies | spacing | rows | tied | accuracy | Wilcoxon p | "
        "vs background |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in shown:
        lines.append(
            f"| {r['model']} | {r['task']} | {r['motif']} | {r['copies']} | {r['spacing']} | "
            f"{r['rows']} | {r['tied']} | {r['accuracy']:.3f} | {r['wilcoxon_p']:.3g} | "
            f"{r['vs_background']:.3f} |"
        )
    return lines


def draw(tables: dict[str, list[dict]], pairs: pd.DataFrame, path) -> None:
    """``footprints.png`` (module docstring), by the rules of ``plots.py``: each run's per-motif
    accuracies as a histogram of :data:`ACCURACY_BINS` bins over [0, 1] (whole-number counts,
    the chance level 0.5 as a line, each run's number of motif-doses in its label) and, where
    copies vary, each run's mean margin at each copy number with its standard error (offset
    and marked per run, its number of rows in its label)."""
    from matplotlib.ticker import MaxNLocator

    from perturbation_bench.report.plots import (
        CHANCE,
        LAYOUT,
        MARKERS,
        SIZE,
        plt,
        save_figure,
        series_offset,
    )

    motifs = pd.DataFrame(tables["motifs"])
    rows = footprint_pairs(pairs)
    doses = rows["copies"].nunique() > 1
    figure, axes = plt.subplots(
        1, 2 if doses else 1, figsize=(SIZE[0] * (1.4 if doses else 1), SIZE[1]), layout=LAYOUT
    )
    histogram, response = (axes[0], axes[1]) if doses else (axes, None)
    runs = list(motifs.groupby(["model", "task"], sort=True))
    histogram.hist(
        [group["accuracy"] for _, group in runs],
        bins=ACCURACY_BINS,
        range=(0, 1),
        label=[f"{model} {task} (n={len(group)} motif-doses)" for (model, task), group in runs],
    )
    histogram.axvline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")
    histogram.yaxis.set_major_locator(MaxNLocator(integer=True))
    histogram.set_xlim(0, 1)
    histogram.set_xlabel("accuracy per motif and dose")
    histogram.set_ylabel("motif-doses")
    histogram.set_title("Footprinting accuracy per motif")
    _legend_below(histogram)
    if response is not None:
        series = list(_dose_series(rows))
        for index, (label, group) in enumerate(series):
            means = group.groupby("copies")["margin"].agg(["mean", "sem"])
            response.errorbar(
                means.index + series_offset(index, len(series)),
                means["mean"],
                yerr=means["sem"],
                marker=MARKERS[index % len(MARKERS)],
                capsize=3,
                label=f"{label} (n={len(group)})",
            )
        response.axhline(0, color="grey", lw=0.8)
        response.set_xticks(sorted(rows["copies"].unique()))
        response.set_xlabel("copies of the motif")
        response.set_ylabel("mean LL(motif) - LL(control), nats")
        response.set_title("Dose-response (mean and standard error)")
        _legend_below(response)
    save_figure(figure, path)


def _dose_series(rows: pd.DataFrame):
    """``(label, rows)`` per line of the dose panel (module docstring): per run, or per run and
    spacing where more than one spacing of several copies is present."""
    spacings = sorted(rows.loc[rows["copies"] > 1, "spacing"].unique())
    for (model, task), group in rows.groupby(["model", "task"], sort=True):
        if len(spacings) <= 1:
            yield f"{model} {task}", group
            continue
        for spacing in spacings:
            chosen = (group["copies"] == 1) | (group["spacing"] == spacing)
            yield f"{model} {task} spacing {spacing} bp", group[chosen]


def _legend_below(axes) -> None:
    """The legend under the axes, where it covers no bar or point."""
    axes.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), borderaxespad=0)
