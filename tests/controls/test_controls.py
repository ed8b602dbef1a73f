"""Paired controls (``build controls``): each element's window against the same window with the
element shuffled. Every row is checked here against the genome read independently (windows,
flanks, what each shuffle keeps), seeds per element, exclusions counted, bad input refused with
file, line and reason, annotation features against a hand-written annotation, and the exact
floors: a Markov chain of order 1 ties on every dinucleotide control, of order 0 on every
mononucleotide control."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pandas as pd
import pytest

from dna_fixtures import evaluate, read_fasta, reverse_complement
from perturbation_bench.cli import main

WINDOW = 120


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    """chr1 (3 kb, an N run at 1000-1010), chr2 (2 kb), chrS (100 bp, shorter than the window)."""
    rng = random.Random(21)
    chr1 = [rng.choice("ACGT") for _ in range(3000)]
    chr1[1000:1010] = "N" * 10
    sequences = {
        "chr1": "".join(chr1),
        "chr2": "".join(rng.choice("ACGT") for _ in range(2000)),
        "chrS": "".join(rng.choice("ACGT") for _ in range(100)),
    }
    folder = tmp_path_factory.mktemp("controls")
    (folder / "g.fa").write_text("".join(f">{k}\n{v}\n" for k, v in sequences.items()))
    return folder / "g.fa"


ELEMENTS = [  # (chrom, start, end, name): ends of chromosomes, one longer than the window
    ("chr1", 0, 40, "at_start"),
    ("chr1", 500, 560, "plain"),
    ("chr1", 2950, 3000, "at_end"),
    ("chr2", 700, 1100, "longer_than_window"),
    ("chr2", 1500, 1503, "three_bases"),
]
EXCLUDED = [
    ("chr1", 995, 1020, "holds_n"),
    ("chr1", 600, 602, "two_bases"),
    ("chrS", 10, 50, "short_chromosome"),
    ("chr1", 500, 560, "plain_again"),
]


def build(tmp_path, genome, elements, shuffle, *extra, config="c"):
    bed = tmp_path / f"{config}.bed"
    bed.write_text("".join(f"{c}\t{s}\t{e}\t{n}\n" for c, s, e, n in elements))
    status = main(
        [
            "build",
            "controls",
            "--fasta",
            str(genome),
            "--bed",
            str(bed),
            "--shuffle",
            shuffle,
            "--window",
            str(WINDOW),
            "--config",
            config,
            "--out",
            str(tmp_path / "out"),
            *extra,
        ]
    )
    assert status == 0
    return pd.read_parquet(tmp_path / "out" / config), tmp_path / "out" / config


def dinucleotides(text: str) -> Counter:
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


@pytest.mark.parametrize("shuffle", ["dinucleotide", "mononucleotide"])
def test_every_row_is_the_genome_with_only_the_element_shuffled(genome, tmp_path, shuffle):
    """3 bases whose first and last are kept cannot change under a dinucleotide shuffle: that
    element is excluded as unchanged there, shuffled by the base permutation."""
    table, folder = build(tmp_path, genome, ELEMENTS + EXCLUDED, shuffle, "--strands", "both")
    sequences = read_fasta(genome)
    kept = ELEMENTS if shuffle == "mononucleotide" else ELEMENTS[:-1]
    assert sorted(table["element_name"]) == sorted(2 * [e[3] for e in kept])
    for row in table.to_dict("records"):
        chrom, start, end, _ = next(e for e in ELEMENTS if e[3] == row["element_name"])
        length = len(sequences[chrom])
        window_start = min(max(0, (start + end) // 2 - WINDOW // 2), length - WINDOW)
        first, last = max(start, window_start), min(end, window_start + WINDOW)
        assert (row["window_start"], row["element_start"], row["element_end"]) == (
            window_start,
            first,
            last,
        )
        reference = sequences[chrom][window_start : window_start + WINDOW]
        original, perturbed = row["original_sequence"], row["sequence"]
        if row["strand"] == "-":
            original, perturbed = reverse_complement(original), reverse_complement(perturbed)
        assert original == reference
        a, b = first - window_start, last - window_start
        assert perturbed[:a] == reference[:a] and perturbed[b:] == reference[b:]  # flanks
        element, shuffled = reference[a:b], perturbed[a:b]
        assert shuffled != element and sorted(shuffled) == sorted(element)
        if shuffle == "dinucleotide":
            assert dinucleotides(shuffled) == dinucleotides(element)
            assert (shuffled[0], shuffled[-1]) == (element[0], element[-1])
    assert Counter(table["strand"]) == {"+": len(kept), "-": len(kept)}
    assert sorted(table["benchmark_id"]) == sorted(f"{e[3]}:{s}" for e in kept for s in "+-")
    report = json.loads((folder / "_build_report.json").read_text())
    unchanged = {"shuffle_unchanged": 1} if shuffle == "dinucleotide" else {}
    assert report["excluded"] == {
        "chromosome_shorter_than_window": 1,
        "duplicate_pair": 1,
        "element_not_acgt": 1,
        "element_shorter_than_3bp": 1,
        **unchanged,
    }
    assert (
        report["read"]
        == len(ELEMENTS) + len(EXCLUDED)
        == report["written_elements"] + 4 + len(unchanged)
    )
    assert report["written_rows"] == len(table)
    filling = [  # rows whose shuffled part is their whole window, counted independently
        r
        for r in table.to_dict("records")
        if r["element_end"] - r["element_start"] == len(r["original_sequence"])
    ]
    assert report["no_unshuffled_flank"] == len(filling) == 2  # longer_than_window, both strands
    assert report["cut_at_chromosome_ends"] == 0
    assert report["settings"] | {"script_version": None} == {
        "fasta": str(genome),
        "config": "c",
        "window": WINDOW,
        "shuffle": shuffle,
        "seed": 0,
        "strands": "both",
        "script_version": None,
    }
    excluded = (folder / "_excluded.tsv").read_text().splitlines()
    names = [e[3] for e in EXCLUDED] + (["three_bases"] if unchanged else [])
    assert sorted(line.split("\t")[0] for line in excluded[1:]) == sorted(names)


def test_an_elements_control_does_not_depend_on_the_other_elements(genome, tmp_path):
    whole, _ = build(tmp_path, genome, ELEMENTS, "dinucleotide", config="whole")
    some, _ = build(tmp_path, genome, ELEMENTS[::-2], "dinucleotide", config="some")
    by_name = whole.set_index("element_name", drop=False).loc[some["element_name"]]
    pd.testing.assert_frame_equal(by_name.reset_index(drop=True), some)
    # DART-Eval's rule, computed here: the generator of sha256(repr((seed, chrom, start, end)))
    import hashlib

    import dinuc_shuf
    import numpy as np

    chrom, start, end, name = ELEMENTS[1]
    digest = int(hashlib.sha256(repr((0, chrom, start, end)).encode()).hexdigest(), 16) % 2**128
    row = whole.set_index("element_name").loc[name]
    a, b = row["element_start"] - row["window_start"], row["element_end"] - row["window_start"]
    element = row["original_sequence"][a:b]
    one_hot = np.eye(4, dtype=np.uint8)[["ACGT".index(base) for base in element]][None]
    drawn = dinuc_shuf.shuffle(one_hot, rng=np.random.default_rng(digest))[0].argmax(axis=1)
    assert row["sequence"][a:b] == "".join("ACGT"[i] for i in drawn)
    other_seed, _ = build(tmp_path, genome, ELEMENTS, "dinucleotide", "--seed", "1", config="seed1")
    assert (other_seed["sequence"] != whole["sequence"]).all()
    assert (other_seed["original_sequence"] == whole["original_sequence"]).all()


def test_random_strands_draw_one_orientation_per_element(genome, tmp_path):
    many = [("chr1", s, s + 30, f"e{s}") for s in range(100, 2900, 100) if not 950 < s < 1050]
    forward, _ = build(tmp_path, genome, many, "mononucleotide", config="forward")
    drawn, _ = build(
        tmp_path, genome, many, "mononucleotide", "--strands", "random", config="drawn"
    )
    assert len(drawn) == len(forward) and 0 < (drawn["strand"] == "-").sum() < len(drawn)
    for f, d in zip(forward.to_dict("records"), drawn.to_dict("records"), strict=True):
        flip = reverse_complement if d["strand"] == "-" else str
        assert (flip(d["original_sequence"]), flip(d["sequence"])) == (
            f["original_sequence"],
            f["sequence"],
        )


@pytest.mark.parametrize(
    "bed, message",
    [
        (
            "chr1\t10\t50\tok\nchr9\t10\t50\tlost\n",
            r"c.bed line 2: chromosome 'chr9' is not in .*g.fa",
        ),
        ("chr1\t50\t10\tbackwards\n", r"c.bed: line 1: need 0 <= START < END"),
        (
            "chr1\t10\t50\tok\nchr2\t1990\t2001\tover\n",
            r"c.bed line 2: over ends at 2001, past the end of chr2 \(2000 bp\)",
        ),
        ("chr1\tten\t50\n", r"c.bed: line 1: expected CHROM<tab>START<tab>END"),
    ],
)
def test_bad_bed_lines_are_refused_with_file_line_and_reason(
    genome, tmp_path, capsys, bed, message
):
    (tmp_path / "c.bed").write_text(bed)
    status = main(
        [
            "build",
            "controls",
            "--fasta",
            str(genome),
            "--bed",
            str(tmp_path / "c.bed"),
            "--shuffle",
            "dinucleotide",
            "--config",
            "c",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    (line,) = [
        x for x in capsys.readouterr().err.splitlines() if x.startswith("perturbation-bench error")
    ]
    assert status == 2 and re.search(message, line), line
    assert not (tmp_path / "out" / "c").exists()


@pytest.fixture(scope="module")
def annotated(tmp_path_factory):
    """T1 (+): exons [40,70) [100,200) [300,400) [500,600), CDS [150,200) [300,400) [500,550);
    T2 (-): exons [1200,1300) [1400,1500) [1600,1650), CDS [1250,1300) [1400,1450); on a random
    2 kb chromosome. Each has a first exon that codes nothing."""
    folder = tmp_path_factory.mktemp("annotated")
    rng = random.Random(5)
    (folder / "g.fa").write_text(
        ">chr1\n" + "".join(rng.choice("ACGT") for _ in range(2000)) + "\n"
    )
    lines = []
    for transcript, strand, exons, cds in (
        (
            "T1",
            "+",
            [(40, 70), (100, 200), (300, 400), (500, 600)],
            [(150, 200), (300, 400), (500, 550)],
        ),
        ("T2", "-", [(1200, 1300), (1400, 1500), (1600, 1650)], [(1250, 1300), (1400, 1450)]),
    ):
        phases = [0, 1, 2] if strand == "+" else [2, 0]  # the frame the lengths give
        for kind, spans in (("exon", exons), ("CDS", cds)):
            for k, (start, end) in enumerate(spans):
                phase = phases[k] if kind == "CDS" else "."
                lines.append(
                    f"chr1\tt\t{kind}\t{start + 1}\t{end}\t.\t{strand}\t{phase}\t"
                    f'gene_id "G{transcript}"; transcript_id "{transcript}";'
                )
    (folder / "a.gtf").write_text("\n".join(lines) + "\n")
    gff3 = ["##gff-version 3"]
    for line in lines:  # the same records, gene -> mRNA -> exon/CDS by Parent
        fields = line.split("\t")
        transcript = fields[8].split('transcript_id "')[1].split('"')[0]
        if f"ID={transcript};" not in "".join(gff3):
            gff3.append(
                "\t".join([*fields[:2], "mRNA", "1", "2000", ".", fields[6], "."])
                + f"\tID={transcript};Parent=G{transcript}"
            )
        gff3.append("\t".join(fields[:8]) + f"\tParent={transcript}")
    (folder / "a.gff3").write_text("\n".join(gff3) + "\n")
    return folder


def build_features(
    annotated, out, feature, promoter_bp="50", window="30", annotation="a.gtf"
) -> int:
    """``build controls`` of one feature of the ``annotated`` transcripts into ``out/<feature>``
    (``annotation``: ``a.gtf``, or ``a.gff3`` for the same transcripts as GFF3)."""
    return main(
        [
            "build",
            "controls",
            "--fasta",
            str(annotated / "g.fa"),
            "--gff3" if annotation.endswith("gff3") else "--gtf",
            str(annotated / annotation),
            "--feature",
            feature,
            "--promoter-bp",
            promoter_bp,
            "--shuffle",
            "mononucleotide",
            "--window",
            window,
            "--config",
            feature,
            "--out",
            str(out),
        ]
    )


@pytest.mark.parametrize(
    "feature, spans",
    [
        ("cds", {(150, 200), (300, 400), (500, 550), (1250, 1300), (1400, 1450)}),
        (
            "exon",
            {
                (40, 70),
                (100, 200),
                (300, 400),
                (500, 600),
                (1200, 1300),
                (1400, 1500),
                (1600, 1650),
            },
        ),
        ("intron", {(70, 100), (200, 300), (400, 500), (1300, 1400), (1500, 1600)}),
        ("utr5", {(40, 70), (100, 150), (1450, 1500), (1600, 1650)}),
        ("utr3", {(550, 600), (1200, 1250)}),
        ("promoter", {(0, 40), (1650, 1700)}),  # T1's cut at the chromosome's start
    ],
)
def test_annotation_features_are_the_chosen_transcripts_parts(annotated, tmp_path, feature, spans):
    assert build_features(annotated, tmp_path, feature) == 0
    table = pd.read_parquet(tmp_path / feature)

    def in_window(start, end):  # an element's part inside its 30 bp window, centred on it
        window_start = max(0, (start + end) // 2 - 15)
        return max(start, window_start), min(end, window_start + 30)

    assert set(zip(table["element_start"], table["element_end"], strict=True)) == {
        in_window(*s) for s in spans
    }
    if feature == "intron":  # numbered in transcript order, 5' to 3' on each strand
        named = dict(
            zip(
                table["element_name"],
                zip(table["element_start"], table["element_end"], strict=True),
                strict=True,
            )
        )
        assert named == {
            "GT1:intron1": in_window(70, 100),
            "GT1:intron2": in_window(200, 300),
            "GT1:intron3": in_window(400, 500),
            "GT2:intron1": in_window(1500, 1600),
            "GT2:intron2": in_window(1300, 1400),
        }


def test_promoters_past_either_chromosome_end_are_cut_there_and_counted(
    annotated, tmp_path, capsys
):
    """T1's 400 bp promoter starts 360 bp before chr1; T2's ends 50 bp past its end (2 kb)."""
    assert build_features(annotated, tmp_path, "promoter", promoter_bp="400", window="500") == 0
    table = pd.read_parquet(tmp_path / "promoter")
    assert sorted(zip(table["element_start"], table["element_end"], strict=True)) == [
        (0, 40),
        (1650, 2000),
    ]
    report = json.loads((tmp_path / "promoter" / "_build_report.json").read_text())
    assert report["cut_at_chromosome_ends"] == 2
    assert report["no_unshuffled_flank"] == 0  # both shorter than their 500 bp windows
    out = capsys.readouterr().out
    assert "cut 2 elements at their chromosome's ends" in out
    assert "read 2 elements; wrote 2 pairs" in out and "flank" not in out


def test_the_pairs_with_no_unshuffled_flank_are_counted_in_the_build_summary(
    annotated, tmp_path, capsys
):
    """Exons of 100 bp in a 30 bp window fill it; the 30 and 50 bp ones do not."""
    assert build_features(annotated, tmp_path, "exon") == 0
    report = json.loads((tmp_path / "exon" / "_build_report.json").read_text())
    assert report["no_unshuffled_flank"] == 7  # all 7 exons are at least 30 bp
    assert "7 of 7 pairs have no unshuffled flank" in capsys.readouterr().out
    assert build_features(annotated, tmp_path, "exon", window="60") == 0
    report = json.loads((tmp_path / "exon" / "_build_report.json").read_text())
    assert report["no_unshuffled_flank"] == 5  # the 100 bp exons; not [40,70), [1600,1650)
    assert "5 of 7 pairs have no unshuffled flank" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["-5", "0"])
def test_a_promoter_length_below_one_is_refused_naming_it(annotated, tmp_path, capsys, value):
    assert build_features(annotated, tmp_path, "promoter", promoter_bp=value) == 2
    assert f"--promoter-bp must be at least 1 bp, got {value}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "feature", "message"),
    [
        ("--bed", ["--feature", "cds"], "--feature picks features of an annotation (--gtf/--gff3)"),
        ("--gtf", [], "--gtf/--gff3 needs --feature (cds, exon, intron, utr5, utr3, promoter)"),
    ],
)
def test_feature_goes_with_an_annotation_alone(
    annotated, tmp_path, capsys, source, feature, message
):
    fasta, annotation = str(annotated / "g.fa"), str(annotated / "a.gtf")
    shuffle = ["--shuffle", "mononucleotide", "--config", "c", "--out", str(tmp_path)]
    assert (
        main(["build", "controls", "--fasta", fasta, source, annotation, *feature, *shuffle]) == 2
    )
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_a_feature_the_annotation_lacks_is_refused(tmp_path, capsys):
    (tmp_path / "g.fa").write_text(">chr1\n" + "ACGT" * 200 + "\n")
    (tmp_path / "a.gtf").write_text(
        'chr1\tt\tCDS\t101\t190\t.\t+\t0\tgene_id "G"; transcript_id "T";\n'
    )
    status = main(
        [
            "build",
            "controls",
            "--fasta",
            str(tmp_path / "g.fa"),
            "--gtf",
            str(tmp_path / "a.gtf"),
            "--feature",
            "utr3",
            "--shuffle",
            "dinucleotide",
            "--window",
            "40",
            "--config",
            "c",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert (
        status == 2 and f"{tmp_path / 'a.gtf'}: no utr3 feature in its 1 chosen transcripts" in err
    )
    assert "(it has no exon records beyond the CDS, so no UTRs)" in err


@pytest.mark.parametrize(
    "order, shuffle, ties",
    [
        (1, "dinucleotide", True),
        (0, "mononucleotide", True),
        (0, "dinucleotide", True),
        (2, "dinucleotide", False),
        (1, "mononucleotide", False),
    ],
)
def test_the_markov_floor_ties_exactly_on_the_controls_it_cannot_see(
    genome, tmp_path, order, shuffle, ties
):
    """An order-K chain's log-likelihood is a function of the first K bases and the (K+1)-mer
    counts, which the matching shuffle keeps: a tie on every pair, to the last bit. A chain that
    sees more than the shuffle keeps ties on none."""
    many = [("chr1", s, s + 60, f"e{s}") for s in range(100, 2900, 70) if not 930 < s < 1020]
    build(tmp_path, genome, many, shuffle, config="floor")
    assert markov_tie_rate(genome, tmp_path / "out", "floor", order) == (1.0 if ties else 0.0)


def markov_tie_rate(genome, data_dir, config: str, order: int) -> float:
    """The tie rate of an order-``order`` chain counted on ``genome`` on a built config."""
    result = evaluate(
        str(genome),
        ["perturbation_custom"],
        {"data_dir": str(data_dir), "config": config},
        model="kmer-markov",
        order=order,
    )
    return result["results"]["perturbation_custom"]["tie_rate,pairs"]


def test_validate_checks_every_control_invariant(genome, tmp_path, capsys):
    """A built set passes; a changed flank base, a base swap that keeps the base counts but not
    the dinucleotides, and a window off the genome each fail their own check, on their row."""
    _, folder = build(tmp_path, genome, ELEMENTS, "dinucleotide", "--strands", "both")
    assert main(["validate", str(folder), "--fasta", str(genome)]) == 0
    assert "PASS composition_kept: 0 of 8 rows" in capsys.readouterr().out
    table = pd.read_parquet(folder)
    rows = table.to_dict("records")
    flip = {"A": "C", "C": "A", "G": "T", "T": "G"}
    rows[1]["sequence"] = flip[rows[1]["sequence"][0]] + rows[1]["sequence"][1:]  # a flank base
    a = rows[7]["element_start"] - rows[7]["window_start"]
    text = rows[7]["sequence"]
    k = next(i for i in range(a + 2, len(text)) if text[i] != text[i + 1])  # inside the element
    rows[7]["sequence"] = text[:k] + text[k + 1] + text[k] + text[k + 2 :]  # same bases and ends
    rows[4]["window_start"] += 1
    broken = tmp_path / "broken.parquet"
    pd.DataFrame(rows).to_parquet(broken)
    assert main(["validate", str(broken), "--fasta", str(genome)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL flanks_identical: 1 of 8 rows break it (first: {broken} row 1)" in out
    # row 4's span read one base off, row 7's dinucleotides changed
    assert f"FAIL composition_kept: 2 of 8 rows break it (first: {broken} row 4)" in out
    assert (  # the window starts a base later: one base shorter at the chromosome's end
        f"FAIL control_matches_genome: 1 of 8 rows break it (first: {broken} row 4: the "
        "genome's window is 119 bp, original_sequence 120 bp)" in out
    )
    mono, mono_folder = build(tmp_path, genome, ELEMENTS, "mononucleotide", config="mono")
    assert main(["validate", str(mono_folder), "--fasta", str(genome)]) == 0
    assert f"PASS composition_kept: 0 of {len(mono)} rows" in capsys.readouterr().out
    rows = mono.to_dict("records")
    a = rows[0]["element_start"] - rows[0]["window_start"]
    rows[0]["sequence"] = (
        rows[0]["sequence"][:a] + flip[rows[0]["sequence"][a]] + rows[0]["sequence"][a + 1 :]
    )
    pd.DataFrame(rows).to_parquet(broken)
    assert main(["validate", str(broken)]) == 1  # one base of the element changed: counts differ
    assert (
        f"FAIL composition_kept: 1 of {len(mono)} rows break it (first: {broken} row 0)"
        in capsys.readouterr().out
    )


def test_a_causal_model_scores_controls_as_an_independent_sum(genome, tmp_path, tiny_models):
    """dna-hf on controls (both strands): each logged LL equals the fp32 sum of the window's
    token log-probs after the BOS token, computed here token by token."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dna_fixtures import reference_ll
    from perturbation_bench.tasks.pairing import logged_pairs

    table, _ = build(
        tmp_path, genome, ELEMENTS, "dinucleotide", "--strands", "both", config="causal"
    )
    result = evaluate(
        tiny_models["char"],
        ["perturbation_custom"],
        {"data_dir": str(tmp_path / "out"), "config": "causal"},
        model="dna-hf",
    )
    model = AutoModelForCausalLM.from_pretrained(tiny_models["char"]).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_models["char"])
    got = logged_pairs(result, "perturbation_custom")
    assert len(got) == len(table)
    for pair, row in zip(got, table.to_dict("records"), strict=True):
        expected = [
            reference_ll(model, tokenizer, "", row[k]) for k in ("original_sequence", "sequence")
        ]
        assert pair == pytest.approx(expected, abs=1e-4)


