"""Strand consistency of variant runs scored with ``rc_average``: do the two strands agree?

For every model and variant task whose samples hold both strands' log-likelihoods (lm-eval's raw
responses, ``samples.strand_margins``), each variant has a forward score ``f`` and a
reverse-complement score ``r`` (``pairs/ranking.variant_score`` of each strand's margin; their
mean is the task's score). Over those variants:

- ``spearman``: Spearman's rho of ``f`` with ``r``;
- ``sign_agreement``: the share of variants with ``sign(f) == sign(r)``;
- with binary labels, ``auroc`` and ``auprc`` of ``f`` alone and of ``r`` alone (and of their
  mean, the task's own), as ``pairs/ranking.py`` computes them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from perturbation_bench.pairs.ranking import METRICS, variant_score
from perturbation_bench.report.variant_metrics import labelled

STRAND_COLUMNS = {"forward": "forward", "reverse": "reverse", "average": "score"}
"""A strand's name in the metrics -> the column of its scores."""


def strand_consistency(pairs: pd.DataFrame) -> list[dict]:
    """Per model and variant task scored on both strands, the rows of the module docstring."""
    from scipy.stats import spearmanr

    if "margin_reverse" not in pairs.columns:
        return []
    rows = pairs[pairs["score_kind"].notna() & pairs["margin_reverse"].notna()]
    out = []
    for (model, task), group in rows.groupby(["model", "task"], sort=True):
        kind = str(group["score_kind"].iloc[0])
        group = group.assign(
            forward=[variant_score(m, kind) for m in group["margin_forward"]],
            reverse=[variant_score(m, kind) for m in group["margin_reverse"]],
        )
        strands = {name: group[name].to_numpy() for name in ("forward", "reverse")}
        row = {
            "model": model,
            "task": task,
            "n": len(group),
            "spearman": float(spearmanr(strands["forward"], strands["reverse"])[0])
            if len(group) > 2
            else math.nan,
            "sign_agreement": float(
                np.mean(np.sign(strands["forward"]) == np.sign(strands["reverse"]))
            ),
        }
        binary = labelled(group)
        if len(binary):
            for strand, column in STRAND_COLUMNS.items():
                for metric, function in METRICS.items():
                    row[f"{metric}_{strand}"] = function(binary["label"], binary[column])
        out.append(row)
    return out


def markdown(rows: list[dict]) -> list[str]:
    """The report's section on strand consistency (nothing without two-strand variant runs)."""
    if not rows:
        return []
    lines = [
        "",
        "## Strand consistency (rc_average)",
        "",
        "| model | task | n | Spearman fwd vs rc | sign agreement | AUPRC fwd / rc / mean |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        auprc = (
            " / ".join(f"{r[f'auprc_{s}']:.3f}" for s in ("forward", "reverse", "average"))
            if "auprc_forward" in r
            else "-"
        )
        lines.append(
            f"| {r['model']} | {r['task']} | {r['n']} | {r['spearman']:.3f} | "
            f"{r['sign_agreement']:.3f} | {auprc} |"
        )
    return lines
