"""NABench's assay files made pairs (``formats/nabench.py``), on real rows of two DNA assays
(``tests/data/nabench``): each row's pair is the wild type against its sequence, checked by
re-applying its mutant independently; bad rows are counted and named, never dropped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from perturbation_bench.cli import main

FIXTURES = Path(__file__).parent.parent / "data" / "nabench"
MARTIN = FIXTURES / "Martin_2018_myc_enhancer.csv"
EILON = FIXTURES / "Eilon_2012_dna_R1_promoter.csv"


def build(tmp_path, *files, extra=()) -> pd.DataFrame:
    assert main(nabench_args(tmp_path, *files, extra=extra)) == 0
    return pd.read_parquet(tmp_path / "out" / "nabench")


def refused(capsys, args: list[str], message: str) -> None:
    """``args`` stop with status 2 and one line matching ``message``, no traceback."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err


def nabench_args(tmp_path, *files, extra=()) -> list[str]:
    return [
        "build",
        "variants",
        "--from",
        "nabench",
        "--variants",
        *map(str, files),
        "--config",
        "nabench",
        "--out",
        str(tmp_path / "out"),
        *extra,
    ]


def applied(wild_type: str, mutant: str) -> str:
    """The wild type with each ``A12G`` of ``mutant`` applied (the test's own reading)."""
    bases = list(wild_type)
    for token in mutant.split(","):
        before, position, after = re.fullmatch(r"([ACGT])(\d+)([ACGT])", token).groups()
        assert bases[int(position) - 1] == before
        bases[int(position) - 1] = after
    return "".join(bases)


def test_each_assay_file_is_one_assay_of_wild_type_against_measured_sequence(tmp_path):
    built = build(tmp_path, MARTIN, EILON)
    report = json.loads((tmp_path / "out" / "nabench" / "_build_report.json").read_text())
    for path in (MARTIN, EILON):
        source = pd.read_csv(path)
        wild_type = source.loc[source["mutant"].isna(), "sequence"].iloc[0]
        measured = source[source["mutant"].notna()]
        rows = built[built["assay"] == path.stem]
        assert len(rows) == len(measured)
        assert set(rows["original_sequence"]) == {wild_type}
        assert rows["sequence"].tolist() == measured["sequence"].tolist()
        assert rows["label"].tolist() == measured["DMS_score"].tolist()
        assert rows["mutant"].tolist() == measured["mutant"].tolist()
        for mutant, sequence, pos, ref, alt in rows[
            ["mutant", "sequence", "pos", "ref", "alt"]
        ].itertuples(index=False):
            assert applied(wild_type, mutant) == sequence
            first = min(int(re.search(r"\d+", t)[0]) for t in mutant.split(","))
            last = max(int(re.search(r"\d+", t)[0]) for t in mutant.split(","))
            assert (pos, ref, alt) == (
                first,
                wild_type[first - 1 : last],
                sequence[first - 1 : last],
            )
    assert set(built["label_direction"]) == {"functional"}
    assert set(built["window_edge"]) == {"construct"}
    assert set(built["window_start"]) == {0} and set(built["is_clamped"]) == {0}
    assert built["variant_offset"].tolist() == (built["pos"] - 1).tolist()
    wild_type_rows = sum(pd.read_csv(p)["mutant"].isna().sum() for p in (MARTIN, EILON))
    assert (report["read"], report["written"], report["wild_type_rows"]) == (
        len(built),
        len(built),
        wild_type_rows,
    )
    assert (built["assay"] == EILON.stem).sum() > 100 and (
        built["assay"] == MARTIN.stem
    ).sum() > 100


