"""Motif footprints (``build footprints``, the ``perturbation_footprints`` task, the report).

The build is checked row by row against the MEME matrices and the backgrounds read here
independently (the consensus taken base by base, DART-Eval's insert position, the control a
permutation, every other base the background's); the metrics against DART-Eval's own formulas
(``footprint_eval_likelihoods.py``: accuracy with ``>=``, scipy's Wilcoxon, accuracy vs
background) computed from the run's logged likelihoods; the LLs of all three comparisons
against an independent fp32 computation; and the floor: an order-0 chain ties on every
permuted insert."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr, wilcoxon

from dna_fixtures import consensus_of, evaluate, read_fasta, reverse_complement
from perturbation_bench import __version__
from perturbation_bench.cli import main
from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.kinds.footprints.task import load_footprint_pairs

TASK = "perturbation_footprints"


def meme_text(motifs: dict[str, list[list[float]]]) -> str:
    """A MEME minimal file of ``name -> rows of (A, C, G, T) probabilities``."""
    lines = ["MEME version 5", "", "ALPHABET= ACGT", "", "strands: + -", ""]
    lines += ["Background letter frequencies", "A 0.25 C 0.25 G 0.25 T 0.25", ""]
    for name, rows in motifs.items():
        lines += [f"MOTIF {name} {name.split('.')[0]}", ""]
        lines.append(f"letter-probability matrix: alength= 4 w= {len(rows)} nsites= 20 E= 0")
        lines += ["  ".join(f"{p:.6f}" for p in row) for row in rows] + [""]
    return "\n".join(lines) + "\n"


def random_matrices(seed: int) -> dict[str, list[list[float]]]:
    """Seeded motifs of 4-9 positions; one with exact ties between two bases at every position
    (the consensus takes the first of A, C, G, T), and one of a single base."""
    rng = random.Random(seed)
    motifs = {}
    for k in range(5):
        rows = []
        for _ in range(rng.randint(4, 9)):
            weights = [rng.random() for _ in range(4)]
            rows.append([w / sum(weights) for w in weights])
        motifs[f"TF{k}.H12CORE.0.P.B"] = rows
    motifs["TIED.H12CORE.0.P.B"] = [[0.4, 0.1, 0.4, 0.1], [0.1, 0.3, 0.3, 0.3]] * 3
    motifs["POLYA.H12CORE.0.P.B"] = [[0.97, 0.01, 0.01, 0.01]] * 6
    return motifs


@pytest.fixture(scope="module")
def material(tmp_path_factory):
    """A MEME file and a FASTA of backgrounds (60-150 bp; one of 12 bp, too short for most
    inserts), both seeded."""
    folder = tmp_path_factory.mktemp("footprints")
    matrices = random_matrices(5)
    (folder / "motifs.meme").write_text(meme_text(matrices))
    rng = random.Random(8)
    backgrounds = {
        f"bg{k}": "".join(rng.choice("ACGT") for _ in range(rng.randint(60, 150))) for k in range(6)
    }
    backgrounds["short"] = "".join(rng.choice("ACGT") for _ in range(12))
    (folder / "bg.fa").write_text("".join(f">{k}\n{v}\n" for k, v in backgrounds.items()))
    return folder, matrices, backgrounds


def source(folder: Path, backgrounds: Path | None = None) -> list[str]:
    """The build's inputs: the material's MEME file and ``backgrounds`` (default: its FASTA)."""
    fasta = backgrounds or folder / "bg.fa"
    return ["--motifs", str(folder / "motifs.meme"), "--backgrounds", str(fasta)]


def build(tmp_path, inputs: list[str], *extra, config="fp") -> tuple[pd.DataFrame, Path]:
    out = tmp_path / "out"
    status = main(["build", "footprints", *inputs, "--config", config, "--out", str(out), *extra])
    assert status == 0
    return pd.read_parquet(out / config), out / config


def test_every_row_holds_the_consensus_at_the_centre_and_a_permutation_of_it_as_control(
    material, tmp_path, capsys
):
    folder, matrices, backgrounds = material
    table, config = build(
        tmp_path,
        source(folder),
        "--copies",
        "1,2,3",
        "--spacing",
        "0,5",
    )
    consensus = {name: consensus_of(rows) for name, rows in matrices.items()}
    assert consensus["TIED.H12CORE.0.P.B"] == "AC" * 3
    controls = {}
    forward = table[table["orientation"] == "forward"]
    for row in forward.to_dict("records"):
        c, bg = consensus[row["motif"]], backgrounds[row["background_id"]]
        n, s, w = row["copies"], row["spacing"], len(c)
        span = n * w + (n - 1) * s
        starts = [len(bg) // 2 - span // 2 + j * (w + s) for j in range(n)]
        if n == 1:  # DART-Eval's insert_motif, as its generator writes it
            loc = len(bg) // 2 - len(c) // 2
            assert row["original_sequence"] == bg[:loc] + c + bg[loc + len(c) :]
        q = row["control_insert"]
        assert sorted(q) == sorted(c) and q != c
        assert controls.setdefault((row["motif"], row["background_id"]), q) == q  # every dose
        for name, insert in (("original_sequence", c), ("sequence", q)):
            expected = list(bg)
            for start in starts:
                expected[start : start + w] = insert
            assert row[name] == "".join(expected)
        assert row["background_sequence"] == bg
        assert (row["insert_start"], row["insert_end"]) == (starts[0], starts[-1] + w)
        assert row["consensus"] == c
    drawn = {}  # one draw per motif and background, as DART-Eval shuffles per sequence
    for (motif, _), q in controls.items():
        drawn.setdefault(motif, set()).add(q)
    assert all(len(draws) > 1 for draws in drawn.values())
    reverse = table[table["orientation"] == "reverse"].set_index("benchmark_id")
    assert len(reverse) == len(forward)
    for row in forward.to_dict("records"):
        flipped = reverse.loc[row["benchmark_id"][:-2] + ":-"]
        for name in ("original_sequence", "sequence", "background_sequence"):
            assert flipped[name] == reverse_complement(row[name])
        length = len(row["original_sequence"])
        assert flipped["original_sequence"][flipped["insert_start"] : flipped["insert_end"]] == (
            reverse_complement(row["original_sequence"][row["insert_start"] : row["insert_end"]])
        )
        assert flipped["insert_end"] == length - row["insert_start"]
    # counted in = counted out, in rows: 7 motifs x 7 backgrounds x 5 doses x 2 strands
    report = json.loads((config / "_build_report.json").read_text())
    assert report["read"] == 7 * 7 * 5 * 2 == len(table) + sum(report["excluded"].values())
    assert report["settings"] == {
        "motifs_file": str(folder / "motifs.meme"),
        "config": "fp",
        "copies": [1, 2, 3],
        "spacing": [0, 5],
        "orientation": "both",
        "max_backgrounds": None,
        "seed": 0,
        "script_version": f"perturbation-bench {__version__}",
    }
    assert (table["random_seed"] == 0).all()  # each row names the seed of its control
    assert report["excluded"]["one_base_consensus_no_permutation_differs"] == 7 * 5 * 2
    assert set(table["motif"]) == set(matrices) - {"POLYA.H12CORE.0.P.B"}
    too_long = sum(
        n * len(c) + (n - 1) * s > len(bg)
        for name, c in consensus.items()
        if name != "POLYA.H12CORE.0.P.B"
        for bg in backgrounds.values()
        for n, s in [(1, 0), (2, 0), (2, 5), (3, 0), (3, 5)]
    )
    assert report["excluded"]["insert_longer_than_background"] == 2 * too_long > 0
    excluded = pd.read_csv(config / "_excluded.tsv", sep="\t")
    assert set(excluded["reason"]) == {
        "one_base_consensus_no_permutation_differs",
        "insert_longer_than_background",
    }
    one_base = excluded[excluded["reason"] == "one_base_consensus_no_permutation_differs"]
    assert set(zip(one_base["motif"], one_base["background"], strict=True)) == {
        ("POLYA.H12CORE.0.P.B", "*")
    }
    assert len(one_base) == 5  # one line per dose
    out = capsys.readouterr().out
    assert f"read 7 motifs and 7 backgrounds; wrote {len(table)} pairs of {report['read']}" in out
    assert main(["validate", str(config)]) == 0


def test_a_backgrounds_controls_do_not_depend_on_the_other_backgrounds(material, tmp_path):
    folder, _, backgrounds = material
    whole, _ = build(tmp_path, source(folder), config="all")
    (tmp_path / "one.fa").write_text(f">bg3\n{backgrounds['bg3']}\n")
    alone, _ = build(tmp_path, source(folder, tmp_path / "one.fa"), config="one")
    shared = whole[whole["background_id"] == "bg3"].reset_index(drop=True)
    pd.testing.assert_frame_equal(shared, alone)
    other, _ = build(tmp_path, source(folder), "--seed", "1", config="s1")
    assert (other["control_insert"] != whole["control_insert"]).any()


def test_max_backgrounds_spreads_its_sample_evenly_and_keeps_their_rows(material, tmp_path, capsys):
    """7 backgrounds, at most 3: those at 0, 2 and 4 (floor(i 7 / 3)), each with the rows the
    whole build gives it; the report and the summary line say 3 of 7."""
    folder, _, backgrounds = material
    inputs = source(folder)
    whole, _ = build(tmp_path, inputs, config="all")
    capsys.readouterr()
    sample, config = build(tmp_path, inputs, "--max-backgrounds", "3", config="three")
    names = list(backgrounds)
    assert list(dict.fromkeys(sample["background_id"])) == [names[0], names[2], names[4]]
    kept = whole[whole["background_id"].isin(sample["background_id"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(sample, kept)
    report = json.loads((config / "_build_report.json").read_text())
    assert (report["backgrounds_read"], report["backgrounds"]) == (7, 3)
    assert report["read"] == 3 * 7 * 2 == len(sample) + sum(report["excluded"].values())
    assert (
        "read 7 motifs and 7 backgrounds (3 used, spread evenly); wrote" in capsys.readouterr().out
    )
    every, _ = build(tmp_path, inputs, "--max-backgrounds", "7", config="seven")
    pd.testing.assert_frame_equal(every, whole)


def test_backgrounds_come_from_a_controls_config_or_bed_regions(material, tmp_path, capsys):
    folder, _, _ = material
    rng = random.Random(3)
    chrom = "".join(rng.choice("ACGT") for _ in range(2000))
    (tmp_path / "g.fa").write_text(f">chr1\n{chrom}\n")
    (tmp_path / "e.bed").write_text("chr1\t100\t160\te1\nchr1\t700\t790\te2\n")
    assert (
        main(
            [
                "build",
                "controls",
                "--fasta",
                str(tmp_path / "g.fa"),
                "--bed",
                str(tmp_path / "e.bed"),
                "--shuffle",
                "dinucleotide",
                "--window",
                "120",
                "--config",
                "neg",
                "--out",
                str(tmp_path / "controls"),
            ]
        )
        == 0
    )
    negatives = pd.read_parquet(tmp_path / "controls" / "neg")
    meme = ["--motifs", str(folder / "motifs.meme")]
    table, _ = build(
        tmp_path,
        source(folder, tmp_path / "controls" / "neg"),
        "--orientation",
        "forward",
        config="from_controls",
    )
    got = dict(zip(table["background_id"], table["background_sequence"], strict=True))
    assert got == dict(zip(negatives["benchmark_id"], negatives["sequence"], strict=True))
    table, _ = build(
        tmp_path,
        [*meme, "--bed", str(tmp_path / "e.bed"), "--fasta", str(tmp_path / "g.fa")],
        "--orientation",
        "forward",
        config="from_bed",
    )
    got = dict(zip(table["background_id"], table["background_sequence"], strict=True))
    assert got == {"chr1:100-160": chrom[100:160], "chr1:700-790": chrom[700:790]}
    capsys.readouterr()

    def refused(bed: str, text: str) -> str:
        (tmp_path / bed).write_text(text)
        regions = ["--bed", str(tmp_path / bed), "--fasta", str(tmp_path / "g.fa")]
        arguments = [*meme, *regions, "--config", "x", "--out", str(tmp_path / "x")]
        assert main(["build", "footprints", *arguments]) == 2
        return capsys.readouterr().err

    err = refused("empty.bed", "# no region\n")
    assert f"{tmp_path / 'empty.bed'}: no background sequence" in err
    err = refused("past.bed", "chr1\t100\t160\n\nchr1\t1990\t2010\n")
    assert f"{tmp_path / 'past.bed'} line 3" in err and "past the end of chr1" in err


def test_dart_evals_file_of_one_sequence_per_line_gives_the_backgrounds_by_line_number(
    material, tmp_path
):
    """The same windows from a FASTA and from DART-Eval's text file give the same rows, named
    0, 1, ... by line; a blank line between sequences is refused, trailing ones are not."""
    from perturbation_bench.formats.backgrounds import read_backgrounds

    folder, _, backgrounds = material
    lines = [
        sequence.lower() if i % 2 else sequence for i, sequence in enumerate(backgrounds.values())
    ]
    (tmp_path / "raw_seqs.txt").write_text("\n".join(lines) + "\n\n")
    from_text, _ = build(tmp_path, source(folder, tmp_path / "raw_seqs.txt"), config="t")
    from_fasta, _ = build(tmp_path, source(folder), config="f")
    names = {name: str(i) for i, name in enumerate(backgrounds)}
    assert list(from_text["background_id"]) == [names[n] for n in from_fasta["background_id"]]
    columns = ["original_sequence", "background_sequence", "motif", "copies", "orientation"]
    pd.testing.assert_frame_equal(from_text[columns], from_fasta[columns])  # controls: by name
    (tmp_path / "gap.txt").write_text("ACGTACGT\n\nACGTACGT\n")
    with pytest.raises(DataValidationError, match="gap.txt line 2: blank, not a background"):
        read_backgrounds(str(tmp_path / "gap.txt"), None, None)


def test_background_sources_at_their_edges(material, tmp_path):
    """A BED region may end at its chromosome's end, not past it or on a chromosome the FASTA
    lacks; a controls config gives the windows of all its files, and a folder that is not one
    is refused by name."""
    from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
    from perturbation_bench.formats.backgrounds import read_backgrounds

    chrom = "".join(random.Random(2).choice("ACGT") for _ in range(300))
    (tmp_path / "g.fa").write_text(f">chr1\n{chrom}\n")
    (tmp_path / "end.bed").write_text("chr1\t280\t300\n")
    got = read_backgrounds(None, str(tmp_path / "end.bed"), str(tmp_path / "g.fa"))
    assert got == [("chr1:280-300", chrom[280:])]
    for text, message in [
        ("chr1\t280\t301\n", "chr1:280-301 ends past the end of chr1 in"),
        ("chr9\t0\t10\n", "chr9:0-10 is not in"),
    ]:
        (tmp_path / "bad.bed").write_text(text)
        with pytest.raises(DataValidationError, match=f"bad.bed line 1: {message} .*g.fa"):
            read_backgrounds(None, str(tmp_path / "bad.bed"), str(tmp_path / "g.fa"))
    (tmp_path / "none").mkdir()
    with pytest.raises(DataValidationError, match="none: no parquet files .a config built by"):
        read_backgrounds(str(tmp_path / "none"), None, None)
    pairs = random_pairs(3, 40, seed=1)
    write_parquet(pairs, tmp_path, "pairs")
    with pytest.raises(
        DataValidationError,
        match=r"pairs/test-00000-of-00001.parquet: not a config built by 'build controls' \(no "
        r"shuffle and benchmark_id columns\); give its shuffled windows as a FASTA instead$",
    ):
        read_backgrounds(str(tmp_path / "pairs"), None, None)
    controls = [
        {**r, "benchmark_id": f"e{i}", "shuffle": "dinucleotide"} for i, r in enumerate(pairs)
    ]
    write_parquet(controls[:2], tmp_path, "two_files", name="a.parquet")
    write_parquet(controls[2:], tmp_path, "two_files", name="b.parquet")
    got = read_backgrounds(str(tmp_path / "two_files"), None, None)
    assert got == [(f"e{i}", r["sequence"].upper()) for i, r in enumerate(pairs)]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--copies", "0"], "--copies: '0' is not a whole number of at least 1"),
        (["--spacing", "2,-1"], "--spacing: '-1' is not a whole number of at least 0"),
        (["--config", "footprints"], "one of the package's own tasks"),
        (["--fasta", "g.fa"], "--fasta goes with --bed"),
        (["--max-backgrounds", "0"], "--max-backgrounds must be at least 1, got 0"),
    ],
)
def test_bad_options_are_refused_naming_them(material, tmp_path, capsys, arguments, message):
    folder, _, _ = material
    status = main(
        [
            "build",
            "footprints",
            "--motifs",
            str(folder / "motifs.meme"),
            "--backgrounds",
            str(folder / "bg.fa"),
            "--out",
            str(tmp_path),
            *(["--config", "c"] if "--config" not in arguments else []),
            *arguments,
        ]
    )
    assert status == 2
    assert message in capsys.readouterr().err


def dart_eval_metrics(samples: list[dict]) -> pd.DataFrame:
    """DART-Eval's ``get_accuracies``, ``get_pvals`` and ``get_background_accs``, applied to the
    run's logged likelihoods (true, shuffled, raw) per motif, as that script reads them."""
    likelihoods, raw = {}, {}
    for sample in samples:
        doc, resps = sample["doc"], sample["filtered_resps"]
        per = len(resps) // 3
        true, shuffled = resps[0]
        assert resps[per][0] == true and resps[2 * per][0] == shuffled
        assert resps[per][1] == resps[2 * per][1]  # the background scored once, the same
        entry = likelihoods.setdefault(doc["motif"], {"true": [], "shuffled": []})
        entry["true"].append(true)
        entry["shuffled"].append(shuffled)
        raw.setdefault(doc["motif"], []).append(resps[per][1])
    out = {}
    for motif, entry in likelihoods.items():
        diffs = [t - s for t, s in zip(entry["true"], entry["shuffled"], strict=True)]
        true_diffs = np.abs(np.array(raw[motif]) - np.array(entry["true"]))
        shuf_diffs = np.abs(np.array(raw[motif]) - np.array(entry["shuffled"]))
        out[motif] = {
            "Accuracy": np.mean([x >= 0 for x in diffs]),
            "Strict": np.mean([x > 0 for x in diffs]),
            "P-Value": wilcoxon(entry["true"], entry["shuffled"], alternative="greater")[1],
            "Accuracy vs Background": np.mean(true_diffs > shuf_diffs),
        }
    return pd.DataFrame(out).T


