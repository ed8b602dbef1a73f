"""Variant files as pair datasets (``build variants``) and the variant task's metrics.

Windows are checked against an independent construction: the whole chromosome edited, then the
window cut out of it (the package cuts first and edits the window)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from dna_fixtures import (
    build_variants,
    evaluate,
    expected_edge_pair,
    random_genome,
    run_two_processes,
    traitgym_like,
)
from perturbation_bench.cli import main
from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.ranking import by_chromosome
from perturbation_bench.tasks.pairing import logged_pairs

W = 200
TASK = "perturbation_variants"


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    """chr1 (5,000 bp) and chr2 (3,000 bp) with 'chr' names, and their sequences."""
    return random_genome(tmp_path_factory.mktemp("genome"), {"chr1": 5000, "chr2": 3000}, 3)


def expected_pair(sequences, chrom: str, pos: int, ref: str, alt: str, window: int = W):
    """Independent construction: clamp the window, edit the whole chromosome, cut both."""
    seq = sequences[chrom]
    p = pos - 1
    start = p - window // 2
    start = 0 if start < 0 else min(start, len(seq) - window)
    edited = seq[:p] + alt + seq[p + len(ref) :]
    return seq[start : start + window], edited[start : start + window], start, p - start


def cases(sequences):
    """(chrom as written, pos, ref, alt) of each kind of variant, alleles from the genome."""
    s1, s2 = sequences["chr1"], sequences["chr2"]
    other = lambda b: "A" if b != "A" else "C"  # noqa: E731
    return [
        ("1", 2500, s1[2499], other(s1[2499])),  # SNV, no chr prefix in the file
        ("chr1", 1200, s1[1199:1202], "".join(other(b) for b in s1[1199:1202])),  # MNV
        ("1", 3000, s1[2999], s1[2999] + "GATTACA"),  # insertion
        ("1", 3500, s1[3499:3505], s1[3499]),  # 5-base deletion
        ("2", 10, s2[9], other(s2[9])),  # at the start: window clamped to 0
        ("2", 2995, s2[2994], other(s2[2994])),  # at the end: clamped to L - W
        ("chr2", 1500, s2[1499:1501], s2[1499]),  # 1-base deletion
    ]


def test_windows_equal_an_independent_construction(genome, tmp_path):
    fasta, sequences = genome
    table = pd.DataFrame(cases(sequences), columns=["chrom", "pos", "ref", "alt"])
    table.to_csv(tmp_path / "v.tsv", sep="\t", index=False)
    rows = build_variants(tmp_path, tmp_path / "v.tsv", fasta)
    assert len(rows) == len(table)
    for row, (chrom, pos, ref, alt) in zip(
        rows.to_dict("records"), table.itertuples(index=False), strict=True
    ):
        name = chrom if chrom.startswith("chr") else f"chr{chrom}"
        reference, alternate, start, offset = expected_pair(sequences, name, pos, ref, alt)
        assert (row["original_sequence"], row["sequence"]) == (reference, alternate), (chrom, pos)
        assert (row["window_start"], row["variant_offset"]) == (start, offset)
        assert row["is_clamped"] == (offset != W // 2)
        assert len(row["sequence"]) == W and row["chrom"] == chrom
        assert row["variant_id"] == f"{chrom}:{pos}:{ref}:{alt}"
    assert list(rows["is_clamped"]) == [False, False, False, False, True, True, False]
    assert set(rows["window_edge"]) == {"shift"}


@pytest.mark.parametrize("edge", ["pad", "truncate"])
@pytest.mark.parametrize("window", [W, W + 1])
def test_pad_and_truncate_windows_equal_an_independent_construction(genome, tmp_path, edge, window):
    fasta, sequences = genome
    s1, s2 = sequences["chr1"], sequences["chr2"]
    other = lambda b: "A" if b != "A" else "C"  # noqa: E731
    table = (
        cases(sequences)
        + [
            ("1", 1, s1[0], other(s1[0])),  # the chromosome's first base
            ("2", 3000, s2[2999], other(s2[2999])),  # its last base
            ("2", 2990, s2[2989:2995], s2[2989]),  # a deletion near the end
            ("2", 5, s2[4], s2[4] + "TTT"),  # an insertion near the start
        ]
    )
    table = pd.DataFrame(table, columns=["chrom", "pos", "ref", "alt"])
    table.to_csv(tmp_path / "v.tsv", sep="\t", index=False)
    args = [
        "build",
        "variants",
        "--variants",
        str(tmp_path / "v.tsv"),
        "--fasta",
        str(fasta),
        "--config",
        "toy",
        "--out",
        str(tmp_path / "out"),
        "--window",
        str(window),
        "--edge",
        edge,
    ]
    assert main(args) == 0
    rows = pd.read_parquet(tmp_path / "out" / "toy" / "test-00000-of-00001.parquet")
    built = {(r["chrom"], r["pos"]): r for r in rows.to_dict("records")}
    checked = 0
    for chrom, pos, ref, alt in table.itertuples(index=False):
        name = chrom if chrom.startswith("chr") else f"chr{chrom}"
        expected = expected_edge_pair(sequences, name, pos, ref, alt, window, edge)
        if expected is None:
            assert (chrom, pos) not in built  # excluded: deletion_past_chromosome_end
            continue
        row = built[(chrom, pos)]
        assert (row["original_sequence"], row["sequence"]) == expected[:2], (chrom, pos)
        assert (row["window_start"], row["variant_offset"]) == expected[2:]
        assert row["window_edge"] == edge
        at_end = pos - 1 - window // 2 < 0 or pos - 1 - window // 2 + window > len(sequences[name])
        assert row["is_clamped"] == at_end
        checked += 1
    assert checked >= 10
    if edge == "pad":  # GPN: always W bases, the variant at W // 2, whatever the end
        assert set(rows["original_sequence"].str.len()) == {window}
        assert set(rows["variant_offset"]) == {window // 2}
    else:  # Evo 2: at the first base the window starts at the variant
        assert built[("1", 1)]["variant_offset"] == 0
        assert len(built[("2", 3000)]["original_sequence"]) == window // 2 + 1


def test_exclusions_are_counted_and_counts_add_up(genome, tmp_path, capsys):
    fasta, sequences = genome
    s1 = sequences["chr1"]
    wrong = "A" if s1[99] != "A" else "C"
    rows = [
        ("1", 1000, s1[999], "G" if s1[999] != "G" else "T"),  # kept
        ("1", 100, wrong, s1[99]),  # ref does not match the genome: never swapped
        ("1", 200, s1[199], "<DEL>"),
        ("1", 201, s1[200], "*"),
        ("1", 202, s1[201], "N"),
        ("1", 203, s1[202], s1[202]),
        ("chr9", 5, "A", "C"),
        (
            "2",
            2999,
            sequences["chr2"][2998:3000],
            sequences["chr2"][2998],
        ),  # needs a base past the end
        ("1", 6000, "A", "C"),
    ]
    pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt"]).to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", fasta)
    report = json.loads((tmp_path / "out" / "toy" / "_build_report.json").read_text())
    assert report["excluded"] == {
        "chromosome_not_in_fasta": 1,
        "deletion_past_chromosome_end": 1,
        "non_acgt_allele": 1,
        "position_past_chromosome_end": 1,
        "ref_equals_alt": 1,
        "ref_mismatch": 1,
        "star_alt": 1,
        "symbolic_or_breakend_alt": 1,
    }
    assert report["read"] == len(rows) == report["written"] + sum(report["excluded"].values())
    assert len(built) == report["written"] == 1
    out = capsys.readouterr().out
    assert "excluded 1 (ref_mismatch)" in out and "_excluded.tsv" in out
    named = pd.read_csv(tmp_path / "out" / "toy" / "_excluded.tsv", sep="\t", dtype=str)
    assert list(named.columns) == ["chrom", "pos", "ref", "alt", "reason"]
    assert named["reason"].value_counts().to_dict() == report["excluded"]
    by_reason = named.set_index("reason")
    assert tuple(by_reason.loc["ref_mismatch"]) == ("1", "100", wrong, s1[99])
    assert tuple(by_reason.loc["chromosome_not_in_fasta"]) == ("chr9", "5", "A", "C")


def write_vcf(path: Path, records: list[str]) -> Path:
    header = [
        "##fileformat=VCFv4.2",
        "##contig=<ID=chr1,length=5000>",
        "##contig=<ID=chr2,length=3000>",
        "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO",
    ]
    path.write_text("\n".join(header + records) + "\n")
    return path


def test_an_unreadable_vcf_record_is_one_line_with_file_record_and_reason(genome, tmp_path, capsys):
    """A bgzip file damaged in a later block: htslib reads the records before it, then fails."""
    import pysam

    fasta, sequences = genome
    s1 = sequences["chr1"]
    records = [
        f"chr1\t{p}\t.\t{s1[p - 1]}\t{'A' if s1[p - 1] != 'A' else 'C'}\t.\t.\t."
        for p in range(1, 4901)
    ] * 6  # several BGZF blocks
    plain = write_vcf(tmp_path / "v.vcf", records)
    pysam.tabix_compress(str(plain), str(tmp_path / "v.vcf.gz"))
    data = bytearray((tmp_path / "v.vcf.gz").read_bytes())
    middle = len(data) * 3 // 4
    data[middle : middle + 50] = bytes(b ^ 0xFF for b in data[middle : middle + 50])
    (tmp_path / "bad.vcf.gz").write_bytes(bytes(data))
    status = main(
        [
            "build",
            "variants",
            "--variants",
            str(tmp_path / "bad.vcf.gz"),
            "--fasta",
            str(fasta),
            "--config",
            "bad",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.startswith("perturbation-bench error")]
    assert (
        f"{tmp_path / 'bad.vcf.gz'}: record " in line and "cannot be read (truncated file)" in line
    )
    number, read = map(int, re.search(r"record (\d+) \(after (\d+) read\)", line).groups())
    assert number == read + 1 and 10_000 < read < len(records)  # the records of the blocks before


def test_vcf_multiallelic_records_split_and_gzip_reads_the_same(genome, tmp_path):
    import pysam

    fasta, sequences = genome
    s1 = sequences["chr1"]
    alts = [b for b in "ACGT" if b != s1[1999]]
    vcf = write_vcf(
        tmp_path / "v.vcf",
        [
            f"chr1\t2000\trs1\t{s1[1999]}\t{alts[0]},{alts[1]}\t.\t.\t.",
            f"chr2\t1000\t.\t{sequences['chr2'][999]}\t<DUP>\t.\t.\t.",
        ],
    )
    plain = build_variants(tmp_path / "plain", vcf, fasta)
    pysam.tabix_compress(str(vcf), str(tmp_path / "v.vcf.gz"))
    gzipped = build_variants(tmp_path / "gz", tmp_path / "v.vcf.gz", fasta)
    pd.testing.assert_frame_equal(plain, gzipped)
    assert list(plain["alt"]) == alts[:2] and list(plain["variant_id"]) == ["rs1", "rs1"]
    for row in plain.to_dict("records"):
        assert (row["original_sequence"], row["sequence"]) == expected_pair(
            sequences, "chr1", 2000, s1[1999], row["alt"]
        )[:2]


def test_traitgym_parquet_loads_as_it_is_and_builds_the_same_bytes_twice(genome, tmp_path):
    fasta, sequences = genome
    traitgym_like(sequences).to_parquet(tmp_path / "test.parquet")
    first = build_variants(tmp_path / "a", tmp_path / "test.parquet", fasta)
    build_variants(tmp_path / "b", tmp_path / "test.parquet", fasta)
    assert list(first.columns) == [
        "chrom",
        "pos",
        "ref",
        "alt",
        "variant_id",
        "label",
        "window_start",
        "variant_offset",
        "is_clamped",
        "window_edge",
        "OMIM",
        "consequence",
        "tss_dist",
        "match_group",
        "original_sequence",
        "sequence",
    ]
    assert first["label"].dtype == bool and len(first) == 60
    files = [tmp_path / d / "out" / "toy" / "test-00000-of-00001.parquet" for d in ("a", "b")]
    assert files[0].read_bytes() == files[1].read_bytes()
    assert (tmp_path / "a" / "out" / "perturbation_toy.yaml").is_file()


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"pos": None}, "record 2: pos is not a whole number"),
        ({"ref": ""}, "record 2: ref is empty or missing"),
        ({"label": "maybe"}, "record 2: label 'maybe' is not a truth value"),
    ],
)
def test_unreadable_records_stop_with_file_record_and_reason(genome, tmp_path, bad, message):
    fasta, sequences = genome
    table = traitgym_like(sequences, n=4).astype({"pos": object, "label": object})
    for column, value in bad.items():
        table.at[2, column] = value
    table.to_csv(tmp_path / "v.csv", index=False)
    with pytest.raises(DataValidationError, match=f"{tmp_path / 'v.csv'}: {message}"):
        from perturbation_bench.formats.fasta import Genome
        from perturbation_bench.variants.build import build_variant_dataset

        build_variant_dataset(tmp_path / "v.csv", Genome(fasta), "toy", tmp_path / "out", W)


def test_ranking_metrics_equal_scikit_learn_and_a_hand_computation():
    labels = [True, False, False, True, True, False, False, True, True]
    scores = [3.0, 1.0, 2.0, 1.0, 4.0, 3.0, 2.0, 0.5, 0.7]
    chroms = ["A", "A", "A", "B", "B", "B", "B", "C", "C"]  # C: positives only, left out
    auroc = by_chromosome("auroc", labels, scores, chroms)
    auprc = by_chromosome("auprc", labels, scores, chroms)
    # A: the positive (3) above both negatives: AUROC 1, AP 1. B: positives 1, 4 against
    # negatives 3, 2: 2 of 4 pairs right, AUROC 1/2; ranked 4+ 3- 2- 1+: AP = 1/2*1 + 1/2*2/4.
    assert auroc.rows == [("A", 3, 1.0), ("B", 4, 0.5)] and auroc.left_out == ["C"]
    assert auroc.value == pytest.approx((3 * 1.0 + 4 * 0.5) / 7)
    assert auprc.value == pytest.approx((3 * 1.0 + 4 * 0.75) / 7)
    from perturbation_bench.pairs.ranking import auprc as global_auprc
    from perturbation_bench.pairs.ranking import auroc as global_auroc

    assert global_auroc(labels, scores) == roc_auc_score(labels, scores)
    assert global_auprc(labels, scores) == average_precision_score(labels, scores)


@pytest.fixture(scope="module")
def labelled_variants(genome, tmp_path_factory):
    """A built, labelled variant config (40 SNVs over two chromosomes) and its data_dir."""
    fasta, sequences = genome
    root = tmp_path_factory.mktemp("variants")
    traitgym_like(sequences, n=40, seed=5).to_parquet(root / "test.parquet")
    build_variants(root, root / "test.parquet", fasta, "labelled")
    return root / "out"


def expected_metrics(lls, labels, chroms, score="llr") -> dict:
    margins = [a - b for a, b in lls]
    scores = [abs(m) for m in margins] if score == "abs_llr" else margins
    return {
        "auroc": roc_auc_score(labels, scores),
        "auprc": average_precision_score(labels, scores),
        **{
            f"{metric}_by_chrom": sum(
                (chroms == c).sum()
                * fn(
                    [y for y, k in zip(labels, chroms, strict=True) if k == c],
                    [s for s, k in zip(scores, chroms, strict=True) if k == c],
                )
                for c in sorted(set(chroms))
            )
            / len(chroms)
            for metric, fn in (("auroc", roc_auc_score), ("auprc", average_precision_score))
        },
    }


@pytest.mark.parametrize("score", ["llr", "abs_llr"])
def test_the_variant_task_reports_every_metric(tiny_models, labelled_variants, score):
    metadata = {"config": "labelled", "data_dir": str(labelled_variants), "score": score}
    result = evaluate(tiny_models["char"], [TASK], metadata, model="dna-hf")
    rows = pd.read_parquet(labelled_variants / "labelled")
    lls = logged_pairs(result, TASK)
    got = result["results"][TASK]
    for name, value in expected_metrics(lls, list(rows["label"]), rows["chrom"], score).items():
        assert got[f"{name},pairs"] == pytest.approx(value), name
    assert got["pairwise_acc,pairs"] == pytest.approx(sum(a > b for a, b in lls) / len(lls))


def test_a_variant_config_without_labels_reports_the_pair_metrics_only(
    tiny_models, genome, tmp_path
):
    fasta, sequences = genome
    traitgym_like(sequences, n=8).drop(columns=["label"]).to_parquet(tmp_path / "v.parquet")
    build_variants(tmp_path, tmp_path / "v.parquet", fasta, "unlabelled")
    result = evaluate(
        tiny_models["char"], [TASK], {"config": "unlabelled", "data_dir": str(tmp_path / "out")}
    )
    keys = {key.split(",")[0] for key in result["results"][TASK]}
    assert "pairwise_acc" in keys and not keys & {"auroc", "auprc", "auroc_by_chrom"}


def test_a_non_variant_config_is_refused_by_the_variant_task(pair_data):
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.tasks.variants import load_variant_pairs

    with pytest.raises(OptionsError, match="no chrom, pos, ref, alt column"):
        load_variant_pairs(config="syn_human", data_dir=str(pair_data))


@pytest.mark.slow
def test_two_processes_report_the_same_ranking_metrics_as_one(
    tiny_models, labelled_variants, tmp_path
):

    from dna_fixtures import assert_same_results

    metadata = {"config": "labelled"}
    single = evaluate(
        tiny_models["char"],
        [TASK],
        {"data_dir": str(labelled_variants), **metadata},
        model="dna-hf",
    )
    run, parallel = run_two_processes(
        tiny_models["char"], labelled_variants, tmp_path, "dna-hf", TASK, json.dumps(metadata)
    )
    assert_same_results(parallel["results"], single["results"][TASK])
    assert "dna-hf process 1 of 2: 40 loglikelihood requests" in run.stderr  # 20 of 40 variants


def test_dna_mlm_on_single_base_variants_equals_gpns_run_vep(genome, tmp_path):
    """gpn's own run_vep (window, masking, tokenization, both strands) on a random GPN model,
    its Trainer told to stay on the CPU in float32; dna-mlm with context_bp = W and rc_average
    must give margin = -(LLR_fwd + LLR_rev) / 2 for every variant."""
    import datasets
    import gpn
    import gpn.ss.run_vep as gpn_vep
    from gpn.data import Genome as GpnGenome
    from gpn.model import GPNConfig, GPNForMaskedLM
    from transformers import AutoTokenizer

    from perturbation_bench.fixtures.random_models import single_nucleotide_tokenizer

    fasta, sequences = genome
    gpn.register_auto_classes()
    tokenizer = single_nucleotide_tokenizer()
    GPNForMaskedLM(
        GPNConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            n_layers=2,
            pad_token_id=tokenizer.pad_token_id,
        )
    ).save_pretrained(tmp_path / "gpn")
    tokenizer.save_pretrained(tmp_path / "gpn")
    variants = traitgym_like(sequences, n=30, seed=9)
    variants = variants[variants["pos"].between(W, 2900)].reset_index(drop=True)  # unclamped
    variants.to_parquet(tmp_path / "v.parquet")
    build_variants(tmp_path, tmp_path / "v.parquet", fasta, "gpn_check")
    gpn_window = 128

    def on_the_cpu(**kwargs):
        return real_arguments(
            **{**kwargs, "fp16": False, "torch_compile": False, "use_cpu": True, "report_to": []}
        )

    real_arguments = gpn_vep.TrainingArguments
    gpn_vep.TrainingArguments = on_the_cpu
    try:
        named = variants.assign(chrom="chr" + variants["chrom"])[["chrom", "pos", "ref", "alt"]]
        llr = gpn_vep.run_vep(
            datasets.Dataset.from_pandas(named),
            GpnGenome(str(fasta)),
            gpn_window,
            AutoTokenizer.from_pretrained(tmp_path / "gpn"),
            gpn_vep.MLMforVEPModel(str(tmp_path / "gpn")),
        )
    finally:
        gpn_vep.TrainingArguments = real_arguments
    metadata = {
        "config": "gpn_check",
        "data_dir": str(tmp_path / "out"),
        "rc_average": True,
        "context_bp": gpn_window,
    }
    result = evaluate(str(tmp_path / "gpn"), [TASK], metadata, model="dna-mlm", plugin="gpn")
    margins = [a - b for a, b in logged_pairs(result, TASK)]
    assert len(margins) == len(variants) > 15
    assert margins == pytest.approx([-x for x in llr], abs=1e-4)


def test_the_ranking_bootstraps_resample_as_traitgym_does():
    from perturbation_bench.report.statistics import (
        chromosome_bootstrap,
        paired_stratified_bootstrap_difference,
        percentile_interval,
        stratified_bootstrap,
    )

    # chromosomes resampled, weights renormalised, metrics kept: a replicate is AA (1.0), BB
    # (0.5) or AB/BA ((3 + 2) / 7); AA and BB each have probability 1/4, far beyond 2.5%
    assert percentile_interval(
        chromosome_bootstrap([("A", 3, 1.0), ("B", 4, 0.5)], n_boot=4000)
    ) == (0.5, 1.0)
    labels = [True] * 5 + [False] * 15
    prevalence = percentile_interval(
        stratified_bootstrap(lambda y, s: y.mean(), labels, range(20), n_boot=200)
    )
    assert prevalence == (0.25, 0.25)  # each class keeps its size in every resample
    separated = [float(label) + i / 100 for i, label in enumerate(labels)]
    assert percentile_interval(
        stratified_bootstrap(roc_auc_score, labels, separated, n_boot=200)
    ) == (1.0, 1.0)
    noisy = [random.Random(i).random() for i in range(20)]
    assert paired_stratified_bootstrap_difference(
        average_precision_score, labels, noisy, noisy, n_boot=200
    ) == (0.0, 0.0, 0.0)
    diff, low, high = paired_stratified_bootstrap_difference(
        average_precision_score, labels, separated, noisy, n_boot=500
    )
    assert diff == pytest.approx(1.0 - average_precision_score(labels, noisy))
    assert low <= diff <= high


def test_intervals_are_of_the_tasks_score_and_of_each_class_alone():
    """abs_llr: the positives' margins are large in either direction, so the score separates the
    labels (AUROC 1, every resample too) while the signed margin does not; class ladder: one
    class always right, one always wrong, each interval its own class's."""
    from perturbation_bench.report.variant_metrics import class_ladder, ranking_summary

    rng = random.Random(2)
    margins = [rng.choice((-1, 1)) * (2 + rng.random()) for _ in range(30)] + [
        rng.choice((-1, 1)) * rng.random() for _ in range(30)
    ]
    pairs = pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "score_kind": "abs_llr",
            "margin": margins,
            "score": [abs(m) for m in margins],
            "label": [True] * 30 + [False] * 30,
            "chrom": ["1", "2", "3"] * 20,
            "consequence": ["stop_gained"] * 30 + ["synonymous_variant"] * 30,
            "correct": [False] * 30 + [True] * 30,
            "pair_id": [f"{i:03d}" for i in range(60)],
        }
    )
    (row,) = ranking_summary(pairs, n_boot=200)
    assert row["auroc"] == 1.0
    assert row["auroc_95"] == pytest.approx([1.0, 1.0]) and row["auprc_95"] == pytest.approx(
        [1.0, 1.0]
    )
    assert roc_auc_score(pairs["label"], pairs["margin"]) < 0.9  # the margin alone would not do
    ladder = {r["consequence"]: r for r in class_ladder(pairs, n_boot=200)}
    assert ladder["synonymous_variant"]["bootstrap_95"] == pytest.approx([1.0, 1.0])
    assert ladder["stop_gained"]["bootstrap_95"] == pytest.approx([0.0, 0.0])
    assert list(ladder) == ["synonymous_variant", "stop_gained"]  # mildest first