def test_rows_that_do_not_match_their_mutant_are_counted_and_named(tmp_path):
    source = pd.read_csv(MARTIN, dtype={"mutant": str})
    measured = source.index[source["mutant"].notna()]
    broken = source.copy()
    first, second, third, fourth, fifth = measured[:5]
    wrong_base = broken.loc[first, "mutant"]
    broken.loc[first, "mutant"] = (
        "T" + wrong_base[1:] if wrong_base[0] != "T" else "A" + wrong_base[1:]
    )
    sequence = broken.loc[second, "sequence"]
    broken.loc[second, "sequence"] = sequence[:-1]  # one base short
    sequence = broken.loc[third, "sequence"]
    broken.loc[third, "sequence"] = ("C" if sequence[0] != "C" else "G") + sequence[1:]
    broken.loc[fourth, "mutant"] = "12>T"
    sequence = broken.loc[fifth, "sequence"]
    broken.loc[fifth, "sequence"] = "N" + sequence[1:]
    path = tmp_path / MARTIN.name
    broken.to_csv(path, index=False)
    built = build(tmp_path, path)
    folder = tmp_path / "out" / "nabench"
    report = json.loads((folder / "_build_report.json").read_text())
    assert report["excluded"] == {
        "length_differs": 1,
        "mutant_ref_differs": 1,
        "mutant_unreadable": 1,
        "non_acgt_sequence": 1,
        "sequence_differs_from_mutant": 1,
    }
    assert report["read"] == len(measured) == len(built) + 5
    named = pd.read_csv(folder / "_excluded.tsv", sep="\t")
    assert named["record"].tolist() == [first, second, third, fourth, fifth]
    assert set(named["assay"]) == {MARTIN.stem}


def test_an_assay_without_a_wild_type_row_takes_it_from_nabenchs_metadata(tmp_path, capsys):
    source = pd.read_csv(EILON)
    wild_type = source.loc[source["mutant"].isna(), "sequence"].iloc[0]
    path = tmp_path / EILON.name
    source[source["mutant"].notna()].to_csv(path, index=False)
    refused(capsys, nabench_args(tmp_path, path), f"{path}: no wild type.*--nabench-metadata")
    metadata = tmp_path / "metadata.csv"
    pd.DataFrame({"DMS_ID": [EILON.stem], "RAW_CONSTRUCT_SEQ": [wild_type]}).to_csv(
        metadata, index=False
    )
    built = build(tmp_path, path, extra=["--nabench-metadata", str(metadata)])
    assert set(built["original_sequence"]) == {wild_type} and len(built) == len(source) - 1


def test_disagreeing_wild_type_rows_and_options_of_other_formats_are_refused(tmp_path, capsys):
    source = pd.read_csv(MARTIN)
    wild = source.index[source["mutant"].isna()]
    source.loc[wild[1], "sequence"] = source.loc[wild[1], "sequence"][::-1]
    path = tmp_path / MARTIN.name
    source.to_csv(path, index=False)
    refused(capsys, nabench_args(tmp_path, path), f"{path}: .* hold 2 different sequences")
    refused(capsys, nabench_args(tmp_path, MARTIN, extra=["--fasta", "x.fa"]), "no --fasta")
    args = ["build", "variants", "--variants", "v.csv", "--fasta", "g.fa", "--config", "c"]
    refused(
        capsys,
        [*args, "--out", str(tmp_path), "--nabench-metadata", "m.csv"],
        "--nabench-metadata goes with --from nabench",
    )
    two = ["build", "variants", "--variants", "v.csv", "a.csv", "--fasta", "g.fa", "--config", "c"]
    refused(capsys, [*two, "--out", str(tmp_path)], "takes one file")


