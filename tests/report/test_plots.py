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
    return {
        "model": model,
        "task": task,
        "n": n,
        "pairwise_acc": k / n,
        "wilson_95": list(wilson_interval(k, n)),
        "bootstrap_95": [k / n, k / n],
        **extra,
    }


def test_accuracy_bars_rise_from_zero_with_the_wilson_interval(drawn, tmp_path):
    summary = [
        row("m", "perturbation_syn_human", 0, 24),
        row("m", "perturbation_motif_human", 18, 24),
    ]
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
    return [
        row(model, "perturbation_syn_human", n // 2, n, value=value)
        for model in series
        for value, n in zip(bins, ns, strict=True)
    ]


def test_binned_plots_show_n_and_join_only_bins_with_enough_pairs(drawn, tmp_path):
    ns = [40, 12, 3, 25]  # bins 2-3 and 3-4 touch a bin of 3 pairs: no line there
    plots.accuracy_by_codons_changed(strata_rows(["m"], ns), tmp_path / "b.png")
    (axes,) = drawn[0].axes
    assert sorted(t.get_text() for t in axes.texts) == sorted(f"n={n}" for n in ns)
    joined = [
        line for line in axes.lines if len(line.get_xdata()) == 2 and line.get_linestyle() == "-"
    ]
    assert [round(line.get_xdata()[0]) for line in joined] == [0]


def test_series_that_coincide_stay_apart(drawn, tmp_path):
    plots.accuracy_by_codons_changed(strata_rows(["a", "b"], [40, 40, 40, 40]), tmp_path / "c.png")
    (axes,) = drawn[0].axes
    points = [c.lines[0] for c in axes.containers]
    assert len(points) == 2
    assert points[0].get_marker() != points[1].get_marker()
    assert all(
        x0 != x1 for x0, x1 in zip(points[0].get_xdata(), points[1].get_xdata(), strict=True)
    )
    sweep = [
        {
            "model": m,
            "config": "perturbation_syn_human",
            "context_bp": L,
            "pairwise_acc": 0.6,
            "bootstrap_95": [0.5, 0.7],
            "n": 20,
        }
        for m in ("a", "b")
        for L in (512, 1024)
    ]
    plots.context_sweep(sweep, tmp_path / "d.png")
    lines = [line for line in drawn[1].axes[0].lines if line.get_marker() not in (None, "None")]
    assert len(lines) == 2 and lines[0].get_marker() != lines[1].get_marker()
    assert list(lines[0].get_xdata()) != list(lines[1].get_xdata())


def test_causal_and_masked_margins_get_separate_panels(drawn, tmp_path):
    pairs = pd.DataFrame(
        [
            {"task": t, "model": m, "scale": s, "margin": v}
            for t in ("perturbation_syn_human", "perturbation_motif_human")
            for m, s, v in (
                ("causal-a", "causal", -30.0),
                ("causal-a", "causal", 12.0),
                ("mlm", "masked", 0.4),
                ("mlm", "masked", -0.1),
            )
        ]
    )
    plots.margins(pairs, tmp_path / "e.png")
    axes = drawn[0].axes
    assert len(axes) == 4
    for panel in axes:
        scale = "masked" if "(masked)" in panel.get_title() else "causal"
        labels = {text.get_text() for text in panel.get_legend().get_texts()}
        assert labels == ({"mlm (n=2)"} if scale == "masked" else {"causal-a (n=2)"})


@pytest.mark.parametrize(
    "model, scale",
    [("dna-mlm", "masked"), ("dna-hf", "causal"), ("hf", "causal"), ("kmer-markov", "causal")],
)
def test_a_run_knows_the_scale_of_its_scores_from_its_model(tmp_path, model, scale):
    import json

    from perturbation_bench.report.runs import _run_settings

    (tmp_path / "results_2026-12-01.json").write_text(
        json.dumps({"model_name": "m", "config": {"model": model, "limit": None}})
    )
    assert _run_settings(tmp_path) == (model, None, scale, {}, model, {})


def texts_inside(figure) -> list[str]:
    """The texts of ``figure`` that fall outside it once drawn (they would be clipped): titles,
    axis labels, annotations, legends, and the tick labels of ticks within each axis's view."""
    figure.canvas.draw()
    renderer, bounds = figure.canvas.get_renderer(), figure.bbox
    texts = list(figure.texts)
    if figure._suptitle is not None:
        texts.append(figure._suptitle)
    for axes in figure.axes:
        texts += [axes.title, axes.xaxis.label, axes.yaxis.label, *axes.texts]
        if axes.get_legend() is not None:
            texts += axes.get_legend().get_texts()
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            texts += [
                tick.label1
                for tick in axis.get_major_ticks()
                if low <= tick.get_loc() <= high and tick.label1.get_visible()
            ]
    outside = []
    for text in texts:
        if not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if (
            box.x0 < bounds.x0 - 1
            or box.y0 < bounds.y0 - 1
            or box.x1 > bounds.x1 + 1
            or box.y1 > bounds.y1 + 1
        ):
            outside.append(text.get_text())
    return outside


def test_a_zero_bar_is_seen_and_every_bar_says_its_n(drawn, tmp_path):
    summary = [
        row("m", "perturbation_syn_human", 0, 24),
        row("m", "perturbation_motif_human", 7, 9),
    ]
    plots.accuracy(summary, tmp_path / "a.png")
    (axes,) = drawn[0].axes
    markers = [line for line in axes.lines if line.get_marker() == "o"]
    assert any(0.0 in list(line.get_ydata()) for line in markers)  # the 0 of 24 bar, drawn at 0
    labels = {text.get_text() for text in axes.texts}
    assert {"n=24", "n=9"} <= labels
    assert texts_inside(drawn[0]) == []


def test_margin_counts_have_whole_ticks_and_nothing_is_clipped(drawn, tmp_path):
    pairs = pd.DataFrame(
        [
            {
                "task": "perturbation_syn_human",
                "model": f"a model with a long name {m}",
                "scale": "causal",
                "margin": v,
            }
            for m in range(2)
            for v in (-3.0, -1.0, 0.5, 2.0, 2.5)
        ]
    )
    plots.margins(pairs, tmp_path / "e.png")
    (axes,) = drawn[0].axes
    drawn[0].canvas.draw()
    ticks = [t for t in axes.get_yticks() if axes.get_ylim()[0] <= t <= axes.get_ylim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)
    assert texts_inside(drawn[0]) == []


def test_the_variant_figures_say_their_n(monkeypatch, tmp_path):
    from perturbation_bench.report import variant_plots

    kept = []
    monkeypatch.setattr(variant_plots, "save_figure", lambda figure, path: kept.append(figure))
    labelled = pd.DataFrame(
        [
            {
                "task": "perturbation_variants",
                "model": "m",
                "label": k % 2 == 0,
                "score": float(k % 3),
            }
            for k in range(12)
        ]
    )
    variant_plots.ranking_curves(labelled, tmp_path / "roc.png", tmp_path / "pr.png")
    from sklearn.metrics import average_precision_score, roc_auc_score

    areas = (  # computed here from the rows, as the legend must say
        f"AUROC {roc_auc_score(labelled['label'], labelled['score']):.3f}",
        f"AUPRC {average_precision_score(labelled['label'], labelled['score']):.3f}",
    )
    for figure, area in zip(kept, areas, strict=True):
        legend = {t.get_text() for t in figure.axes[0].get_legend().get_texts()}
        assert f"m ({area}; n=12, 6 positive)" in legend
    ladder = [
        {
            "model": "m",
            "task": "perturbation_variants",
            "consequence": c,
            "n": n,
            "pairwise_acc": 0.5,
            "bootstrap_95": [0.3, 0.7],
            "margin_mean": 0.1,
        }
        for c, n in (("synonymous_variant", 14), ("stop_gained", 3))
    ]
    variant_plots.class_ladder(ladder, ["synonymous_variant", "stop_gained"], tmp_path / "l.png")
    assert {"n=14", "n=3"} <= {t.get_text() for t in kept[-1].axes[0].texts}
    assert texts_inside(kept[-1]) == []


def test_the_reference_base_is_not_drawn_as_a_neutral_change(monkeypatch, tmp_path):
    from perturbation_bench.report import variant_plots

    kept = []
    monkeypatch.setattr(variant_plots.plt, "close", kept.append)
    rows = pd.DataFrame(
        [
            {
                "model": "m",
                "chrom": "1",
                "pos": 11 + i,
                "ref": ref,
                "alt": alt,
                "margin": 0.0 if alt == "A" else 1.0,
            }
            for i, ref in enumerate("CG")
            for alt in "ACGT"
            if alt != ref
        ]
    )
    variant_plots.saturation_map(rows, "1:11-12", tmp_path / "map.png")
    image = kept[0].axes[0].images[0]
    neutral = image.cmap(image.norm(0.0))
    bad = image.cmap.get_bad()  # what the NaN cells of the reference base are painted with
    assert bad[3] == 1.0  # opaque: not the axes' white showing through
    assert bad[:3] != pytest.approx(neutral[:3], abs=0.05)
    assert "n=6 variants" in kept[0].axes[0].get_title()


def test_margins_of_many_tasks_keep_every_label_inside(drawn, tmp_path, recwarn):
    """A panel per task: eight tasks widen the figure instead of collapsing the layout."""
    pairs = pd.DataFrame(
        [
            {"task": f"perturbation_task_{t}", "model": "m", "scale": "causal", "margin": float(v)}
            for t in range(8)
            for v in range(-3, 4)
        ]
    )
    plots.margins(pairs, tmp_path / "e.png")
    assert texts_inside(drawn[0]) == []
    assert not [w for w in recwarn if "constrained_layout not applied" in str(w.message)]


def test_error_bars_are_never_negative_when_an_interval_misses_its_point():
    """A percentile bootstrap interval may lie beside its point: that side's bar has length 0."""
    rows = [
        {"pairwise_acc": 0.9, "bootstrap_95": [0.91, 0.97]},
        {"pairwise_acc": 0.2, "bootstrap_95": [0.05, 0.19]},
    ]
    assert plots.error_bars(rows, "bootstrap_95") == [
        [0.0, pytest.approx(0.15)],
        [pytest.approx(0.07), 0.0],
    ]


def test_the_context_sweep_legend_names_each_line_and_its_n(drawn, tmp_path):
    sweep = [
        {
            "model": f"runs/{m}",
            "config": "perturbation_syn_human",
            "context_bp": L,
            "pairwise_acc": 0.6,
            "bootstrap_95": [0.5, 0.7],
            "n": n,
        }
        for m, n in (("a", 20), ("b", 12))
        for L in (512, 1024)
    ]
    plots.context_sweep(sweep, tmp_path / "d.png")
    (axes,) = drawn[0].axes
    assert [t.get_text() for t in axes.get_legend().get_texts()] == [
        "a / syn_human (n=20)",
        "b / syn_human (n=12)",
        "chance (0.5)",
    ]


def test_each_figure_is_written_where_it_is_asked(tmp_path):
    """Unpatched: the file exists at the path given, 900 px wide (the figure rules' width)."""
    from matplotlib.image import imread

    plots.accuracy_by_codons_changed(strata_rows(["m"], [40, 12, 30, 25]), tmp_path / "codons.png")
    assert imread(tmp_path / "codons.png").shape[1] == 900


@pytest.mark.parametrize(
    "config, scale",
    [
        ({"model_args": "pretrained=m,scoring=pll"}, "pll"),
        ({"perturbation_bench": {"settings": {"scoring": "pll"}}}, "pll"),
        ({"perturbation_bench": {"settings": {"scoring": "marginal"}}}, "masked"),
    ],
)
def test_a_pll_run_is_on_its_own_scale_labelled_as_such(tmp_path, config, scale):
    import json

    from perturbation_bench.report.plots import SCALE_LABELS
    from perturbation_bench.report.runs import _run_settings

    (tmp_path / "results_2026-12-01.json").write_text(
        json.dumps({"model_name": "m", "config": {"model": "dna-mlm", **config}})
    )
    assert _run_settings(tmp_path)[2] == scale
    assert SCALE_LABELS["pll"] == "pseudo-log-likelihood of the whole sequence"


def test_the_accuracy_legend_covers_no_bar(drawn, tmp_path):
    """Three models of bars near 1 fill the top of the axes, where a legend inside would sit."""
    summary = [
        row(model, task, 23, 24)
        for model in ("a long model name one", "a long model name two", "model three")
        for task in ("perturbation_syn_human", "perturbation_motif_human")
    ]
    plots.accuracy(summary, tmp_path / "a.png")
    figure = drawn[0]
    (axes,) = figure.axes
    figure.canvas.draw()
    legend = axes.get_legend().get_window_extent(figure.canvas.get_renderer())
    artists = [*axes.patches, *axes.lines]
    boxes = [a.get_window_extent(figure.canvas.get_renderer()) for a in artists]
    assert len(axes.patches) == 6 and not any(legend.overlaps(box) for box in boxes)
    assert texts_inside(figure) == []


def test_quantitative_labels_get_a_scatter_with_each_model_s_rho(monkeypatch, tmp_path):
    from scipy.stats import spearmanr

    from perturbation_bench.report import variant_plots

    kept = []
    monkeypatch.setattr(variant_plots, "save_figure", lambda figure, path: kept.append(figure))
    labels = [0.1 * k for k in range(20)]
    rows = pd.DataFrame(
        [
            {
                "task": "perturbation_dms",
                "model": model,
                "label": x,
                "score": score,
                "score_kind": "llr",
            }
            for model, scores in (
                ("up", [x + (0.3 if k % 3 else -0.2) for k, x in enumerate(labels)]),
                ("down", [-(x**2) + 0.05 * (k % 4) for k, x in enumerate(labels)]),
            )
            for k, (x, score) in enumerate(zip(labels, scores, strict=True))
        ]
    )
    variant_plots.score_against_label(rows, tmp_path / "s.png")
    (axes,) = kept[0].axes
    legend = {t.get_text() for t in axes.get_legend().get_texts()}
    expected = {
        f"{model} (rho {spearmanr(group['score'], group['label'])[0]:.3f}; n=20)"
        for model, group in rows.groupby("model")
    }
    assert legend == expected
    points = sorted(
        (round(x, 6), round(y, 6)) for c in axes.collections for x, y in c.get_offsets()
    )
    assert points == sorted(
        (round(x, 6), round(y, 6)) for x, y in zip(rows["label"], rows["score"], strict=True)
    )
    assert axes.get_ylabel() == "score (llr)" and texts_inside(kept[0]) == []
