"""Building datasets from a genome and a GTF, and validating them."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from Bio import bgzf

from dna_fixtures import REPO, evaluate
from perturbation_bench.cli import main
from perturbation_bench.dataset.annotation import choose_transcripts, read_cds_exons, read_gff3_cds
from perturbation_bench.dataset.codons import load_codon_table
from perturbation_bench.dataset.genome import Genome
from perturbation_bench.dataset.schema import SCHEMAS
from perturbation_bench.dataset.synthetic import synthetic_genome
from perturbation_bench.dataset.validate import report, validate
from perturbation_bench.dna import reverse_complement
from perturbation_bench.errors import DataValidationError
from perturbation_bench.tasks.loading import load_pairs

WINDOW, FLANK = 400, 100


@pytest.fixture(scope="module")
def genome_files(tmp_path_factory):
    return synthetic_genome(
        tmp_path_factory.mktemp("genome"), load_codon_table("human"), chrom_length=30_000
    )


def build(kind, fasta, gtf, out, *extra):
    args = [
        "build",
        kind,
        "--fasta",
        str(fasta),
        "--gtf",
        str(gtf),
        "--species",
        "human",
        "--out",
        str(out),
        "--window",
        str(WINDOW),
        "--flank",
        str(FLANK),
        "--assembly",
        "toy",
        "--annotation-source",
        "toy",
        *extra,
    ]
    assert main(args) == 0
    return out / f"{kind}_human" / "test-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def built(genome_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("built")
    return {kind: build(kind, *genome_files, out) for kind in ("syn", "motif")}


@pytest.mark.parametrize("kind", ["syn", "motif"])
def test_output_has_the_published_schema(built, kind):
    assert pq.read_schema(built[kind]).remove_metadata() == SCHEMAS[kind]


CARD_COLUMNS = {  # frozen copy of the dataset card's column lists, in the card's order
    "syn": "benchmark_id script_version annotation_source genome_assembly codon_usage_source "
    "recoding_mode species chr strand transcript_id gene_id gene_name optimization_rate "
    "fraction_codons_changed random_seed window_size_bp chrom_length cds_genome_start "
    "cds_genome_end window_genome_start window_genome_end upstream_actual downstream_actual "
    "is_clamped exon_rank is_first_exon frame phase_gtf cds_start_in_seq cds_end_in_seq "
    "cds_length patch_start_in_seq patch_end_in_seq patch_length n_codons_total "
    "n_codons_eligible n_codons_changed original_sequence sequence",
    "motif": "benchmark_id script_version annotation_source genome_assembly motif actual_motif "
    "species chr strand transcript_id gene_id gene_name upstream_flank_bp patch_len_bp "
    "start_after_bp random_seed chrom_length cds_genome_start cds_genome_end "
    "window_genome_start window_genome_end upstream_actual is_clamped exon_rank is_first_exon "
    "frame phase_gtf cds_start_in_seq cds_end_in_seq cds_length patch_start_in_cds "
    "patch_end_in_cds patch_start_in_seq patch_end_in_seq original_sequence sequence",
}


@pytest.mark.parametrize("kind, n_columns", [("syn", 39), ("motif", 36)])
def test_schema_column_order_is_the_dataset_cards(kind, n_columns):
    assert SCHEMAS[kind].names == CARD_COLUMNS[kind].split()
    assert len(SCHEMAS[kind]) == n_columns


@pytest.mark.parametrize("kind", ["syn", "motif"])
def test_built_dataset_passes_validate_against_the_genome(built, genome_files, kind):
    checks, n_rows = validate(built[kind], fasta=genome_files[0])
    assert n_rows > 10
    assert not [c.name for c in checks if c.broken], report(checks, n_rows)
    skipped = {c.name for c in checks if not c.checked}
    others = {"flanks_identical", "composition_kept", "control_matches_genome"}
    others |= {"insert_at_centre", "control_is_permutation"}  # footprints
    assert skipped == ({"patch_is_repeat"} if kind == "syn" else {"synonymous_only"}) | others


def test_every_exon_is_written_or_counted_with_a_reason(built, genome_files):
    n_exons = len(read_cds_exons(genome_files[1]))
    for path in built.values():
        summary = json.loads((path.parent / "_build_report.json").read_text())
        assert summary["written"] == pq.read_metadata(path).num_rows
        assert summary["written"] + sum(summary["excluded"].values()) == n_exons
    assert json.loads((built["syn"].parent / "_build_report.json").read_text())["excluded"] == {
        "n_in_patch": 1
    }
    motif_excluded = json.loads((built["motif"].parent / "_build_report.json").read_text())[
        "excluded"
    ]
    assert motif_excluded["n_in_patch"] == 1 and motif_excluded["cds_too_short"] >= 1


def test_a_gtf_phase_that_breaks_the_frame_is_excluded_and_counted(genome_files, built, tmp_path):
    fasta, gtf = genome_files
    lines = gtf.read_text().splitlines(keepends=True)
    second_exon = next(  # the second CDS exon of T0: its phase must continue exon 1's frame
        i
        for i, line in enumerate(lines)
        if 'transcript_id "T0"' in line and i and 'transcript_id "T0"' in lines[i - 1]
    )
    fields = lines[second_exon].split("\t")
    fields[7] = str((int(fields[7]) + 1) % 3)
    lines[second_exon] = "\t".join(fields)
    broken = tmp_path / "broken.gtf"
    broken.write_text("".join(lines))
    path = build("syn", fasta, broken, tmp_path / "out")
    summary = json.loads((path.parent / "_build_report.json").read_text())
    assert summary["excluded"] == {"n_in_patch": 1, "phase_inconsistent": 1}
    assert summary["written"] == pq.read_metadata(built["syn"]).num_rows - 1
    ids = set(pq.read_table(path, columns=["benchmark_id"]).column(0).to_pylist())
    assert "syn_human:T0:exon2" not in ids and "syn_human:T0:exon1" in ids


def test_strands_phases_clamping_and_transcript_choice(built, genome_files):
    rows = pq.read_table(built["syn"]).to_pylist()
    genome = Genome(genome_files[0])
    assert {r["strand"] for r in rows} == {"+", "-"}
    assert {r["phase_gtf"] for r in rows} == {0, 1, 2}
    for r in rows:
        window = genome.fetch(r["chr"], r["window_genome_start"], r["window_genome_end"])
        assert r["original_sequence"] == (
            reverse_complement(window) if r["strand"] == "-" else window
        )
        if r["exon_rank"] == 1:  # GTF phase honoured: the first complete codon is the start codon
            assert r["original_sequence"][r["cds_start_in_seq"] + r["phase_gtf"] :][:3] == "ATG"
    clamped = [r for r in rows if r["is_clamped"]]
    assert any(r["window_genome_start"] == 0 and r["strand"] == "+" for r in clamped)
    assert any(r["window_genome_end"] == r["chrom_length"] and r["strand"] == "-" for r in clamped)
    assert all(r["upstream_actual"] == FLANK for r in rows if not r["is_clamped"])
    assert "T1b" not in {r["transcript_id"] for r in rows} and "T1" in {
        r["transcript_id"] for r in rows
    }


def test_syn_recodes_every_eligible_codon_to_the_most_frequent_synonym(built):
    table = load_codon_table("human")
    for r in pq.read_table(built["syn"]).to_pylist():
        start, end = r["patch_start_in_seq"], r["patch_end_in_seq"]
        before, after = r["original_sequence"][start:end], r["sequence"][start:end]
        pairs = [(before[i : i + 3], after[i : i + 3]) for i in range(0, end - start, 3)]
        assert len(pairs) == r["n_codons_total"]
        for old, new in pairs:
            aa = table.code[old]
            assert new == (old if aa in "MW*" else max(table.usage[aa], key=table.usage[aa].get))
        assert r["n_codons_changed"] == sum(a != b for a, b in pairs)
        assert r["fraction_codons_changed"] == r["n_codons_changed"] / r["n_codons_total"]


def test_partial_recoding_changes_a_seeded_share(genome_files, tmp_path):
    full = pq.read_table(build("syn", *genome_files, tmp_path / "a")).to_pylist()
    half = pq.read_table(
        build("syn", *genome_files, tmp_path / "b", "--optimization-rate", "0.5")
    ).to_pylist()
    for f, h in zip(full, half, strict=True):
        assert h["n_codons_eligible"] == round(0.5 * f["n_codons_eligible"])
        assert h["n_codons_changed"] <= f["n_codons_changed"]


def test_motif_options_change_the_repeat(genome_files, tmp_path):
    build(
        "motif",
        *genome_files,
        tmp_path,
        "--motif",
        "gaa",
        "--repeats",
        "4",
        "--offset",
        "9",
        "--config",
        "motif_gaa_human",
    )
    path = tmp_path / "motif_gaa_human" / "test-00000-of-00001.parquet"
    for r in pq.read_table(path).to_pylist():
        assert r["sequence"][r["patch_start_in_seq"] : r["patch_end_in_seq"]] == "GAA" * 4
        assert r["patch_start_in_seq"] == r["cds_start_in_seq"] + r["phase_gtf"] + 9


def test_build_is_reproducible_byte_for_byte_and_seeded(genome_files, tmp_path):
    runs = [
        build("syn", *genome_files, tmp_path / name, "--max-pairs", "5", "--seed", seed)
        for name, seed in (("a", "1"), ("b", "1"), ("c", "2"))
    ]
    assert runs[0].read_bytes() == runs[1].read_bytes()
    ids = [pq.read_table(p, columns=["benchmark_id"])["benchmark_id"].to_pylist() for p in runs]
    assert len(ids[0]) == 5 and ids[0] != ids[2]


def test_compressed_inputs_give_the_same_dataset(genome_files, built, tmp_path):
    fasta, gtf = genome_files
    with open(fasta, "rb") as src, bgzf.BgzfWriter(str(tmp_path / "genome.fa.gz"), "wb") as out:
        shutil.copyfileobj(src, out)
    with open(gtf, "rb") as src, gzip.open(tmp_path / "annotation.gtf.gz", "wb") as out:
        shutil.copyfileobj(src, out)
    path = build("syn", tmp_path / "genome.fa.gz", tmp_path / "annotation.gtf.gz", tmp_path / "out")
    assert path.read_bytes() == built["syn"].read_bytes()


def break_row(table_rows, invariant, row):
    r = table_rows[row]
    start, end = r["patch_start_in_seq"], r["patch_end_in_seq"]

    def swap(seq, at, base):
        return seq[:at] + base + seq[at + 1 :]

    other = lambda b: "A" if b != "A" else "C"  # noqa: E731
    if invariant == "window_size":
        r["window_size_bp"] += 1
    elif invariant == "diff_in_patch":
        r["sequence"] = swap(r["sequence"], end + 1, other(r["sequence"][end + 1]))
    elif invariant == "codon_aligned":
        r["patch_start_in_seq"] -= 1
    elif invariant == "synonymous_only":  # the first codon becomes a stop codon
        r["sequence"] = r["sequence"][:start] + "TAA" + r["sequence"][start + 3 :]
    elif invariant == "patch_is_repeat":
        r["sequence"] = swap(r["sequence"], start, "T")
    elif invariant == "matches_genome":  # same change in both: still a valid pair, wrong genome
        base = other(r["original_sequence"][0])
        r["original_sequence"], r["sequence"] = (
            swap(r["original_sequence"], 0, base),
            swap(r["sequence"], 0, base),
        )


@pytest.mark.parametrize(
    "kind, invariant",
    [
        ("syn", "window_size"),
        ("syn", "diff_in_patch"),
        ("syn", "codon_aligned"),
        ("syn", "synonymous_only"),
        ("motif", "patch_is_repeat"),
        ("motif", "matches_genome"),
    ],
)
def test_validate_catches_one_broken_row_per_invariant(
    built, genome_files, tmp_path, kind, invariant
):
    table = pq.read_table(built[kind])
    rows = table.to_pylist()
    break_row(rows, invariant, 3)
    broken = tmp_path / "broken.parquet"
    pq.write_table(table.from_pylist(rows, schema=table.schema), broken)
    checks, _ = validate(broken, fasta=genome_files[0])
    failing = {c.name: c for c in checks if c.broken}
    assert failing[invariant].broken == 1 and f"{broken} row 3" in failing[invariant].first
    if invariant == "synonymous_only":  # names the codon and the amino acids
        start = rows[3]["patch_start_in_seq"]
        codon = rows[3]["original_sequence"][start : start + 3].upper()
        assert f"row 3: codon at {start}: {codon} (" in failing[invariant].first
        assert failing[invariant].first.endswith(") -> TAA (*)")
    else:
        assert failing[invariant].first.endswith("row 3")
    assert main(["validate", str(broken), "--fasta", str(genome_files[0])]) == 1


def damage(path: Path, how: str) -> None:
    """Break one rule of the pair contract in the parquet file at ``path`` (row 3 where a row)."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return
    if how == "empty":
        rows = []
    elif how == "null":
        rows[3]["sequence"] = None
    elif how == "no_sequence_column":
        table = table.drop_columns(["sequence"])
        rows = table.to_pylist()
    elif how == "foreign_letter":
        rows[3]["sequence"] = rows[3]["sequence"][:100] + "X" + rows[3]["sequence"][101:]
    elif how == "unequal_length":
        rows[3]["sequence"] = rows[3]["sequence"][:-1]
    pq.write_table(table.from_pylist(rows, schema=table.schema), path)


