"""``report --export traitgym DIR``: the labelled variant runs in TraitGym's file layout.

For every model and variant task with binary labels (``variant_metrics.ranking_summary``), under
``DIR/<task>/``:

- ``test.parquet``: the task's variants (``chrom``, ``pos``, ``ref``, ``alt``, ``label``) in the
  order of its data's rows, which is the input's order less the variants the build excluded
  (named in the build's ``_excluded.tsv``): TraitGym's ``results/dataset/<dataset>/test.parquet``;
- ``preds/all/<model>.parquet``: one ``score`` column in that row order, the sign applied
  (``pairs/ranking.py``: a larger score is a more damaging variant), the model named
  ``<features>.<plus|minus>.<feature>`` as TraitGym names unsupervised scores: ``<run>_LLR.minus.score``
  for ``llr`` (s = -LLR), ``<run>_absLLR.plus.score`` for ``abs_llr`` (each score's name in
  ``pairs/scores.py``), ``<run>_Embeddings.plus.
  euclidean_distance`` (the score's own name) for ``scoring=embedding``;
- ``AUPRC/all/<model>.csv`` and ``AUROC/all/<model>.csv``: TraitGym's ``get_metric`` columns
  ``Model,<metric>,se``;
- ``AUPRC_by_chrom_weighted_average/all/<model>.csv`` and the AUROC one: its
  ``get_metric_by_block_weighted_average`` columns ``model,metric,score,se``.

Sharded runs are refused (their rows have no one order). The values are the report's own (``variant_metrics.py``: the same definitions, TraitGym's
standard errors). ``<run>`` is the report's name of the run with every character other than a
letter, digit, ``-`` or ``_`` replaced by ``_``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.scores import SCORES
from perturbation_bench.report.variant_metrics import labelled

FORMATS = ("traitgym",)
FEATURES = {score.name: score.traitgym for score in SCORES}
"""The task's ``score`` -> TraitGym's ``(features, sign, feature)`` (``pairs/scores.py``)."""


def traitgym_name(run: str, score: str) -> str:
    """The model's file name (module docstring); a run named by its embedding score
    (``run_names.py``) carries it once."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", " ".join(w for w in run.split(" ") if w != score))
    if score in FEATURES:
        features, sign, feature = FEATURES[score]
        return f"{safe}_{features}.{sign}.{feature}"
    return f"{safe}_{re.sub(r'[^A-Za-z0-9_.-]', '_', score)}"


def export_traitgym(pairs: pd.DataFrame, summary: list[dict], out: str | Path) -> list[Path]:
    """Write the files of the module docstring for every row of ``summary``; their paths."""
    out, written = Path(out), []
    rows = labelled(pairs)
    for entry in summary:
        group = rows[(rows["model"] == entry["model"]) & (rows["task"] == entry["task"])]
        if group["shard"].notna().any():
            raise OptionsError(
                f"--export traitgym: {entry['model']} scored {entry['task']} in shards, whose "
                "rows have no one order; export an unsharded run"
            )
        group = group.sort_values("doc_id", kind="stable")
        folder = out / entry["task"]
        name = traitgym_name(entry["model"], entry["score"])
        variants = group[["chrom", "pos", "ref", "alt", "label"]].reset_index(drop=True)
        files = {
            folder / "test.parquet": variants,
            folder / "preds" / "all" / f"{name}.parquet": group[["score"]].reset_index(drop=True),
        }
        for metric in ("auprc", "auroc"):
            upper = metric.upper()
            files[folder / upper / "all" / f"{name}.csv"] = pd.DataFrame(
                {"Model": [name], upper: [entry[metric]], "se": [entry[f"{metric}_se"]]}
            )
            files[folder / f"{upper}_by_chrom_weighted_average" / "all" / f"{name}.csv"] = (
                pd.DataFrame(
                    {
                        "model": [name],
                        "metric": [upper],
                        "score": [entry[f"{metric}_by_chrom"]],
                        "se": [entry[f"{metric}_by_chrom_se"]],
                    }
                )
            )
        for path, frame in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".parquet":
                frame.to_parquet(path, index=False)
            else:
                frame.to_csv(path, index=False)
            if path not in written:
                written.append(path)
    return written