def test_the_report_adds_the_ranking_metrics_of_labelled_variant_runs(
    tiny_models, labelled_variants, tmp_path
):
    from matplotlib.image import imread

    from perturbation_bench.report.make import make_report

    metadata = {"config": "labelled", "data_dir": str(labelled_variants)}
    runs = []
    for kind in ("char", "bpe"):
        evaluate(tiny_models[kind], [TASK], metadata, model="dna-hf", output_path=tmp_path / kind)
        runs.append(tmp_path / kind)
    report = make_report(
        runs, tmp_path / "report", seed=0, n_boot=200, se_boot=20, se_chrom_boot=20
    )
    summary = report["variants"]["summary"]
    assert len(summary) == 2 and {r["n"] for r in summary} == {40}
    for row in summary:  # the report's metrics are the task's
        (results,) = (tmp_path / Path(row["model"]).name).glob("*/results_*.json")
        task = json.loads(results.read_text())["results"][TASK]
        for name in ("auroc", "auprc", "auroc_by_chrom", "auprc_by_chrom"):
            assert row[name] == pytest.approx(task[f"{name},pairs"]), name
            assert row[f"{name}_95"][0] <= row[name] <= row[f"{name}_95"][1], name
    strata = [s for s in report["variants"]["strata"] if s["column"] == "consequence"]
    assert sum(s["n"] for s in strata) <= 2 * 40  # only classes that hold both labels are ranked
    assert all(0 < s["n_positive"] < s["n"] for s in strata)
    (difference,) = report["variants"]["auprc_differences"]
    assert difference["n_common"] == 40
    assert difference["auprc_difference"] == pytest.approx(
        summary[0]["auprc"] - summary[1]["auprc"]
    )
    assert (
        "## Variant effect (labelled variants)" in (tmp_path / "report" / "report.md").read_text()
    )
    for name in ("roc.png", "precision_recall.png"):
        assert imread(tmp_path / "report" / name).shape[:2] == (500, 900)