def logged(run: Path, task: str = TASK) -> list[dict]:
    """The run's samples, each ``filtered_resps`` as float pairs (lm-eval writes their reprs)."""
    (path,) = run.rglob(f"samples_{task}_*.jsonl")
    samples = [json.loads(line) for line in path.read_text().splitlines()]
    for sample in samples:
        sample["filtered_resps"] = [[float(x) for x in pair] for pair in sample["filtered_resps"]]
    return samples


def scored_build(material, root: Path, *doses: str) -> tuple[Path, Path]:
    """Config ``fp`` of the seeded material built under ``root / "out"`` with the dose options
    ``doses``, and a seeded 4 kb genome there for kmer-markov; return the folder and the genome."""
    folder, _, _ = material
    _, config = build(
        root,
        source(folder),
        *doses,
    )
    rng = random.Random(4)
    genome = config.parent / "genome.fa"
    genome.write_text(f">c\n{''.join(rng.choice('ACGT') for _ in range(4000))}\n")
    return config.parent, genome


@pytest.fixture(scope="module")
def one_dose(material, tmp_path_factory):
    return scored_build(material, tmp_path_factory.mktemp("one_dose"))[0]


@pytest.mark.parametrize("ties", ["strict", "correct"])
def test_the_task_and_the_report_give_dart_evals_per_motif_numbers(one_dose, tmp_path, ties):
    run = tmp_path / "run"
    result = evaluate(
        str(one_dose / "genome.fa"),
        [TASK],
        {"data_dir": str(one_dose), "config": "fp", "ties": ties},
        model="kmer-markov",
        order=2,
        output_path=run,
    )
    expected = dart_eval_metrics(logged(run))
    got = result["results"][TASK]
    accuracy = expected["Accuracy" if ties == "correct" else "Strict"]
    assert got["motif_acc,pairs"] == pytest.approx(accuracy.mean(), abs=1e-12)
    assert got["motifs_significant,pairs"] == pytest.approx((expected["P-Value"] < 0.05).mean())
    rows = pd.read_parquet(one_dose / "fp")
    weights = rows.groupby("motif").size().reindex(expected.index)
    assert got["background_acc,pairs"] == pytest.approx(
        (expected["Accuracy vs Background"] * weights).sum() / weights.sum(), abs=1e-12
    )
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    table = pd.read_csv(tmp_path / "report" / "footprints.csv")
    assert list(table.columns) == list(report["footprints"]["motifs"][0])  # no index column
    assert report["figures"]["footprints"] is True
    table = table.set_index("motif")
    table = table.reindex(expected.index)
    assert (table["ties_rule"] == ties).all()
    np.testing.assert_allclose(table["accuracy"], accuracy, atol=1e-12)
    np.testing.assert_allclose(table["wilcoxon_p"], expected["P-Value"], rtol=1e-9)
    np.testing.assert_allclose(table["vs_background"], expected["Accuracy vs Background"])
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Motif footprints" in text and f"| {ties} |" in text
    assert (tmp_path / "report" / "footprints.png").exists()


