"""Context calibration (pairs/calibration.py, build calibration, the report's calibration.tsv):
on a genome with a planted 5-mer structure, neutral sites calibrate to mean 0 in every cell."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from dna_fixtures import evaluate
from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.calibration import (
    CELL,
    MIN_SITES,
    calibration_offsets,
    cell_of,
)

TASK = "perturbation_variants"
WORDS = ("ACGTACGGTT", "TTGCAACGTC")
BLOCK = (1000, 1000 + 60 * 10)  # 0-based, half-open: the planted sites, 60 words in random order


def test_a_cell_is_the_forward_5_mer_and_the_alternate():
    assert cell_of("ttACGTAcc", 4, "c") == "ACGTA_C"
    assert cell_of("ACGTA", 2, "T") == "ACGTA_T"
    assert cell_of("ACGTA", 1, "T") is None  # two bases on each side or none
    assert cell_of("ACGTA", 3, "T") is None
    assert cell_of("ACNTA", 2, "T") is None
    assert cell_of("ACXTA", 2, "T") is None


def test_a_thin_or_missing_cell_is_refused_with_the_first_variant():
    means = {"AAAAA_C": (0.5, MIN_SITES), "CCCCC_A": (1.0, MIN_SITES - 1)}
    assert calibration_offsets(["AAAAA_C"] * 2, means, "t.tsv", str) == [0.5, 0.5]
    for cells, found in (
        (["AAAAA_C", "CCCCC_A"], f"cell CCCCC_A has {MIN_SITES - 1} site"),
        (["AAAAA_C", "GGGGG_T"], "cell GGGGG_T has 0 site"),
        (["AAAAA_C", None], "no 5-mer of A, C, G, T around its site"),
    ):
        with pytest.raises(
            OptionsError, match=rf"1 of 2 variants cannot be calibrated .* the first, 1: {found}"
        ):
            calibration_offsets(cells, means, "t.tsv", str)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A genome with a planted block of two 10-mers in random order (few 5-mers, each at many
    sites), the block's bases as neutral sites, a kmer-markov run of them scored with llr, and
    the report's calibration table."""
    root = tmp_path_factory.mktemp("calibration")
    rng = random.Random(3)
    flank = "".join(rng.choice("ACGT") for _ in range(BLOCK[0]))
    block = "".join(rng.choice(WORDS) for _ in range(60))  # few 5-mers, no two windows alike
    chromosome = flank + block + "".join(rng.choice("ACGT") for _ in range(1000))
    fasta = root / "g.fa"
    fasta.write_text(">chr1\n" + chromosome + "\n")
    (root / "sites.bed").write_text(f"chr1\t{BLOCK[0] + 2}\t{BLOCK[1] - 2}\n")  # 5-mers inside
    (root / "targets.bed").write_text(f"chr1\t{BLOCK[0] + 100}\t{BLOCK[0] + 130}\n")
    for config, bed in (("cal", "sites.bed"), ("targets", "targets.bed")):
        args = ["build", "calibration", "--fasta", str(fasta), "--sites", str(root / bed)]
        assert main([*args, "--config", config, "--out", str(root / "out"), "--window", "64"]) == 0
    metadata = {"config": "cal", "data_dir": str(root / "out"), "score": "llr"}
    evaluate(str(fasta), [TASK], metadata, model="kmer-markov", output_path=root / "run")
    from perturbation_bench.report.make import make_report

    make_report([root / "run"], root / "report", n_boot=20, se_boot=2, se_chrom_boot=2)
    return root, fasta


def _report(root, fasta, name: str, config: str, **options) -> pd.DataFrame:
    """A kmer-markov run of ``config`` with ``options``, read by the report: its pairs."""
    from perturbation_bench.report.make import make_report

    metadata = {"config": config, "data_dir": str(root / "out"), **options}
    evaluate(str(fasta), [TASK], metadata, model="kmer-markov", output_path=root / name)
    make_report([root / name], root / f"{name}_report", n_boot=20, se_boot=2, se_chrom_boot=2)
    return pd.read_parquet(root / f"{name}_report" / "pairs.parquet")


def test_neutral_sites_calibrate_to_mean_zero_in_every_cell(calibrated):
    root, fasta = calibrated
    table = pd.read_csv(root / "report" / "calibration.tsv", sep="\t")
    assert set(table["score"]) == {"llr"} and set(table["source"]) == {str(fasta)}
    assert set(table["window_bp"]) == {64} and len(table) > 20
    assert table["mean"].round(6).nunique() > 1  # the planted contexts score differently
    raw = pd.read_parquet(root / "report" / "pairs.parquet")
    expected = raw["margin"] - raw.groupby(CELL)["margin"].transform("mean")
    path = str(root / "report" / "calibration.tsv")
    pairs = _report(root, fasta, "cal_run", "cal", score="calibrated_llr", calibration=path)
    assert set(pairs["score_kind"]) == {"calibrated_llr"}
    by_pair = dict(zip(pairs["pair_id"], pairs["score"], strict=True))
    assert [by_pair[p] for p in raw["pair_id"]] == pytest.approx(expected.tolist(), abs=1e-9)
    assert pairs.groupby(CELL)["score"].mean().abs().max() < 1e-9
    assert len(table) == pairs[CELL].nunique() and table["sites"].sum() == len(pairs)