@pytest.mark.parametrize(
    "how, message",
    [
        ("truncated", "not a readable parquet file"),
        ("empty", r"empty file \(0 rows\)"),
        ("null", "row 3: 'sequence' is null"),
        ("no_sequence_column", r"missing column\(s\) sequence"),
        (
            "foreign_letter",
            "row 3: 'sequence' has letters outside ACGTN .first: 'X' at position 100",
        ),
        (
            "unequal_length",
            r"row 3: original_sequence and sequence differ in length \(400 vs 399 bp\)",
        ),
    ],
)
def test_validate_and_task_loading_apply_the_same_pair_rules(built, tmp_path, capsys, how, message):
    data = tmp_path / "syn_human"
    data.mkdir()
    broken = data / "test.parquet"
    shutil.copy(built["syn"], broken)
    damage(broken, how)
    assert main(["validate", str(broken)]) == 1
    lines = capsys.readouterr().out.splitlines()
    line = next(text for text in lines if "pair_rules" in text)
    assert line.startswith(f"FAIL pair_rules: 1 of 1 files break it (first: {broken}: ")
    assert re.search(message, line)
    assert "SKIP window_size: not checked (no rows: every file failed pair_rules)" in lines
    assert not any(text.endswith("()") for text in lines)
    with pytest.raises(DataValidationError, match=message):
        load_pairs("syn_human", data_dir=str(tmp_path))


