"""The report as Markdown (``report.md``): the tables of ``report.json``, then the figures."""

from __future__ import annotations

from perturbation_bench.report.sections import SECTIONS


def to_markdown(report: dict) -> str:
    """The report as Markdown: every section's tables in the order of
    :data:`~perturbation_bench.report.sections.SECTIONS`, then the provenance where a run
    recorded it, the saturation maps, the notes and the figures no section shows."""
    lines = ["# perturbation-bench report", ""]
    for section in SECTIONS:
        lines += section.markdown(*section.stored(report))
    if any(len(made) > 1 for made in report["provenance"].values()):
        lines += [
            "",
            "## Provenance",
            "",
            "| model | package | scorer | settings | task: data |",
            "|---|---|---|---|---|",
        ]
        for _, made in sorted(report["provenance"].items()):
            model = made.get("model")
            if len(made) == 1:  # no provenance beyond the model's name
                continue
            settings = ", ".join(f"{k}={v}" for k, v in made.get("settings", {}).items())
            tasks = "; ".join(
                f"{task}: {info.get('data')} ({', '.join(f'{k}={v}' for k, v in info.items() if k != 'data')})"
                for task, info in sorted(made.get("tasks", {}).items())
            )
            lines.append(
                f"| {model} | {made.get('version')} | {made.get('scorer')} | {settings} | {tasks} |"
            )
    if report["saturation_maps"]:
        lines += ["", "## Saturation maps", ""]
        lines += [f"![saturation map]({name})" for name in report["saturation_maps"]]
    if report["notes"]:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in report["notes"]]
    lines.append("")
    if report["figures"].get("accuracy"):
        lines += ["![accuracy](accuracy.png)", ""]
    if report["figures"].get("accuracy_by_codons_changed"):
        lines += ["![accuracy by codons changed](accuracy_by_codons_changed.png)", ""]
    lines += ["![margins](margins.png)", ""]
    return "\n".join(lines)
