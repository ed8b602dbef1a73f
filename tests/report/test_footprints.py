"""The report's motif footprint section (``report/footprints.py``): what its Markdown shows of
several runs. Its numbers are recomputed from logged runs in ``tests/controls/test_footprints.py``."""

from __future__ import annotations

from perturbation_bench.report.footprints import SHOWN_MOTIFS, markdown


def tables(runs: dict[str, int]) -> dict[str, list[dict]]:
    """Footprint tables of runs named ``model -> number of motif-doses``."""
    motifs, summary = [], []
    for model, count in runs.items():
        dose = {"copies": 1, "spacing": 0, "rows": 4, "tied": 0, "wilcoxon_p": 0.5}
        motifs += [
            {"model": model, "task": "t", "motif": f"M{i}", "accuracy": 0.5, **dose}
            | {"vs_background": 0.25, "ties_rule": "strict"}
            for i in range(count)
        ]
        summary.append(
            {"model": model, "task": "t", "ties_rule": "strict", "rows": 4 * count}
            | {"motif_doses": count, "motif_acc": 0.5, "motifs_significant": 0.0}
            | {"background_acc": 0.25}
        )
    return {"motifs": motifs, "summary": summary}


def motif_lines(lines: list[str], model: str) -> list[str]:
    return [line for line in lines if line.startswith(f"| {model} | t | M")]


def test_the_markdown_shows_the_first_motifs_of_every_run():
    lines = markdown(tables({"a": SHOWN_MOTIFS + 9, "b": 3}))
    assert len(motif_lines(lines, "a")) == SHOWN_MOTIFS
    assert motif_lines(lines, "a")[0].startswith("| a | t | M0 | 1 | 0 | 4 | 0 | 0.500 | 0.5 |")
    assert len(motif_lines(lines, "b")) == 3
    assert f"Per motif ({SHOWN_MOTIFS + 12} rows in footprints.csv; the first " in "\n".join(lines)
    lines = markdown(tables({"a": 2, "b": 3}))
    assert "Per motif (5 rows in footprints.csv):" in lines
    assert markdown({"motifs": [], "summary": []}) == []
