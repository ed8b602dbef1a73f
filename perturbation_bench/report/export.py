"""``report --export traitgym DIR``: the labelled variant runs in TraitGym's file layout.

For every model and variant task with binary labels (``variant_metrics.ranking_summary``), under
``DIR/<task>/``:

- ``test.parquet``: the task's variants (``chrom``, ``pos``, ``ref``, ``alt``, ``label``, and
  ``consequence`` and ``match_group`` where the data has them, which TraitGym's subsets and its
  ``Accuracy_by_match_group`` read) in the order of its data's rows, which is the input's order
  less the variants the build excluded (named in the build's ``_excluded.tsv``): TraitGym's
  ``results/dataset/<dataset>/test.parquet``. TraitGym reads one per dataset and every model's
  predictions in its row order, so two runs of one task on other variants (a ``--limit`` run
  beside a full one) are refused, naming both: the second would overwrite the first's file,
  and TraitGym would read one run's scores against the other's rows;
- ``features/<features>.parquet``: each score as TraitGym's ``unsupervised_pred`` reads it, a
  column ``<feature>`` in that row order, before its sign (``-s`` for ``minus``), so that its
  rules make the predictions of any subset (``preds/<subset>/<model>.parquet``);
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
VARIANT_COLUMNS = ("chrom", "pos", "ref", "alt", "label")
SUBSET_COLUMNS = ("consequence", "match_group")
"""The columns TraitGym's subsets (``workflow/rules/common.smk``) and its match-group metric
read, exported where the data has them."""
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
    """Write the files of the module docstring for every row of ``summary``; their paths.

    Raises:
        OptionsError: a sharded run, or two runs of one task on other variants (module
            docstring), before any file is written.
    """
    out, files, tests = Path(out), {}, {}
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
        carried = [c for c in SUBSET_COLUMNS if c in group and group[c].notna().any()]
        variants = group[[*VARIANT_COLUMNS, *carried]].reset_index(drop=True)
        _same_rows(tests.setdefault(entry["task"], (entry["model"], variants)), entry, variants)
        name = traitgym_name(entry["model"], entry["score"])
        scores = group["score"].reset_index(drop=True)
        files[folder / "test.parquet"] = variants
        files[folder / "preds" / "all" / f"{name}.parquet"] = pd.DataFrame({"score": scores})
        _add_feature(files, folder, name, scores)
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
    return list(files)


def _same_rows(first: tuple[str, pd.DataFrame], entry: dict, variants: pd.DataFrame) -> None:
    """Refuse a run of ``entry``'s task on other variants than ``first``'s run (module
    docstring)."""
    model, earlier = first
    if not earlier.equals(variants):
        raise OptionsError(
            f"--export traitgym: {model} and {entry['model']} scored {entry['task']} on other "
            f"variants ({len(earlier)} and {len(variants)} labelled); TraitGym reads one "
            "test.parquet per dataset and every model's predictions in its row order: export "
            "runs of the same rows together (a --limit run apart from a full one)"
        )


def _add_feature(files: dict, folder: Path, name: str, scores: pd.Series) -> None:
    """``features/<features>.parquet``'s column ``<feature>`` of a model named
    ``<features>.<sign>.<feature>``: the score before TraitGym applies the sign (module
    docstring); one file holds every feature of its ``<features>``."""
    match = re.fullmatch(r"(.+)\.(plus|minus)\.([^.]+)", name)
    if match is None:
        return
    path = folder / "features" / f"{match[1]}.parquet"
    frame = files.setdefault(path, pd.DataFrame(index=scores.index))
    frame[match[3]] = scores if match[2] == "plus" else -scores
