"""One samples file of a run as compact per-pair rows (``runs.py`` finds the files).

Samples files are streamed line by line (one 8 kb pair is ~30 KB of JSON);
:func:`stream_sample_pairs` turns each line into one row: pair identity (``pair_id``, a hash of
both sequences and the pair's assay where it has one, so two runs' pairs match whatever their
order, and two assays' replicates of a pair stay two), both LLs and the pair's outcome,
the strand margins of a sample scored on both strands, the margins of the further comparisons
its kind declares (``pairs/shape.py``: a footprint sample's against its background), the task's
settings as the row needs them, the fields each kind keeps (``pairs/kinds.sample_fields``), the
strata, the task's ``config`` (its name without a ``_<L>bp`` suffix), the ``context_bp`` the pair
was scored at (its crop, or its whole length), what its cluster is read from (``clusters.py``):
its ``gene_id`` and its window, and the novelty columns of an annotated pair file
(``pairs/fields.novelty_columns``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.changes import perturbed_sequence
from perturbation_bench.pairs.fields import NOVELTY_COLUMN, ORIGINAL
from perturbation_bench.pairs.kinds import margin_fields, sample_fields, shape_of
from perturbation_bench.pairs.outcome import pair_outcome
from perturbation_bench.pairs.scores import LLR, VariantScore
from perturbation_bench.pairs.settings import logged_settings
from perturbation_bench.pairs.shape import DocumentShape
from perturbation_bench.report.clusters import GENE, WINDOW_COLUMNS, window_of

STRATA = (
    "fraction_codons_changed",
    "exon_rank",
    "is_first_exon",
    "strand",
    "chr",
    "is_clamped",
    "consequence",
)
CONTEXT_SUFFIX = re.compile(r"_\d+bp$")


def stream_sample_pairs(
    path: Path,
    task: str,
    model: str,
    extra_columns=(),
    scale: str = "causal",
    score_kind: str | None = None,
) -> Iterator[dict]:
    """Stream one samples file as per-pair rows, with a progress bar over its bytes;
    ``score_kind`` names the variant score instead of the task's ``score`` (:attr:`Run.score_kind`).

    Raises:
        DataValidationError: an empty file, or a line that is not JSON (a truncated file) or
            not a sample of a perturbation-bench task, naming the file and the line.
    """
    from tqdm import tqdm

    columns = (*STRATA, *extra_columns)
    if path.stat().st_size == 0:
        raise DataValidationError(
            f"{path}: an empty samples file (no sample of {task}); rerun the task with "
            "--log_samples, or remove the file"
        )
    with (
        path.open("rb") as handle,
        tqdm(
            total=path.stat().st_size, unit="B", unit_scale=True, desc=f"{model} {task}"
        ) as progress,
    ):
        for number, line in enumerate(handle, start=1):
            progress.update(len(line))
            try:
                sample = json.loads(line)
                doc = sample["doc"]
                ll_original, ll_perturbed = (float(x) for x in sample["filtered_resps"][0])
                original, perturbed = doc[ORIGINAL], perturbed_sequence(doc)
                settings = logged_settings(doc)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise DataValidationError(
                    f"{path}: line {number}: not valid JSON "
                    f"({getattr(err, 'msg', None) or err.reason}); the file may be truncated"
                ) from None
            except (KeyError, TypeError, ValueError, IndexError) as err:
                raise DataValidationError(
                    f"{path}: line {number}: not a perturbation-bench sample (no {err}); expected "
                    "a doc with original_sequence and sequence and filtered_resps of LL pairs"
                ) from None
            outcome = pair_outcome(ll_original, ll_perturbed)
            forward, reverse = strand_margins(sample.get("resps") if settings.rc_average else None)
            shape = shape_of(doc)
            margins = comparison_margins(shape, sample["filtered_resps"])
            score = _score(doc, settings.variant_score, sample["filtered_resps"])
            yield {
                "pair_id": shape.pair_id(original, perturbed, doc),
                "task": task,
                "model": model,
                "scale": settings.score if settings.reading.by_model else scale,
                "doc_id": int(sample.get("doc_id", number - 1)),
                "ll_original": ll_original,
                "ll_perturbed": ll_perturbed,
                "correct": int(outcome.correct),
                "tie": int(outcome.tie),
                "margin": outcome.margin,
                "margin_forward": forward,
                "margin_reverse": reverse,
                "data": settings.data,
                "shard": settings.shard,
                **{name: doc.get(name) for name in sample_fields()},
                **({"label": None} if score != score else {}),  # no score, no ranking (NaN jsd)
                **margins,
                "ties_rule": settings.ties,
                "score_kind": score_kind or settings.score,
                "convention": settings.convention,
                "rc_average": settings.rc_average,
                "one_class_chromosomes": settings.one_class_chromosomes,
                "labels": settings.labels,
                "min_per_class": settings.min_per_class,
                "score": score,
                "config": CONTEXT_SUFFIX.sub("", task),
                "context_bp": settings.context_bp or len(original),
                GENE: doc.get(GENE),
                **dict(zip(WINDOW_COLUMNS, window_of(doc, len(original)), strict=True)),
                **{name: doc.get(name) for name in columns},
                **{name: value for name, value in doc.items() if NOVELTY_COLUMN.match(name)},
            }


def first_doc_fields(path: Path) -> list[str]:
    """The document fields of the first sample of the samples file ``path`` (none if it has no
    readable first sample: reading it whole names the line)."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        return list(json.loads(first)["doc"])
    except (ValueError, KeyError, TypeError):
        return []


def _score(doc: dict, score: VariantScore | None, filtered) -> float:
    """The variant score ``s`` of a sample (``pairs/scores.VariantScore.value``; a pair task's,
    ``llr``), from its comparisons (a four-allele score's two: the pair, then the two other
    bases)."""
    score = score or LLR
    comparisons = [
        [float(ll) for ll in filtered[k * len(filtered) // score.reading.comparisons]]
        for k in range(score.reading.comparisons)
    ]
    return score.value(doc, *comparisons)


def comparison_margins(shape: DocumentShape, filtered) -> dict[str, float | None]:
    """Every kind's margin fields (``pairs/kinds.margin_fields``), None but those of the
    sample's ``shape``: ``LL(first) - LL(second)`` of each comparison after the pair's (a
    footprint's motif and control windows against the background), from lm-eval's filtered
    responses, which hold each comparison's pair once per request of it
    (``tasks/document_requests.py``)."""
    margins = dict.fromkeys(margin_fields())
    comparisons = shape.comparisons
    per_comparison = len(filtered) // len(comparisons)
    for k, comparison in enumerate(comparisons[1:], start=1):
        first, second = filtered[per_comparison * k]
        margins[comparison.margin] = float(first) - float(second)
    return margins


def strand_margins(resps) -> tuple[float | None, float | None]:
    """``(forward, reverse-complement)`` margins of a sample scored on both strands, from
    lm-eval's raw responses (``[[ll, greedy]]`` per request, in request order: o, p, rc(o),
    rc(p); ``pairs/requests.py``); ``(None, None)`` for a sample of one strand."""
    if not isinstance(resps, list) or len(resps) != 4:
        return None, None
    try:
        lls = [float(response[0][0]) for response in resps]
    except (TypeError, ValueError, IndexError):
        return None, None
    return lls[0] - lls[1], lls[2] - lls[3]