def test_the_edges_of_a_construct_a_gzipped_file_and_a_missing_score(tmp_path):
    """A substitution of the last base is read; a mutant that changes nothing is named
    ``no_change``; two rows of one reason count 2; an empty score is no label; a gzipped file
    is the same assay."""
    import gzip

    source = pd.read_csv(MARTIN, dtype={"mutant": str})
    wild_type = source.loc[source["mutant"].isna(), "sequence"].iloc[0]
    measured = source.index[source["mutant"].notna()]
    edited = source.copy()
    last = len(wild_type)
    other = "A" if wild_type[-1] != "A" else "C"
    edited.loc[measured[0], ["mutant", "sequence"]] = (
        f"{wild_type[-1]}{last}{other}",
        wild_type[:-1] + other,
    )
    edited.loc[measured[1], ["mutant", "sequence"]] = (f"{wild_type[4]}5{wild_type[4]}", wild_type)
    for row in measured[2:4]:
        edited.loc[row, "sequence"] = edited.loc[row, "sequence"] + "A"
    edited.loc[measured[4], "DMS_score"] = None
    path = tmp_path / (MARTIN.name + ".gz")
    with gzip.open(path, "wt") as handle:
        edited.to_csv(handle, index=False)
    built = build(tmp_path, path)
    report = json.loads((tmp_path / "out" / "nabench" / "_build_report.json").read_text())
    assert report["excluded"] == {"length_differs": 2, "no_change": 1}
    assert set(built["assay"]) == {MARTIN.stem}
    end = built[built["mutant"] == f"{wild_type[-1]}{last}{other}"].iloc[0]
    assert (end["pos"], end["ref"], end["alt"]) == (last, wild_type[-1], other)
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out" / "nabench").to_pydict()  # null, not NaN: no label
    row = table["mutant"].index(edited.loc[measured[4], "mutant"])
    assert table["label"][row] is None and sum(v is None for v in table["label"]) == 1


def test_a_wild_type_that_is_not_dna_and_disagreeing_records_are_named(tmp_path, capsys):
    source = pd.read_csv(MARTIN)
    wild = source.index[source["mutant"].isna()]
    source.loc[wild, "sequence"] = "N" + source.loc[wild[0], "sequence"][1:]
    path = tmp_path / MARTIN.name
    source.to_csv(path, index=False)
    refused(capsys, nabench_args(tmp_path, path), "has a letter other than ACGT")
    source.loc[wild[1], "sequence"] = "ACGT"
    source.to_csv(path, index=False)
    records = ", ".join(map(str, wild[:5]))
    refused(capsys, nabench_args(tmp_path, path), f"records {records}\\)")


def test_a_missing_file_or_one_without_nabench_s_columns_is_named(tmp_path, capsys):
    absent = tmp_path / "absent.csv"
    refused(capsys, nabench_args(tmp_path, absent), f"no NABench file at {absent}")
    wrong = tmp_path / "wrong.csv"
    pd.DataFrame({"mutant": ["A1C"], "score": [1.0]}).to_csv(wrong, index=False)
    refused(
        capsys,
        nabench_args(tmp_path, wrong),
        f"{wrong}: missing column\\(s\\) DMS_score, sequence; NABench's files have "
        "mutant, DMS_score, sequence",
    )
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x00\xff\xfe" * 10)
    refused(capsys, nabench_args(tmp_path, binary), f"cannot read NABench file {binary}: ")


def test_a_score_that_is_not_a_finite_number_is_refused_with_file_record_and_value(
    tmp_path, capsys
):
    table = pd.read_csv(MARTIN)
    for bad, shown in (("high", "'high'"), ("inf", "inf")):  # pandas reads inf as a float
        path = tmp_path / "Martin_2018_myc_enhancer.csv"
        table.astype({"DMS_score": object}).assign(
            DMS_score=lambda t, bad=bad: [
                bad if i == 3 else s for i, s in enumerate(t["DMS_score"])
            ]
        ).to_csv(path, index=False)
        message = rf"{re.escape(str(path))}: record 3: DMS_score {shown} is not a finite number"
        refused(capsys, nabench_args(tmp_path, path), message)


def test_two_files_of_one_assay_name_are_refused(tmp_path, capsys):
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / MARTIN.name
    copy.write_bytes(MARTIN.read_bytes())
    refused(
        capsys, nabench_args(tmp_path, MARTIN, copy), "its assay name 'Martin_2018_myc_enhancer'"
    )