def kmer_count(text: str, k: int) -> Counter:
    return Counter(text[i : i + k] for i in range(len(text) - k + 1))


@pytest.mark.parametrize("k", [3, 4])
def test_k_let_controls_keep_every_k_mer_count_and_an_order_k_minus_1_chain_ties_on_all(
    genome, tmp_path, capsys, k
):
    """Elements of 250 bp in 300 bp windows, shuffled keeping their K-mers: counted here, with
    their first and last K - 1 bases and the flanks; validate agrees; an order-(K-1) chain ties
    on every pair, an order-K chain does not."""
    elements = [("chr1", s, s + 250, f"e{s}") for s in (100, 400, 1200, 1600, 2200)]
    elements += [("chr2", s, s + 250, f"f{s}") for s in (100, 700, 1300)]
    table, folder = build(tmp_path, genome, elements, f"kmer:{k}", "--window", "300", config="k")
    report = json.loads((folder / "_build_report.json").read_text())
    assert len(table) == report["written_rows"] == 8 - sum(report["excluded"].values())
    assert len(table) >= 6
    for row in table.to_dict("records"):
        a, b = (row[key] for key in ("original_sequence", "sequence"))
        start, end = (row[key] - row["window_start"] for key in ("element_start", "element_end"))
        assert a[:start] == b[:start] and a[end:] == b[end:]
        element, shuffled = a[start:end], b[start:end]
        assert shuffled != element and kmer_count(shuffled, k) == kmer_count(element, k)
        assert shuffled[: k - 1] == element[: k - 1] and shuffled[-(k - 1) :] == element[-(k - 1) :]
        assert row["shuffle"] == f"kmer:{k}"
    capsys.readouterr()
    assert main(["validate", str(folder), "--fasta", str(genome)]) == 0
    assert f"PASS composition_kept: 0 of {len(table)} rows" in capsys.readouterr().out
    assert markov_tie_rate(genome, tmp_path / "out", "k", k - 1) == 1.0
    assert markov_tie_rate(genome, tmp_path / "out", "k", k) < 1.0