def soft_mask(row: dict, start: int, end: int) -> None:
    """Lower-case ``[start, end)`` of both sequences, as a repeat-masked genome writes them."""
    for name in ("original_sequence", "sequence"):
        seq = row[name]
        row[name] = seq[:start] + seq[start:end].lower() + seq[end:]


@pytest.mark.parametrize("kind", ["syn", "motif"])
@pytest.mark.parametrize("where", ["patch", "flank", "window"])
def test_soft_masked_rows_get_the_same_verdict_from_validate_and_the_tasks(
    built, genome_files, tmp_path, kind, where
):
    """The tasks score soft-masked bases as bases; validate must accept the same rows."""
    table = pq.read_table(built[kind])
    rows = table.to_pylist()
    for row in rows[::2]:
        start, end = row["patch_start_in_seq"], row["patch_end_in_seq"]
        span = {"patch": (start, end), "flank": (0, start), "window": (0, WINDOW)}[where]
        soft_mask(row, *span)
    data = tmp_path / f"{kind}_human"
    data.mkdir()
    pq.write_table(table.from_pylist(rows, schema=table.schema), data / "test.parquet")
    checks, n_rows = validate(data, fasta=genome_files[0])
    assert n_rows == len(rows)
    assert {c.name: c.broken for c in checks if c.checked} == {
        c.name: 0 for c in checks if c.checked
    }
    assert {c.name for c in checks if c.checked} >= {
        "pair_rules",
        "diff_in_patch",
        "matches_genome",
    }
    assert len(load_pairs(f"{kind}_human", data_dir=str(tmp_path))["test"]) == len(rows)


