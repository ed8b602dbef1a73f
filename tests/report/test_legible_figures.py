"""Figures stay legible with a dozen runs of long names: every label whole (no truncation), the
legend beside the axes, and every text artist's window extent inside the figure."""

from __future__ import annotations

import pytest

from perturbation_bench.report import plots
from perturbation_bench.report.leaderboard_files import write_leaderboard

TASKS = ["perturbation_syn_human", "perturbation_motif_human"]
NAMES = [f"model-from-a-long-temporary-folder-name-run-{i:02d}".ljust(60, "x") for i in range(12)]
"""12 run names of 60 characters, alike in their first 46 (as names from temp paths are)."""


def texts_outside(figure) -> list[str]:
    """The visible texts of ``figure`` whose window extent leaves the figure's bounding box."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    box = figure.bbox
    undrawn = {id(label) for label in undrawn_tick_labels(figure)}
    outside = []
    for text in figure.findobj(lambda artist: hasattr(artist, "get_text")):
        if not text.get_visible() or not text.get_text() or id(text) in undrawn:
            continue
        extent = text.get_window_extent(renderer)
        if extent.x0 < box.x0 or extent.y0 < box.y0 or extent.x1 > box.x1 or extent.y1 > box.y1:
            outside.append(text.get_text())
    return outside


def undrawn_tick_labels(figure):
    """Tick labels matplotlib keeps but does not draw: their tick lies outside the axis's view."""
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                if not low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    yield from (tick.label1, tick.label2)


@pytest.fixture
def drawn(monkeypatch):
    """The figures a call draws, kept open instead of saved."""
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: figures.append(figure))
    return figures


def test_the_accuracy_figure_keeps_twelve_long_names_whole_and_inside(drawn, tmp_path):
    summary = [
        {"task": task, "model": name, "pairwise_acc": 0.5, "n": 24, "wilson_95": (0.3, 0.7)}
        for task in TASKS
        for name in NAMES
    ]
    plots.accuracy(summary, tmp_path / "accuracy.png")
    (figure,) = drawn
    (axes,) = figure.axes
    assert [text.get_text() for text in axes.get_legend().get_texts()][-12:] == NAMES
    assert texts_outside(figure) == []


def test_the_leaderboard_figure_keeps_twelve_long_names_whole_and_inside(drawn, tmp_path):
    cell = {"metric": "pairwise_acc", "value": 0.5, "stderr": None, "n": 24, "low": 0.3,
            "high": 0.7, "data": "sha256:aa", "rank": 1, "apart": None}  # fmt: skip
    rows = [
        {
            "name": name,
            "folder": name,
            "mean_rank": 1.0,
            "floor": None,
            "tasks": dict.fromkeys(TASKS, cell),
        }
        for name in NAMES
    ]
    write_leaderboard(TASKS, rows, tmp_path / "board")
    (figure,) = drawn
    first = figure.axes[0]
    assert [label.get_text() for label in first.get_yticklabels()] == NAMES
    assert texts_outside(figure) == []