def test_a_repeated_variant_is_dropped_and_counted_as_a_duplicate_pair(genome, tmp_path):
    fasta, sequences = genome
    s1 = sequences["chr1"]
    snv = ("1", 1000, s1[999], "G" if s1[999] != "G" else "T")
    rows = [snv, ("1", 1200, s1[1199], "A" if s1[1199] != "A" else "C"), snv]
    pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt"]).to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", fasta)
    report = json.loads((tmp_path / "out" / "toy" / "_build_report.json").read_text())
    assert report["excluded"] == {"duplicate_pair": 1}
    assert list(built["pos"]) == [1000, 1200] and report["read"] == 3


def test_variant_rules_users_rely_on(genome, tmp_path, capsys):
    """A multi-base REF is compared with the genome in full; a REF holding N is refused; a REF
    longer than the window is refused; a table ALT ``A,C`` splits like a VCF record; an empty
    label is missing, not false."""
    fasta, sequences = genome
    s1 = sequences["chr1"]
    other = lambda b: "A" if b != "A" else "C"  # noqa: E731
    second_base_wrong = s1[1999] + other(s1[2000])
    rows = [
        {"chrom": "1", "pos": 2000, "ref": second_base_wrong, "alt": s1[1999], "label": 1.0},
        {"chrom": "1", "pos": 2100, "ref": s1[2099] + "N", "alt": s1[2099], "label": 0.0},
        {"chrom": "1", "pos": 1500, "ref": s1[1499 : 1499 + W + 1], "alt": s1[1499], "label": 1.0},
        {
            "chrom": "1",
            "pos": 2500,
            "ref": s1[2499],
            "alt": ",".join(b for b in "ACGT" if b != s1[2499])[:3],
            "label": float("nan"),
        },
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", fasta)
    report = json.loads((tmp_path / "out" / "toy" / "_build_report.json").read_text())
    assert report["excluded"] == {
        "ref_mismatch": 1,
        "non_acgt_allele": 1,
        "ref_longer_than_window": 1,
    }
    assert list(built["alt"]) == [b for b in "ACGT" if b != s1[2499]][:2]  # "X,Y" -> two rows
    assert built["label"].isna().all()  # NaN read as no label, never as False


def test_mitochondrial_names_match_across_conventions(tmp_path):
    rng = random.Random(9)
    sequence = "".join(rng.choice("ACGT") for _ in range(1000))
    (tmp_path / "mt.fa").write_text(">chrM\n" + sequence + "\n")
    variants = pd.DataFrame(
        [
            {
                "chrom": name,
                "pos": pos,
                "ref": sequence[pos - 1],
                "alt": "A" if sequence[pos - 1] != "A" else "C",
            }
            for name, pos in (("MT", 400), ("M", 600))
        ]
    )
    variants.to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", tmp_path / "mt.fa")
    assert list(built["chrom"]) == ["MT", "M"] and len(built) == 2


def test_counts_add_up_past_one_batch_of_rows(genome, tmp_path):
    """Rows stream in batches of 512: read = written + excluded over 1,100 variants."""
    fasta, sequences = genome
    s1 = sequences["chr1"]
    rows = [("1", p, s1[p - 1], "A" if s1[p - 1] != "A" else "C") for p in range(150, 4850, 4)]
    rows += [("chr9", 5, "A", "C")] * 3
    pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt"]).to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", fasta)
    report = json.loads((tmp_path / "out" / "toy" / "_build_report.json").read_text())
    assert report["read"] == len(rows) == report["written"] + sum(report["excluded"].values())
    assert report["written"] == len(built) == len(rows) - 3 > 1024