def test_validate_without_fasta_skips_the_genome_check(built, capsys):
    assert main(["validate", str(built["motif"])]) == 0
    out = capsys.readouterr().out
    assert "SKIP matches_genome: not checked (no --fasta given)" in out
    assert "PASS pair_rules: 0 of 1 files break it" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--motif", "TAA", "--config", "motif_taa_human"], "in-frame stop codon.s. TAA"),
        (["--motif", "CTAG", "--repeats", "3", "--config", "m"], "in-frame stop codon.s. TAG"),
        (["--motif", "CA", "--repeats", "4", "--config", "m"], "shifts the reading frame"),
        (["--motif", "GAA"], "motif_human is the published config"),
        (["--repeats", "12"], "motif_human is the published config"),
    ],
)
def test_motif_build_refuses_stops_frameshifts_and_the_published_name(
    genome_files, tmp_path, capsys, extra, message
):
    args = [
        "build",
        "motif",
        "--fasta",
        str(genome_files[0]),
        "--gtf",
        str(genome_files[1]),
        "--species",
        "human",
        "--out",
        str(tmp_path),
        *extra,
    ]
    assert main(args) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "motif_human").exists()
    if "published" not in message:  # asked for explicitly, it builds
        assert main([*args, "--allow-stop-or-frameshift", "--window", "400", "--flank", "100"]) == 0