def test_an_order_0_chain_ties_on_every_permuted_insert(one_dose):
    """A permutation keeps the base counts, all an order-0 chain reads: a tie on every pair
    (strict: accuracy 0; DART-Eval's rule: 1), and no motif-dose is significant."""
    results = {}
    for ties in ("strict", "correct"):
        result = evaluate(
            str(one_dose / "genome.fa"),
            [TASK],
            {"data_dir": str(one_dose), "config": "fp", "ties": ties},
            model="kmer-markov",
            order=0,
        )
        results[ties] = result["results"][TASK]
    assert results["strict"]["tie_rate,pairs"] == 1.0
    assert results["strict"]["motif_acc,pairs"] == 0.0
    assert results["correct"]["motif_acc,pairs"] == 1.0
    assert results["correct"]["pairwise_acc,pairs"] == 0.0  # the pair metric stays strict
    assert results["strict"]["motifs_significant,pairs"] == 0.0
    assert results["strict"]["background_acc,pairs"] == 0.0  # |m_o| == |m_p|: strict


@pytest.mark.slow  # scipy's exact Wilcoxon on small tied groups: ~0.5 s a motif-dose
def test_the_dose_response_is_the_spearman_of_the_margin_with_the_dose(material, tmp_path):
    _, genome = scored_build(material, tmp_path, "--copies", "1,2,4", "--spacing", "0,3")
    run = tmp_path / "run"
    result = evaluate(  # the built config's own task, from the YAML the build wrote
        str(genome),
        ["perturbation_fp"],
        {},
        model="kmer-markov",
        order=2,
        output_path=run,
        include=[tmp_path / "out"],
    )
    results = result["results"]["perturbation_fp"]
    frame = pd.DataFrame(
        [
            {
                **{k: s["doc"][k] for k in ("motif", "copies", "spacing")},
                "margin": s["filtered_resps"][0][0] - s["filtered_resps"][0][1],
            }
            for s in logged(run, "perturbation_fp")
        ]
    )
    for axis in ("copies", "spacing"):
        rhos = [spearmanr(g[axis], g["margin"]).statistic for _, g in frame.groupby("motif")]
        got = results[f"{axis}_spearman,pairs"]
        assert got == pytest.approx(np.nanmean(rhos), abs=1e-12)
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    summary = json.loads((tmp_path / "report" / "report.json").read_text())["footprints"]
    assert summary["summary"][0]["copies_spearman"] == pytest.approx(
        results["copies_spearman,pairs"], abs=1e-12
    )
    assert len(summary["motifs"]) == frame.groupby(["motif", "copies", "spacing"]).ngroups
    text = (tmp_path / "report" / "report.md").read_text()
    lines = text.split("## Motif footprints", 1)[1].split("\n## ", 1)[0].splitlines()
    first = summary["summary"][0]
    rhos = f"| {first['copies_spearman']:.3f} | {first['spacing_spearman']:.3f} |"
    assert any(line.startswith(f"| {first['model']} |") and line.endswith(rhos) for line in lines)
    assert lines.count("|" + "---|" * 10) == 2  # the summary and the per-motif tables


