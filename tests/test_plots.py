"""The report's figures keep their rules (``report/plots.py``): read back from the drawn figure."""

from __future__ import annotations

import pandas as pd
import pytest

from perturbation_bench.report import plots
from perturbation_bench.report.statistics import wilson_interval


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot functions would save, kept open for reading."""
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: figures.append(figure))
    return figures


def row(model, task, k, n, **extra):
    return {"model": model, "task": task, "n": n, "pairwise_acc": k / n,
            "wilson_95": list(wilson_interval(k, n)), "bootstrap_95": [k / n, k / n], **extra}  # fmt: skip


def test_accuracy_bars_rise_from_zero_with_the_wilson_interval(drawn, tmp_path):
    summary = [row("m", "perturbation_syn_human", 0, 24), row("m", "perturbation_motif_human", 18, 24)]
    plots.accuracy(summary, tmp_path / "a.png")
    (axes,) = drawn[0].axes
    from matplotlib.container import BarContainer

    (bars,) = [c for c in axes.containers if isinstance(c, BarContainer)]
    heights = {round(b.get_x() + b.get_width() / 2): (b.get_y(), b.get_height()) for b in bars}
    tasks = sorted(s["task"] for s in summary)
    for s in summary:
        assert heights[tasks.index(s["task"])] == (0.0, pytest.approx(s["pairwise_acc"]))
    segments = bars.errorbar.lines[2][0].get_segments()
    drawn_intervals = sorted(bound for seg in segments for bound in (seg[0][1], seg[1][1]))
    expected = sorted(bound for s in summary for bound in s["wilson_95"])
    assert drawn_intervals == pytest.approx(expected)
    assert drawn_intervals[1] > 0.13  # 0 of 24 is [0, 13.8%], not a point
    assert axes.get_ylim() == (0.0, 1.0)


def strata_rows(series, ns):
    bins = ["(0.0, 0.2]", "(0.2, 0.4]", "(0.4, 0.6]", "(0.6, 0.8]"]
    return [row(model, "perturbation_syn_human", n // 2, n, value=value)
            for model in series for value, n in zip(bins, ns)]  # fmt: skip


def test_binned_plots_show_n_and_join_only_bins_with_enough_pairs(drawn, tmp_path):
    ns = [40, 12, 3, 25]  # bins 2-3 and 3-4 touch a bin of 3 pairs: no line there
    plots.accuracy_by_codons_changed(strata_rows(["m"], ns), tmp_path / "b.png")
    (axes,) = drawn[0].axes
    assert sorted(t.get_text() for t in axes.texts) == sorted(f"n={n}" for n in ns)
    joined = [line for line in axes.lines if len(line.get_xdata()) == 2 and line.get_linestyle() == "-"]
    assert [round(line.get_xdata()[0]) for line in joined] == [0]


def test_series_that_coincide_stay_apart(drawn, tmp_path):
    plots.accuracy_by_codons_changed(strata_rows(["a", "b"], [40, 40, 40, 40]), tmp_path / "c.png")
    (axes,) = drawn[0].axes
    points = [c.lines[0] for c in axes.containers]
    assert len(points) == 2
    assert points[0].get_marker() != points[1].get_marker()
    assert all(x0 != x1 for x0, x1 in zip(points[0].get_xdata(), points[1].get_xdata()))
    sweep = [{"model": m, "config": "perturbation_syn_human", "context_bp": L, "pairwise_acc": 0.6,
              "bootstrap_95": [0.5, 0.7]} for m in ("a", "b") for L in (512, 1024)]  # fmt: skip
    plots.context_sweep(sweep, tmp_path / "d.png")
    lines = [line for line in drawn[1].axes[0].lines if line.get_marker() not in (None, "None")]
    assert len(lines) == 2 and lines[0].get_marker() != lines[1].get_marker()
    assert list(lines[0].get_xdata()) != list(lines[1].get_xdata())


def test_causal_and_masked_margins_get_separate_panels(drawn, tmp_path):
    pairs = pd.DataFrame(
        [{"task": t, "model": m, "scale": s, "margin": v}
         for t in ("perturbation_syn_human", "perturbation_motif_human")
         for m, s, v in (("causal-a", "causal", -30.0), ("causal-a", "causal", 12.0),
                         ("mlm", "masked", 0.4), ("mlm", "masked", -0.1))]
    )  # fmt: skip
    plots.margins(pairs, tmp_path / "e.png")
    axes = drawn[0].axes
    assert len(axes) == 4
    for panel in axes:
        scale = "masked" if "(masked)" in panel.get_title() else "causal"
        labels = {text.get_text() for text in panel.get_legend().get_texts()}
        assert labels == ({"mlm"} if scale == "masked" else {"causal-a"})


@pytest.mark.parametrize("model, scale", [("dna-mlm", "masked"), ("dna-hf", "causal"),
                                          ("hf", "causal"), ("kmer-markov", "causal")])  # fmt: skip
def test_a_run_knows_the_scale_of_its_scores_from_its_model(tmp_path, model, scale):
    import json

    from perturbation_bench.report.runs import _run_settings

    (tmp_path / "results_2026-12-01.json").write_text(
        json.dumps({"model_name": "m", "config": {"model": model, "limit": None}})
    )
    assert _run_settings(tmp_path) == ("m", None, scale, {})