@pytest.mark.parametrize("named", ["report/calibration.tsv", "run"])
def test_other_variants_are_calibrated_by_their_cells_mean(calibrated, named):
    """The setting names the report's table, or the scored calibration run itself."""
    root, fasta = calibrated
    table = pd.read_csv(root / "report" / "calibration.tsv", sep="\t").set_index("cell")
    path = str(root / named)
    name = f"targets_{named.split('/')[0]}"
    pairs = _report(root, fasta, name, "targets", score="calibrated_llr", calibration=path)
    expected = pairs["margin"] - table.loc[pairs[CELL], "mean"].to_numpy()
    assert pairs["score"].tolist() == pytest.approx(expected.tolist(), abs=1e-9)


def test_a_run_or_report_folder_gives_the_table_the_report_writes(calibrated):
    from perturbation_bench.errors import DataSourceError
    from perturbation_bench.report.calibration import read_calibration

    root, _ = calibrated
    written = pd.read_csv(root / "report" / "calibration.tsv", sep="\t")
    for named in ("report", "run", "report/calibration.tsv"):
        table = read_calibration(root / named)
        assert table["cell"].tolist() == written["cell"].tolist()
        assert table["sites"].tolist() == written["sites"].tolist()
        assert table["mean"].tolist() == pytest.approx(written["mean"].tolist(), abs=1e-12)
    with pytest.raises(DataSourceError, match=r"calibration .*nowhere: no such table or folder"):
        read_calibration(root / "nowhere")


def test_a_run_of_other_variants_is_not_a_calibration(calibrated, tmp_path):
    """A run of a config that ``build calibration`` did not write has no cells to average."""
    from dna_fixtures import build_variants
    from perturbation_bench.errors import DataSourceError
    from perturbation_bench.report.calibration import read_calibration

    _, fasta = calibrated
    chromosome = fasta.read_text().split("\n")[1]
    pos = 500
    rows = [("chr1", pos, chromosome[pos - 1], "A" if chromosome[pos - 1] != "A" else "C")]
    table = pd.DataFrame([dict(zip(("chrom", "pos", "ref", "alt"), r, strict=True)) for r in rows])
    table.to_csv(tmp_path / "v.csv", index=False)
    build_variants(tmp_path, tmp_path / "v.csv", fasta, "plain", window=64)
    metadata = {"config": "plain", "data_dir": str(tmp_path / "out")}
    evaluate(str(fasta), [TASK], metadata, model="kmer-markov", output_path=tmp_path / "run")
    message = (
        r"calibration \S+run: this run scored no calibration sites \(a config of "
        r"perturbation-bench build calibration\)$"
    )
    with pytest.raises(DataSourceError, match=message):
        read_calibration(tmp_path / "run")


def test_a_model_without_a_source_cannot_be_matched_to_a_table():
    from perturbation_bench.pairs.settings import TaskSettings
    from perturbation_bench.tasks.variants import _calibrate

    settings = TaskSettings(score="calibrated_llr", calibration="calibration.tsv")
    message = (
        r"^score calibrated_llr: the model has no pretrained \(or fasta\) to match the "
        r"calibration table by$"
    )
    with pytest.raises(OptionsError, match=message):
        _calibrate([], settings, {"batch_size": 8})


def _calibrated(root, **options) -> dict:
    """The metadata of a calibrated_llr run of the calibration sites with their table."""
    table = str(root / "report" / "calibration.tsv")
    calibrated = {"score": "calibrated_llr", "calibration": table}
    return {"config": "cal", "data_dir": str(root / "out"), **calibrated, **options}


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"context_bp": 32},
            r"calibration \S+calibration.tsv: no llr or marginal_llr means for this run's window "
            r"32 \(the table has 64\); calibrate with the same model, strands and window$",
        ),
        ({"rc_average": True}, r"this run's rc_average True \(the table has False\)"),
        ({"score": "calibrated_entropy"}, r"no entropy means for this run's model"),
        ({"calibration": None}, r"name their scored run or its table"),
    ],
)
def test_a_table_of_another_window_strand_rule_or_score_is_refused(calibrated, options, message):
    root, fasta = calibrated
    with pytest.raises(OptionsError, match=message):
        evaluate(str(fasta), [TASK], _calibrated(root, **options), model="kmer-markov")


def test_a_table_of_another_model_is_refused(calibrated, tiny_models):
    root, _ = calibrated
    with pytest.raises(OptionsError, match=r"this run's model '.*char' \(the table has .*g.fa\)"):
        evaluate(tiny_models["char"], [TASK], _calibrated(root), model="dna-hf")


def test_a_variant_whose_cell_the_table_lacks_is_refused(calibrated, tmp_path):
    root, fasta = calibrated
    table = pd.read_csv(root / "report" / "calibration.tsv", sep="\t")
    thin = tmp_path / "thin.tsv"
    table.assign(sites=MIN_SITES - 1).to_csv(thin, sep="\t", index=False)
    metadata = {"config": "targets", "data_dir": str(root / "out"), "score": "calibrated_llr"}
    with pytest.raises(
        OptionsError,
        match=rf"(\d+) of \1 variants cannot be calibrated .* has {MIN_SITES - 1} site",
    ):
        evaluate(str(fasta), [TASK], {**metadata, "calibration": str(thin)}, model="kmer-markov")