def test_unknown_species_without_codon_table_lists_the_known_ones(genome_files, tmp_path, capsys):
    args = [
        "build",
        "syn",
        "--fasta",
        str(genome_files[0]),
        "--gtf",
        str(genome_files[1]),
        "--species",
        "zebrafish",
        "--out",
        str(tmp_path),
    ]
    assert main(args) == 2
    assert "no codon table for species 'zebrafish'" in capsys.readouterr().err


def test_a_user_codon_table_names_the_config(genome_files, tmp_path):
    table = load_codon_table("mouse")
    csv = tmp_path / "zebrafish.csv"
    csv.write_text(
        "codon,amino_acid,frequency\n"
        + "".join(
            f"{codon},{aa},{freq}\n"
            for aa, codons in table.usage.items()
            for codon, freq in codons.items()
        )
    )
    args = [
        "build",
        "syn",
        "--fasta",
        str(genome_files[0]),
        "--gtf",
        str(genome_files[1]),
        "--species",
        "zebrafish",
        "--codon-table",
        str(csv),
        "--out",
        str(tmp_path),
        "--window",
        "400",
        "--flank",
        "100",
    ]
    assert main(args) == 0
    row = pq.read_table(tmp_path / "syn_zebrafish").to_pylist()[0]
    assert row["codon_usage_source"] == str(csv) and row["species"] == "zebrafish"


def test_tasks_run_on_a_built_dataset(built, genome_files, tiny_models, tmp_path):
    data_dir = built["syn"].parents[1]
    result = evaluate(
        tiny_models["char"],
        ["perturbation_syn_human", "perturbation_motif_human"],
        {"data_dir": str(data_dir)},
    )
    for task, path in (
        ("perturbation_syn_human", built["syn"]),
        ("perturbation_motif_human", built["motif"]),
    ):
        assert result["results"][task]["sample_len"] == pq.read_metadata(path).num_rows
    build("motif", *genome_files, tmp_path, "--motif", "GAA", "--config", "motif_gaa_human")
    custom = tmp_path / "motif_gaa_human" / "test-00000-of-00001.parquet"
    result = evaluate(
        tiny_models["char"],
        ["perturbation_custom"],
        {"data_dir": str(tmp_path), "config": "motif_gaa_human"},
    )
    assert (
        result["results"]["perturbation_custom"]["sample_len"] == pq.read_metadata(custom).num_rows
    )
    # the built config also runs under its own name, from the YAML build wrote beside it,
    # whatever data_dir the run gives the other tasks
    assert (tmp_path / "perturbation_motif_gaa_human.yaml").is_file()
    named = evaluate(
        tiny_models["char"],
        ["perturbation_motif_gaa_human", "perturbation_syn_human"],
        {"data_dir": str(data_dir)},
        include=[tmp_path],
    )
    assert (
        named["results"]["perturbation_motif_gaa_human"]["alias"] == "perturbation_motif_gaa_human"
    )
    assert (
        named["results"]["perturbation_motif_gaa_human"]["sample_len"]
        == pq.read_metadata(custom).num_rows
    )
    assert (
        named["results"]["perturbation_syn_human"]["sample_len"]
        == pq.read_metadata(built["syn"]).num_rows
    )


