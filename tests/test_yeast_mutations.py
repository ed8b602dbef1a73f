"""A mutation scan of real yeast chrI (every class, 150 per class), checked row by row by an
independent derivation, made into 8,192 bp variant pairs (chrI's 230 kb hold them whole), scored
end to end through lm_eval with kmer-markov counted on chrII (the composition floors of the
README), and with tiny random dna-hf and dna-mlm models on a smaller scan."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score
from test_mutations import cds_records, read_fasta, rederive
from test_yeast import GFF3, yeast  # noqa: F401  (the fixture)

from dna_fixtures import evaluate
from perturbation_bench.cli import main
from perturbation_bench.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    save_random_llama,
    single_nucleotide_tokenizer,
)
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_variants"
METRICS = ("pairwise_acc", "tie_rate", "margin", "auroc", "auprc", "auroc_by_chrom", "auprc_by_chrom")


def scan_and_pair(yeast, root, per_class: int, window: int):  # noqa: F811
    table = root / "chrI_mutations.parquet"
    assert main(["build", "mutations", "--fasta", str(yeast / "chr1.fa"), "--gff3",
                 str(yeast / GFF3), "--out", str(table), "--per-class", str(per_class)]) == 0  # fmt: skip
    assert main(["build", "variants", "--variants", str(table), "--fasta", str(yeast / "chr1.fa"),
                 "--config", "mutations_yeast", "--out", str(root / "pairs"),
                 "--window", str(window)]) == 0  # fmt: skip
    return table, root / "pairs"


@pytest.fixture(scope="module")
def scan(yeast, tmp_path_factory):  # noqa: F811
    return scan_and_pair(yeast, tmp_path_factory.mktemp("yeast-scan"), 150, 8192)


def test_every_yeast_row_matches_the_independent_derivation(yeast, scan):  # noqa: F811
    table = pd.read_parquet(scan[0])
    summary = json.loads(scan[0].with_name(scan[0].name + ".summary.json").read_text())
    genome, transcripts = read_fasta(yeast / "chr1.fa"), cds_records(yeast / GFF3)
    for row in table.to_dict("records"):
        assert rederive(row, genome, transcripts) == row["consequence"], row
    coding = ("stop_gained", "start_lost", "stop_lost", "frameshift_variant", "missense_variant",
              "synonymous_variant")  # fmt: skip
    assert all(summary["counts"][c] == 150 for c in coding)
    assert summary["counts"]["splice_donor_variant"] > 0  # chrI's few introns
    assert summary["notes"] == ["intergenic_variant skipped: no base lies 5000 bp from every CDS"]


def kmer_markov_floor(yeast, order: int, data, tmp_path, command_line: bool):  # noqa: F811
    """``(results, per-pair LLs)`` of kmer-markov counted on chrII, through the lm_eval command
    line or its Python API."""
    model_args = f"fasta={yeast / 'chr2.fa'},order={order},counts={tmp_path / f'chr2-{order}.npz'}"
    metadata = {"data_dir": str(data), "config": "mutations_yeast"}
    if not command_line:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        from perturbation_bench.paths import tasks_dir

        manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
        result = simple_evaluate(model="kmer-markov", model_args=model_args, tasks=[TASK],
                                 task_manager=manager, log_samples=True)  # fmt: skip
        return result["results"][TASK], logged_pairs(result, TASK)
    out = tmp_path / f"order{order}"
    run = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "kmer-markov", "--model_args", model_args,
         "--tasks", TASK, "--log_samples", "--output_path", str(out),
         "--metadata", json.dumps(metadata)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = out.glob("**/results_*.json")
    (samples,) = out.glob(f"**/samples_{TASK}_*.jsonl")
    rows = sorted((json.loads(line) for line in samples.read_text().splitlines()),
                  key=lambda sample: sample["doc_id"])  # fmt: skip
    return json.loads(results.read_text())["results"][TASK], [
        tuple(float(x) for x in r["filtered_resps"][0]) for r in rows  # the file holds strings
    ]


def test_the_composition_floor_through_the_lm_eval_command_line(yeast, scan, tmp_path):  # noqa: F811
    """kmer-markov counted on chrII at orders 2, 5 (the command line) and 8; the metrics equal
    scikit-learn on the logged pairs. The README's floors are these runs."""
    pairs = pd.read_parquet(scan[1] / "mutations_yeast")
    labelled = pairs["label"].notna().to_numpy()
    labels = pairs["label"][labelled].astype(bool)
    for order in (2, 5, 8):
        got, lls = kmer_markov_floor(yeast, order, scan[1], tmp_path, command_line=order == 5)
        margins = [a - b for (a, b), keep in zip(lls, labelled) if keep]
        assert {f"{m},pairs" for m in METRICS} <= set(got) and len(lls) == len(pairs)
        assert got["auroc,pairs"] == pytest.approx(roc_auc_score(labels, margins))
        assert got["auprc,pairs"] == pytest.approx(average_precision_score(labels, margins))
        print(f"order {order}: " + ", ".join(f"{m} {got[f'{m},pairs']:.4f}" for m in METRICS))


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
def test_tiny_neural_models_report_every_metric_on_a_yeast_scan(yeast, tmp_path_factory, model):  # noqa: F811
    root = tmp_path_factory.mktemp(f"yeast-{model}")
    _, data = scan_and_pair(yeast, root, 12, 512)
    tokenizer = single_nucleotide_tokenizer()
    if model == "dna-hf":
        path = save_random_llama(root / "m", tokenizer, max_positions=520)
    else:
        path = save_random_bert(root / "m", as_masked_lm_tokenizer(tokenizer), max_positions=520)
    result = evaluate(str(path), [TASK], {"data_dir": str(data), "config": "mutations_yeast"},
                      model=model)  # fmt: skip
    got = result["results"][TASK]
    assert {f"{m},pairs" for m in METRICS} <= set(got)
    pairs = pd.read_parquet(data / "mutations_yeast")
    lls = logged_pairs(result, TASK)
    labelled = pairs["label"].notna().to_numpy()
    margins = [a - b for (a, b), keep in zip(lls, labelled) if keep]
    assert got["auroc,pairs"] == pytest.approx(roc_auc_score(pairs["label"][labelled].astype(bool), margins))