def test_validate_refuses_a_k_let_control_whose_k_mers_changed(genome, tmp_path, capsys):
    """Swapping two bases of the element keeps its base counts but not (in general) its 3-mers."""
    table, folder = build(tmp_path, genome, [("chr1", 100, 350, "e")], "kmer:3", "--window", "300")
    row = table.to_dict("records")[0]
    text, start = row["sequence"], row["element_start"] - row["window_start"]
    i = next(i for i in range(start + 5, len(text) - 1) if text[i] != text[i + 1])
    row["sequence"] = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    pd.DataFrame([row]).to_parquet(tmp_path / "broken.parquet")
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "broken.parquet")]) == 1
    assert "FAIL composition_kept: 1 of 1 rows break it" in capsys.readouterr().out


@pytest.mark.parametrize("window, status", [("3", 2), ("4", 0)])
def test_the_smallest_window_is_four_bases(annotated, tmp_path, capsys, window, status):
    assert build_features(annotated, tmp_path, "cds", window=window) == status
    if status:
        assert "--window must be at least 4 bp, got 3" in capsys.readouterr().err
    else:
        assert (pd.read_parquet(tmp_path / "cds")["original_sequence"].str.len() == 4).all()


@pytest.mark.parametrize("feature", ["cds", "utr5", "intron"])
def test_a_gff3_of_the_same_transcripts_builds_the_same_controls(annotated, tmp_path, feature):
    assert build_features(annotated, tmp_path / "gtf", feature) == 0
    assert build_features(annotated, tmp_path / "gff3", feature, annotation="a.gff3") == 0
    columns = ["element_name", "element_start", "element_end", "original_sequence", "sequence"]
    gtf, gff3 = (pd.read_parquet(tmp_path / kind / feature)[columns] for kind in ("gtf", "gff3"))
    assert len(gtf) > 0 and gtf.equals(gff3)