def test_demo_dataset_is_what_the_script_builds(tmp_path):
    import runpy

    from perturbation_bench.paths import demo_data_dir

    script = runpy.run_path(str(REPO / "scripts" / "make_demo_data.py"))
    script["make"](tmp_path)
    for config in ("syn_human", "syn_mouse", "motif_human"):
        shipped = demo_data_dir() / config / "test-00000-of-00001.parquet"
        assert (tmp_path / config / shipped.name).read_bytes() == shipped.read_bytes()
        checks, n_rows = validate(shipped)
        assert n_rows == 24 and not any(c.broken for c in checks)


@pytest.mark.slow
def test_demo_runs_offline_through_the_tasks(tmp_path):
    from perturbation_bench.fixtures.random_models import (
        save_random_llama,
        single_nucleotide_tokenizer,
    )

    model = save_random_llama(
        tmp_path, single_nucleotide_tokenizer(), layers=1, hidden=16, max_positions=8200
    )
    result = evaluate(str(model), ["perturbation_bench"], {"data_dir": "demo"})
    assert [
        result["results"][t]["sample_len"] for t in result["results"] if t != "perturbation_bench"
    ] == [24] * 3


def gtf_records(gtf: Path) -> list[dict]:
    out = []
    for line in gtf.read_text().splitlines():
        fields = line.split("\t")
        attributes = dict(re.findall(r'(\w+) "([^"]*)"', fields[8]))
        out.append(
            {"fields": fields[:8], "canonical": "Ensembl_canonical" in fields[8], **attributes}
        )
    return out


def write_gff3(records: list[dict], path: Path, layout: str) -> None:
    """The same CDS records as GFF3: gene -> mRNA -> CDS (Ensembl), or gene -> CDS (SGD)."""
    lines, seen = ["##gff-version 3"], set()
    for r in records:
        chrom, source, _, _, _, _, strand, phase = r["fields"]
        if r["gene_id"] not in seen:  # the gene's own span does not matter for the build
            seen.add(r["gene_id"])
            lines.append(
                f"{chrom}\t{source}\tgene\t1\t2\t.\t{strand}\t.\tID={r['gene_id']};Name={r['gene_name']}"
            )
        parent = r["gene_id"]
        if layout == "ensembl":
            parent = r["transcript_id"]
            if parent not in seen:
                seen.add(parent)
                tags = "basic,Ensembl_canonical" if r["canonical"] else "basic"
                lines.append(
                    f"{chrom}\t{source}\tmRNA\t1\t2\t.\t{strand}\t.\tID={parent};Parent={r['gene_id']};tag={tags}"
                )
        start, end = r["fields"][3], r["fields"][4]
        lines.append(
            f"{chrom}\t{source}\tCDS\t{start}\t{end}\t.\t{strand}\t{phase}\tParent={parent}"
        )
    path.write_text("\n".join(lines) + "\n")


def write_gtf(records: list[dict], path: Path) -> None:
    lines = []
    for r in records:
        tag = ' tag "Ensembl_canonical";' if r["canonical"] else ""
        attributes = (
            f'gene_id "{r["gene_id"]}"; transcript_id "{r["transcript_id"]}"; '
            f'gene_name "{r["gene_name"]}";{tag}'
        )
        lines.append("\t".join(r["fields"]) + "\t" + attributes + "\n")
    path.write_text("".join(lines))