@pytest.mark.slow
def test_two_processes_give_the_footprint_metrics_of_one(material, tmp_path):
    """Each process scores its share of the documents; the metrics over motifs and doses are
    aggregated on rank 0 over all of them, so they equal a one-process run's."""
    from dna_fixtures import assert_same_results, run_two_processes

    out, genome = scored_build(material, tmp_path, "--copies", "1,2", "--spacing", "0,3")
    metadata = {"config": "fp", "ties": "correct"}
    single = evaluate(
        str(genome),
        [TASK],
        {"data_dir": str(out), **metadata},
        model="kmer-markov",  # order 3, as the driver runs it
    )["results"][TASK]
    assert {"copies_spearman,pairs", "spacing_spearman,pairs"} <= single.keys()
    run, parallel = run_two_processes(
        genome,
        out,
        tmp_path,
        "kmer-markov",
        TASK,
        json.dumps(metadata),
    )
    assert_same_results(parallel["results"], single)
    n = single["sample_len"]
    for share in ((n + 1) // 2, n // 2):
        assert f"this process scores {share} of the {n} pairs and holds only those" in run.stderr


def test_one_dose_reports_no_dose_response(one_dose):
    result = evaluate(
        str(one_dose / "genome.fa"),
        [TASK],
        {"data_dir": str(one_dose), "config": "fp"},
        model="kmer-markov",
        order=1,
    )
    assert not any("spearman" in key for key in result["results"][TASK])


def test_a_causal_model_scores_all_three_windows_as_independent_sums(
    material, tmp_path, tiny_models
):
    """dna-hf on footprints: each logged LL of each comparison equals the fp32 sum of the
    window's token log-probs after the BOS token, computed here token by token."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dna_fixtures import reference_ll

    folder, _, _ = material
    (tmp_path / "two.fa").write_text(
        "".join(f">{k}\n{v}\n" for k, v in list(read_fasta(folder / "bg.fa").items())[:2])
    )
    table, _ = build(
        tmp_path,
        source(folder, tmp_path / "two.fa"),
    )
    run = tmp_path / "run"
    evaluate(
        tiny_models["char"],
        [TASK],
        {"data_dir": str(tmp_path / "out"), "config": "fp"},
        model="dna-hf",
        output_path=run,
    )
    model = AutoModelForCausalLM.from_pretrained(tiny_models["char"]).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_models["char"])
    samples = sorted(logged(run), key=lambda s: s["doc_id"])
    assert len(samples) == len(table)
    for sample, row in zip(samples, table.to_dict("records"), strict=True):
        ll = {
            k: reference_ll(model, tokenizer, "", row[k])
            for k in ("original_sequence", "sequence", "background_sequence")
        }
        expected = [
            ("original_sequence", "sequence"),
            ("original_sequence", "background_sequence"),
            ("sequence", "background_sequence"),
        ]
        got = sample["filtered_resps"][::2]
        for pair, (a, b) in zip(got, expected, strict=True):
            assert pair == pytest.approx([ll[a], ll[b]], abs=1e-4)


def test_a_masked_model_scores_each_comparison_over_what_differs_in_it(material, tmp_path):
    """dna-mlm (masked marginal) on footprints: each comparison is the pinned definition of a
    pair, computed here pair by pair."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from dna_fixtures import build_tokenizer, reference_pair
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    path = str(save_random_bert(tmp_path / "bert", as_masked_lm_tokenizer(build_tokenizer("char"))))
    folder, _, _ = material
    (tmp_path / "one.fa").write_text(f">bg0\n{read_fasta(folder / 'bg.fa')['bg0']}\n")
    table, _ = build(
        tmp_path,
        source(folder, tmp_path / "one.fa"),
        "--orientation",
        "forward",
    )
    run = tmp_path / "run"
    evaluate(
        path,
        [TASK],
        {"data_dir": str(tmp_path / "out"), "config": "fp"},
        model="dna-mlm",
        output_path=run,
    )
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    limit = model.config.max_position_embeddings
    samples = sorted(logged(run), key=lambda s: s["doc_id"])
    for sample, row in zip(samples, table.to_dict("records"), strict=True):
        o, p, r = (row[k] for k in ("original_sequence", "sequence", "background_sequence"))
        for pair, (a, b) in zip(
            sample["filtered_resps"][::2], [(o, p), (o, r), (p, r)], strict=True
        ):
            assert pair == pytest.approx(reference_pair(model, tokenizer, a, b, limit), abs=1e-4)


def test_the_footprint_task_refuses_a_config_of_another_kind(pair_data):
    with pytest.raises(
        OptionsError,
        match="syn_human.*build footprints'; this file has no "
        "background_sequence, motif, copies, spacing column",
    ):
        load_footprint_pairs(data_dir=str(pair_data), config="syn_human")


def test_a_background_with_a_letter_no_pair_may_hold_is_refused_naming_it(
    material, tmp_path, capsys
):
    folder, _, backgrounds = material
    (tmp_path / "iupac.fa").write_text(f">ok\n{backgrounds['bg0']}\n>odd\nACGTNNacgtRYACGT\n")
    arguments = ["--motifs", str(folder / "motifs.meme"), "--config", "c", "--out", str(tmp_path)]
    assert (
        main(["build", "footprints", *arguments, "--backgrounds", str(tmp_path / "iupac.fa")]) == 2
    )
    assert (
        f"{tmp_path / 'iupac.fa'}: background 'odd' holds 'R' at position 10; a background holds "
        "A, C, G, T or N alone" in capsys.readouterr().err
    )


def test_validate_checks_every_footprint_row_against_its_background(material, tmp_path, capsys):
    """A built set passes both footprint checks; a moved copy, a control that is no permutation,
    a changed flank base in either window, a reverse row read on the wrong strand and an insert
    end recorded one base off each fail their own check, on their row."""
    folder, _, _ = material
    table, config = build(
        tmp_path,
        source(folder),
        "--copies",
        "1,3",
        "--spacing",
        "2",
    )
    capsys.readouterr()
    assert main(["validate", str(config)]) == 0
    out = capsys.readouterr().out
    for check in ("insert_at_centre", "control_is_permutation"):
        assert f"PASS {check}: 0 of {len(table)} rows break it" in out
    rows = table.to_dict("records")
    flip = {"A": "C", "C": "A", "G": "T", "T": "G"}

    forward = [i for i, r in enumerate(rows) if r["orientation"] == "forward" and i > 3]
    moved = next(i for i in forward if rows[i]["copies"] == 3)  # the copies one base off centre
    row = rows[moved]
    start, end = row["insert_start"], row["insert_end"]
    for name, insert in (
        ("original_sequence", row["consensus"]),
        ("sequence", row["control_insert"]),
    ):
        bases = list(row["background_sequence"])
        for j in range(3):
            at = start + 1 + j * (len(insert) + 2)
            bases[at : at + len(insert)] = insert
        row[name] = "".join(bases)
    row["insert_start"], row["insert_end"] = start + 1, end + 1
    unpermuted = next(i for i in forward if i > moved)  # a control base changed: no permutation
    row = rows[unpermuted]
    text, at = row["sequence"], row["insert_start"]
    row["sequence"] = text[:at] + flip[text[at]] + text[at + 1 :]
    row["control_insert"] = row["sequence"][at : row["insert_end"]]
    flank = next(i for i in forward if i > unpermuted)  # a flank base of both windows
    for name in ("original_sequence", "sequence"):
        rows[flank][name] = flip[rows[flank][name][0]] + rows[flank][name][1:]
    reverse = next(i for i, r in enumerate(rows) if r["orientation"] == "reverse" and i > flank)
    rows[reverse]["orientation"] = "forward"
    recorded = next(i for i in forward if i > reverse)  # windows right, insert_end misrecorded
    rows[recorded]["insert_end"] += 1
    broken = tmp_path / "broken.parquet"
    pd.DataFrame(rows).to_parquet(broken)
    assert main(["validate", str(broken)]) == 1
    out = capsys.readouterr().out
    first = min(moved, flank, reverse)
    assert (
        f"FAIL insert_at_centre: 4 of {len(rows)} rows break it (first: {broken} row {first})"
        in out
    )
    first = min(moved, unpermuted, flank, reverse)
    assert (
        f"FAIL control_is_permutation: 5 of {len(rows)} rows break it (first: {broken} row {first})"
        in out
    )


def test_a_build_without_backgrounds_is_refused_naming_the_options(material, tmp_path, capsys):
    folder, _, _ = material
    arguments = ["--motifs", str(folder / "motifs.meme"), "--config", "c", "--out", str(tmp_path)]
    assert main(["build", "footprints", *arguments]) == 2
    assert (
        "takes its backgrounds from one of --backgrounds FASTA|TXT|CONFIG_DIR or --bed with "
        "--fasta (neither was given)" in capsys.readouterr().err
    )
    both = ["--backgrounds", "b.fa", "--bed", "r.bed", "--fasta", "g.fa"]
    assert main(["build", "footprints", *arguments, *both]) == 2
    assert "(both were given)" in capsys.readouterr().err


def test_the_dart_eval_convention_scores_as_its_two_options_do(one_dose):
    """``convention: dart_eval`` on a causal model is ``ties: correct`` with ``start_token:
    none``: the same metrics, and the settings the run records say so."""
    common = {"data_dir": str(one_dose), "config": "fp"}
    results = [
        evaluate(
            str(one_dose / "genome.fa"),
            [TASK],
            {**common, **extra},
            model="kmer-markov",
            order=2,
        )
        for extra in ({"convention": "dart_eval"}, {"ties": "correct", "start_token": "none"})
    ]
    by_convention, by_options = (r["results"][TASK] for r in results)
    assert {k: v for k, v in by_convention.items() if k != "alias"} == {
        k: v for k, v in by_options.items() if k != "alias"
    }
    recorded = results[0]["config"]["perturbation_bench"]["tasks"][TASK]
    assert (recorded["ties"], recorded["start_token"], recorded["convention"]) == (
        "correct",
        "none",
        "dart_eval",
    )