def test_a_pair_repeated_with_another_label_in_an_assay_is_a_named_conflict(genome, tmp_path):
    """Within an assay, the same variant with the same label is a duplicate, with another label
    a conflict named with both labels (the first written); in another assay it is a pair of
    its own."""
    fasta, sequences = genome
    s1 = sequences["chr1"]
    snv = ("1", 1000, s1[999], "G" if s1[999] != "G" else "T")
    other = ("1", 1200, s1[1199], "A" if s1[1199] != "A" else "C")
    rows = [
        (*snv, 0.5, "a"),
        (*other, 1.5, "a"),
        (*snv, 0.5, "a"),  # duplicate_pair
        (*snv, 2.5, "a"),  # conflicting_label
        (*snv, 2.5, "b"),  # another assay: kept
    ]
    table = pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt", "label", "assay"])
    table.to_parquet(tmp_path / "v.parquet")
    built = build_variants(tmp_path, tmp_path / "v.parquet", fasta)
    report = json.loads((tmp_path / "out" / "toy" / "_build_report.json").read_text())
    assert report["excluded"] == {"duplicate_pair": 1, "conflicting_label": 1}
    assert list(zip(built["assay"], built["label"], strict=True)) == [
        ("a", 0.5),
        ("a", 1.5),
        ("b", 2.5),
    ]
    named = pd.read_csv(tmp_path / "out" / "toy" / "_excluded.tsv", sep="\t")
    assert named["reason"].tolist() == [
        "duplicate_pair",
        "conflicting_label (label 2.5; an earlier record of the same pair, which is written, "
        "has 0.5)",
    ]


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        ("label", ["0.5", "n.d."], "record 1: label 'n.d.' is not a number, in a label column of numbers"),
        ("label", [0.5, float("inf")], "record 1: label inf is not a finite number"),
        ("score", [0.5, 1.5], "has a 'score' column but no 'label' column: labels are read from "
         "the column 'label'; give --label-column score to read score as the label"),
    ],
)  # fmt: skip
def test_a_label_that_is_not_a_finite_number_or_a_score_column_is_refused(
    genome, tmp_path, capsys, column, values, message
):
    fasta, sequences = genome
    s1 = sequences["chr1"]
    table = pd.DataFrame(
        [("1", p, s1[p - 1], "G" if s1[p - 1] != "G" else "T") for p in (1000, 1200)],
        columns=["chrom", "pos", "ref", "alt"],
    ).assign(**{column: values})
    table.to_csv(tmp_path / "v.csv", index=False)
    args = ["build", "variants", "--variants", str(tmp_path / "v.csv"), "--fasta", str(fasta)]
    assert main([*args, "--config", "toy", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'v.csv'}: {message}" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "toy").exists()  # the refused build's folder removed


def test_positions_one_base_off_at_most_rows_are_named_as_such(tmp_path, capsys):
    """REF mismatches the FASTA at most rows and matches one base later: 0-based positions, named
    with the counts, and no config left behind; a few mismatches are excluded as before."""
    import pandas as pd

    from dna_fixtures import random_genome
    from perturbation_bench.cli import main

    fasta, sequences = random_genome(tmp_path, {"chr1": 800}, 11)
    genome = sequences["chr1"]
    sites = range(100, 700, 50)  # 12 sites, 1-based
    rows = [
        {
            "chrom": "chr1",
            "pos": p,
            "ref": genome[p - 1],
            "alt": "ACGT".replace(genome[p - 1], "")[0],
        }
        for p in sites
    ]
    zero_based = [{**row, "pos": row["pos"] - 1} for row in rows]
    # a 0-based position mismatches unless its base equals the next one
    mismatched = sum(genome[p - 2] != genome[p - 1] for p in sites)
    for name, table in (("zero", zero_based), ("one", rows[:10] + zero_based[10:])):
        pd.DataFrame(table).to_csv(tmp_path / f"{name}.csv", index=False)
    args = ["--fasta", str(fasta), "--out", str(tmp_path / "out"), "--window", "60"]
    capsys.readouterr()
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(tmp_path / "zero.csv"),
                "--config",
                "zero",
                *args,
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.strip() == (
        f"perturbation-bench error: {tmp_path / 'zero.csv'}: REF does not match the FASTA at "
        f"{mismatched} of 12 variants, and {mismatched} of those match one base later: 0-based "
        "positions? This build reads 1-based positions, as VCF does (add 1 to every position)"
    )
    assert not (tmp_path / "out" / "zero").exists()
    assert (
        main(
            ["build", "variants", "--variants", str(tmp_path / "one.csv"), "--config", "one", *args]
        )
        == 0
    )