@pytest.mark.parametrize("layout", ["ensembl", "sgd"])
def test_both_gff3_layouts_build_the_same_rows_as_the_gtf(genome_files, tmp_path, layout):
    fasta, gtf = genome_files
    records = gtf_records(gtf)
    if layout == "sgd":  # one transcript per gene, named after it
        records = [dict(r, transcript_id=r["gene_id"]) for r in records if r["canonical"]]
    write_gtf(records, tmp_path / "same.gtf")
    write_gff3(records, tmp_path / "same.gff3", layout)
    paths = {}
    for name, flag in (("same.gtf", "--gtf"), ("same.gff3", "--gff3")):
        out = tmp_path / name.replace(".", "_")
        args = [
            "build",
            "syn",
            "--fasta",
            str(fasta),
            flag,
            str(tmp_path / name),
            "--species",
            "human",
            "--out",
            str(out),
            "--window",
            str(WINDOW),
            "--flank",
            str(FLANK),
            "--assembly",
            "toy",
            "--annotation-source",
            "toy",
        ]
        assert main(args) == 0
        paths[name] = out / "syn_human" / "test-00000-of-00001.parquet"
    gtf_rows, gff3_rows = (pq.read_table(p).to_pylist() for p in paths.values())
    assert len(gtf_rows) > 10 and gff3_rows == gtf_rows
    reports = [
        json.loads((p.parent / "_build_report.json").read_text())["excluded"]
        for p in paths.values()
    ]
    assert reports[0] == reports[1]


def test_a_gff3_is_recognised_by_its_extension(genome_files, tmp_path):
    records = gtf_records(genome_files[1])
    write_gff3(records, tmp_path / "annotation.gff3", "ensembl")
    assert len(read_cds_exons(tmp_path / "annotation.gff3")) == len(read_cds_exons(genome_files[1]))


def test_two_genes_sharing_an_exon_give_one_pair_and_a_duplicate_count(genome_files, tmp_path):
    """An annotation with a second gene whose CDS copies another gene's: the same pair twice."""
    fasta, gtf = genome_files
    lines = [line for line in gtf.read_text().splitlines() if "\tCDS\t" in line]
    first_gene = re.search(r'gene_id "([^"]+)"', lines[0]).group(1)
    copy = [
        line.replace(f'gene_id "{first_gene}"', 'gene_id "COPY"').replace(
            'transcript_id "', 'transcript_id "COPY_'
        )
        for line in lines
        if f'gene_id "{first_gene}"' in line
    ]
    doubled = tmp_path / "doubled.gtf"
    doubled.write_text(gtf.read_text() + "\n".join(copy) + "\n")
    single = pq.read_table(build("syn", fasta, gtf, tmp_path / "a")).num_rows
    twice = pq.read_table(build("syn", fasta, doubled, tmp_path / "b")).num_rows
    report = json.loads((tmp_path / "b" / "syn_human" / "_build_report.json").read_text())
    assert twice == single and report["excluded"]["duplicate_pair"] == len(copy)


def test_a_tie_in_cds_length_without_a_canonical_tag_picks_the_smallest_transcript_id():
    """Mutant: the transcript id sorted descending (or not at all)."""
    table = cds_table(
        [
            ("c", 1, 90, "+", 0, "T2", "G", ""),
            ("c", 201, 290, "+", 0, "T1", "G", ""),
            ("c", 1, 60, "+", 0, "T3", "G", ""),
        ]
    )
    assert {exon.transcript_id for exon in choose_transcripts(table)} == {"T1"}
    canonical = cds_table(
        [
            ("c", 1, 90, "+", 0, "T2", "G", "Ensembl_canonical"),
            ("c", 201, 290, "+", 0, "T1", "G", ""),
        ]
    )
    assert {exon.transcript_id for exon in choose_transcripts(canonical)} == {"T2"}


def test_a_gff3_cds_with_several_parents_belongs_to_each(tmp_path):
    """Mutant: only the first ``Parent`` kept."""
    gff3 = tmp_path / "a.gff3"
    gff3.write_text(
        "##gff-version 3\n"
        "c\tt\tgene\t1\t300\t.\t+\t.\tID=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T1;Parent=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T2;Parent=G\n"
        "c\tt\tCDS\t10\t99\t.\t+\t0\tID=cds1;Parent=T1,T2\n"
    )
    table = read_gff3_cds(gff3)
    assert sorted(table["transcript_id"]) == ["T1", "T2"]
    assert set(table["gene_id"]) == {"G"}