@pytest.mark.parametrize("k", range(1, 7))
def test_every_k_from_1_to_6_is_a_k_let_shuffle(genome, tmp_path, k):
    """``--shuffle kmer:K`` builds for each K of 1 to 6: the element's K-mer counts kept, and
    its first and last K - 1 bases (none for K = 1, a permutation)."""
    table, _ = build(tmp_path, genome, [("chr1", 100, 350, "e")], f"kmer:{k}", "--window", "300")
    (row,) = table.to_dict("records")
    start, end = (row[key] - row["window_start"] for key in ("element_start", "element_end"))
    element, shuffled = row["original_sequence"][start:end], row["sequence"][start:end]
    assert row["shuffle"] == f"kmer:{k}" and shuffled != element
    assert kmer_count(shuffled, k) == kmer_count(element, k)
    assert shuffled[: k - 1] == element[: k - 1]
    assert shuffled[len(shuffled) - (k - 1) :] == element[len(element) - (k - 1) :]


@pytest.mark.parametrize("shuffle", ["kmer:0", "kmer:7"])
def test_a_k_let_shuffle_outside_1_to_6_is_refused(genome, tmp_path, capsys, shuffle):
    with pytest.raises(SystemExit) as refused:
        build(tmp_path, genome, [("chr1", 100, 350, "e")], shuffle)
    assert refused.value.code == 2
    assert f"argument --shuffle: invalid choice: '{shuffle}'" in capsys.readouterr().err