def test_the_report_draws_the_class_ladder_of_a_scan(yeast, scan, tmp_path):  # noqa: F811
    from matplotlib.image import imread

    from perturbation_bench.report.analysis import make_report
    from perturbation_bench.report.variant_metrics import LADDER

    metadata = {"data_dir": str(scan[1]), "config": "mutations_yeast"}
    chain = f"fasta={yeast / 'chr2.fa'},order=3,counts={tmp_path / 'chr2-3.npz'}"
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    tracker = EvaluationTracker(output_path=str(tmp_path / "run"))
    result = simple_evaluate(model="kmer-markov", model_args=chain, tasks=[TASK], log_samples=True,
                             task_manager=TaskManager(include_path=str(tasks_dir()),
                                                      include_defaults=False, metadata=metadata),
                             evaluation_tracker=tracker)  # fmt: skip
    lls = logged_pairs(result, TASK)  # before the tracker rewrites the samples in place
    tracker.save_results_aggregated(results={k: v for k, v in result.items() if k != "samples"},
                                    samples=result["samples"])  # fmt: skip
    tracker.save_results_samples(task_name=TASK, samples=result["samples"][TASK])
    report = make_report([tmp_path / "run"], tmp_path / "report", n_boot=200)
    ladder = report["variants"]["class_ladder"]
    classes = [r["consequence"] for r in ladder]
    assert classes == [c for c in LADDER if c in classes] and len(classes) == 8
    pairs = pd.read_parquet(scan[1] / "mutations_yeast")
    for row in ladder:  # each class's accuracy and margin, recomputed from the logged pairs
        mine = [(a, b) for (a, b), c in zip(lls, pairs["consequence"]) if c == row["consequence"]]
        assert row["n"] == len(mine)
        assert row["pairwise_acc"] == pytest.approx(sum(a > b for a, b in mine) / len(mine))
        assert row["margin_mean"] == pytest.approx(sum(a - b for a, b in mine) / len(mine))
        assert row["bootstrap_95"][0] <= row["pairwise_acc"] <= row["bootstrap_95"][1]
    assert imread(tmp_path / "report" / "class_ladder.png").shape[:2] == (500, 900)
    assert "## Class ladder" in (tmp_path / "report" / "report.md").read_text()