def cds_table(rows):
    import pandas as pd

    columns = ["seqname", "start", "end", "strand", "frame", "transcript_id", "gene_id", "tag"]
    return pd.DataFrame(rows, columns=columns).assign(gene_name="")


def test_the_codon_control_permutes_synonymous_codons_only(genome_files, built, tmp_path, capsys):
    """``--recode shuffle``: the same rows as the published recoding, each patch's codons permuted
    among the positions of their amino acid: protein, codon counts and composition kept, M, W and
    stop codons in place, some codon moved; an order-0 chain ties on every pair."""
    build("syn", *genome_files, tmp_path, "--recode", "shuffle")
    path = tmp_path / "syn_shuffle_human" / "test-00000-of-00001.parquet"  # a name of its own
    shuffled, published = pq.read_table(path).to_pylist(), pq.read_table(built["syn"]).to_pylist()
    assert [r["benchmark_id"].split(":", 1)[1] for r in shuffled] == [
        r["benchmark_id"].split(":", 1)[1] for r in published
    ]
    code = load_codon_table("human")
    for row in shuffled:
        assert row["recoding_mode"] == "synonymous_codon_shuffle"
        start, end = row["patch_start_in_seq"], row["patch_end_in_seq"]
        a, b = row["original_sequence"], row["sequence"]
        assert a[:start] == b[:start] and a[end:] == b[end:]
        before = [a[i : i + 3] for i in range(start, end, 3)]
        after = [b[i : i + 3] for i in range(start, end, 3)]
        assert sorted(before) == sorted(after) and before != after
        assert [code.code[c] for c in before] == [code.code[c] for c in after]
        assert all(x == y for x, y in zip(before, after, strict=True) if code.code[x] in "MW*")
        assert row["n_codons_changed"] == sum(x != y for x, y in zip(before, after, strict=True))
    build("syn", *genome_files, tmp_path / "seed1", "--recode", "shuffle", "--seed", "1")
    other = pq.read_table(tmp_path / "seed1" / "syn_shuffle_human").column("sequence").to_pylist()
    assert other != [row["sequence"] for row in shuffled]  # drawn by the seeded generator
    result = evaluate(
        str(genome_files[0]),
        ["perturbation_custom"],
        {"data_dir": str(tmp_path), "config": "syn_shuffle_human"},
        model="kmer-markov",
        order=0,
    )
    assert result["results"]["perturbation_custom"]["tie_rate,pairs"] == 1.0


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--config", "syn_human"], "syn_human is a published config"),
        (["--optimization-rate", "0.5"], "--optimization-rate applies to --recode most_frequent"),
    ],
)
def test_the_codon_control_refuses_published_names_and_partial_rates(
    genome_files, tmp_path, capsys, extra, message
):
    fasta, gtf = genome_files
    assert (
        main(
            [
                "build",
                "syn",
                "--recode",
                "shuffle",
                "--fasta",
                str(fasta),
                "--gtf",
                str(gtf),
                "--species",
                "human",
                "--out",
                str(tmp_path),
                *extra,
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err


def test_a_codon_shuffle_draws_again_until_a_codon_moves():
    """Two codons of one amino acid: half the permutations leave them in place; every seed still
    gives the swapped pair, M and the stop staying where they are."""
    import random

    from perturbation_bench.dataset.build import shuffle_synonymous

    codons, table = ["ATG", "GCT", "GCC", "TAA"], load_codon_table("human")
    for seed in range(20):
        assert shuffle_synonymous(codons, [1, 2], table, random.Random(seed)) == [
            "ATG",
            "GCC",
            "GCT",
            "TAA",
        ]
    stuck = ["ATG", "GCT", "GCT", "TAA"]  # nothing can move: the codons as given (a no_change row)
    assert shuffle_synonymous(stuck, [1, 2], table, random.Random(0)) == stuck
