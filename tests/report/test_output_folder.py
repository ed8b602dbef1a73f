"""Folders written whole (``report/output_folder.py``): a rewrite replaces the earlier write,
a folder holding another's file or a file in place of a folder is refused before any write."""

from __future__ import annotations

import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.report.output_folder import MANIFEST, check_output_folder, replace_output


def writer(*names: str):
    def write(folder):
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(name)
        return [folder / name for name in names]

    return write


def files(folder) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_a_rewrite_replaces_the_earlier_write_whole(tmp_path):
    out = check_output_folder(tmp_path / "new" / "export", "--out")
    replace_output(out, writer("a/x.csv", "a/deep/y.csv", "top.md"))
    assert files(out) == {"a/x.csv", "a/deep/y.csv", "top.md", MANIFEST}
    check_output_folder(out, "--out")  # only its own files: accepted
    written = replace_output(out, writer("b/z.csv"))
    assert written == [out / "b" / "z.csv"]
    assert files(out) == {"b/z.csv", MANIFEST} and not (out / "a").exists()
    assert (out / MANIFEST).read_text() == "b/z.csv\n"


def test_a_folder_holding_a_file_it_did_not_write_is_refused(tmp_path):
    replace_output(tmp_path, writer("mine.csv"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "theirs.parquet").write_text("x")
    with pytest.raises(OptionsError, match=r"--export traitgym .*holds 1 file\(s\) .*sub/theirs"):
        check_output_folder(tmp_path, "--export traitgym")
    fresh = tmp_path / "other"
    fresh.mkdir()
    (fresh / "old.csv").write_text("x")
    with pytest.raises(OptionsError, match="first: old.csv"):
        check_output_folder(fresh, "--out")


def test_a_file_where_the_folder_would_be_is_refused(tmp_path):
    (tmp_path / "board").write_text("x")
    with pytest.raises(OptionsError, match="board: is a file, not a folder"):
        check_output_folder(tmp_path / "board", "--out")
    with pytest.raises(OptionsError, match="board is a file, not a folder"):
        check_output_folder(tmp_path / "board" / "inside", "--out")
