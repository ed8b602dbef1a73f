"""The report's motif footprint section (``kinds/footprints/section.py``): what its Markdown shows of
several runs, and its figure read back from the drawn axes. Its numbers are recomputed from logged runs in ``tests/controls/test_footprints.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perturbation_bench.kinds.footprints.section import ACCURACY_BINS, SHOWN_MOTIFS, draw, markdown


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


@pytest.fixture
def drawn(monkeypatch):
    """The figures the report would save, kept open for reading."""
    from perturbation_bench.report import plots

    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: figures.append(figure))
    return figures


def test_the_figure_draws_each_runs_accuracies_and_its_mean_margin_per_copy_number(drawn):
    from matplotlib.colors import to_hex
    from matplotlib.container import BarContainer

    accuracies = {"a": [0.0, 0.5, 0.55, 1.0], "b": [0.25, 0.25, 0.96]}
    motifs = [  # run b's rows first: the runs are drawn in sorted order all the same
        {"model": model, "task": "t", "motif": f"M{i}", "accuracy": accuracy}
        for model, values in reversed(accuracies.items())
        for i, accuracy in enumerate(values)
    ]
    margins = {1: [0.0, 1.0, 2.0], 4: [3.0, 5.0]}
    pairs = pd.DataFrame(
        [
            {"model": model, "task": "t", "motif": "M0", "copies": copies, "margin": m + shift}
            | {"motif_margin": 0.0, "spacing": 0 if copies == 1 else 2}
            for model, shift in (("a", 0.0), ("b", -1.0))
            for copies, values in margins.items()
            for m in values
        ]
    )
    draw({"motifs": motifs, "summary": []}, pairs, "unused.png")
    histogram, response = drawn[0].axes
    bars = [c for c in histogram.containers if isinstance(c, BarContainer)]
    for container, (model, values) in zip(bars, accuracies.items(), strict=True):
        heights = [patch.get_height() for patch in container.patches]
        assert heights == np.histogram(values, ACCURACY_BINS, (0, 1))[0].tolist()
        assert container.patches[0].get_label() == f"{model} t (n={len(values)} motif-doses)"
    for a, b in zip(bars[0].patches, bars[1].patches, strict=True):  # side by side in a bin
        assert a.get_x() + a.get_width() <= b.get_x() + 1e-12 and a.get_alpha() in (None, 1)
    (chance,) = [line for line in histogram.lines if line.get_label() == "chance (0.5)"]
    assert chance.get_xdata()[0] == 0.5
    series = [c for c in response.containers if c.get_label().endswith("(n=5)")]
    assert [c.get_label() for c in series] == ["a t (n=5)", "b t (n=5)"]
    for container, shift in zip(series, (0.0, -1.0), strict=True):
        line, _, (bars_y,) = container.lines
        assert line.get_ydata().tolist() == pytest.approx([1.0 + shift, 4.0 + shift])
        xs = line.get_xdata().tolist()
        assert xs[1] - xs[0] == 3 and abs(xs[0] - 1) < 0.5  # at copies 1 and 4, offset
        spans = [segment[1][1] - segment[0][1] for segment in bars_y.get_segments()]
        assert spans == pytest.approx(
            [2 * np.std(v, ddof=1) / np.sqrt(len(v)) for v in margins.values()]
        )
    assert series[0].lines[0].get_xdata()[0] != series[1].lines[0].get_xdata()[0]
    assert series[0].lines[0].get_marker() != series[1].lines[0].get_marker()
    for container, bar in zip(series, bars, strict=True):  # one colour per run in both panels
        assert to_hex(container.lines[0].get_color()) == to_hex(bar.patches[0].get_facecolor())


def test_one_copy_number_draws_the_histogram_alone(drawn):
    pairs = pd.DataFrame(
        [{"model": "a", "task": "t", "motif": "M", "copies": 1, "margin": 0.5, "motif_margin": 0}]
    )
    motifs = [{"model": "a", "task": "t", "motif": "M", "accuracy": 1.0}]
    draw({"motifs": motifs, "summary": []}, pairs, "unused.png")
    assert len(drawn[0].axes) == 1


def test_the_dose_panel_draws_a_line_per_spacing_each_from_the_single_copy(drawn):
    """Copies 1 (no spacing), and 2 copies at spacings 0 and 5: two lines, each through the
    single copy's mean and its own spacing's, labelled with the spacing; nothing pooled."""
    rows = [(1, 0, 1.0), (1, 0, 3.0), (2, 0, 4.0), (2, 0, 6.0), (2, 5, 10.0), (2, 5, 14.0)]
    pairs = pd.DataFrame(
        [
            {"model": "a", "task": "t", "motif": "M", "copies": c, "spacing": s, "margin": m}
            | {"motif_margin": 0.0}
            for c, s, m in rows
        ]
    )
    motifs = [{"model": "a", "task": "t", "motif": "M", "accuracy": 1.0}]
    draw({"motifs": motifs, "summary": []}, pairs, "unused.png")
    _, response = drawn[0].axes
    lines = {c.get_label(): c.lines[0].get_ydata().tolist() for c in response.containers}
    assert lines == {
        "a t spacing 0 bp (n=4)": [2.0, 5.0],
        "a t spacing 5 bp (n=4)": [2.0, 12.0],
    }


def test_the_summary_s_motif_acc_is_the_unweighted_mean_over_motif_doses():
    """As the task's (``test_task.py``): M at one copy 1 of 1 right, at two copies 1 of 3, N 0
    of 4 (a tie among them, strict): (1 + 1/3 + 0) / 3, not the 2 of 8 rows."""
    from perturbation_bench.kinds.footprints.section import footprint_tables

    lls = [("M", 1, -1.0), ("M", 2, -1.0), ("M", 2, -3.0), ("M", 2, -4.0)]
    lls += [("N", 1, a) for a in (-2.0, -3.0, -3.0, -5.0)]
    pairs = pd.DataFrame(
        [
            {"model": "m", "task": "t", "ties_rule": "strict", "motif": motif, "copies": copies,
             "spacing": 0, "ll_original": a, "ll_perturbed": -2.0, "motif_margin": 1.0,
             "control_margin": 0.0 if k < 2 else 2.0}
            for k, (motif, copies, a) in enumerate(lls)
        ]
    )  # fmt: skip
    (summary,) = footprint_tables(pairs)["summary"]
    assert (summary["rows"], summary["motif_doses"]) == (8, 3)
    assert summary["motif_acc"] == pytest.approx((1 + 1 / 3 + 0) / 3, rel=1e-15)
    assert summary["background_acc"] == 2 / 8
