"""Folders this package writes whole: ``report --export traitgym DIR`` and ``leaderboard --out DIR``
(and ``report --out DIR``, whose earlier report's files a new report replaces, beside files of
others, which it keeps).

Such a folder holds what one command wrote and nothing else, so a reader of it (TraitGym reading
every model file under ``preds/``) sees exactly the runs of that command. The contract:

- before any work (:func:`check_output_folder`), the target is refused when it is a file, when it
  cannot be written, or when it holds a file that this package did not write there: one not in
  its manifest (:data:`MANIFEST`, the list of files the last write made);
- a write (:func:`replace_output`) first removes every file of the previous write (and the
  folders that leaves empty), then writes the new files and the manifest listing them, so a
  re-export replaces the earlier one whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from perturbation_bench.errors import OptionsError

MANIFEST = ".perturbation-bench-files"
"""The file listing, one relative path a line, what the last write put in the folder."""


def check_output_folder(path: str | Path, option: str) -> Path:
    """``path`` as a folder this package may write whole (module docstring).

    Raises:
        OptionsError: naming ``option``, the folder and the reason.
    """
    path = writable_folder(path, option)
    if path.is_dir():
        owned = set(_manifest(path))
        foreign = sorted(
            str(p.relative_to(path))
            for p in path.rglob("*")
            if p.is_file() and p.name != MANIFEST and str(p.relative_to(path)) not in owned
        )
        if foreign:
            raise OptionsError(
                f"{option} {path}: holds {len(foreign)} file(s) this tool did not write there "
                f"(first: {foreign[0]}); give an empty or new folder, or one an earlier "
                f"{option} wrote"
            )
    return path


def writable_folder(path: str | Path, option: str) -> Path:
    """``path``, refused when it is a file, lies under a file or cannot be written.

    Raises:
        OptionsError: naming ``option``, the folder and the reason.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OptionsError(f"{option} {path}: is a file, not a folder")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise OptionsError(f"{option} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OptionsError(f"{option} {path}: cannot write in {existing}")
    return path


def make_folder(path: str | Path, option: str) -> Path:
    """``path`` made (with its parents) after :func:`writable_folder`'s checks.

    Raises:
        OptionsError: as :func:`writable_folder`, or the system refused to make it (naming why).
    """
    path = writable_folder(path, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OptionsError(f"{option} {path}: cannot make this folder ({err.strerror})") from None
    return path


def replace_output(path: str | Path, write) -> list[Path]:
    """Remove the previous write's files from ``path``, call ``write(path)`` (which returns the
    paths it wrote), record them in the manifest; the paths written."""
    path = Path(path)
    remove_previous(path)
    path.mkdir(parents=True, exist_ok=True)
    written = list(write(path))
    record_written(path, written)
    return written


def remove_previous(path: Path) -> None:
    """Remove the files the manifest of ``path`` lists (the previous write's), and the folders
    that leaves empty."""
    previous = _manifest(path) if path.is_dir() else []
    for name in previous:
        (path / name).unlink(missing_ok=True)
    for folder in sorted({(path / name).parent for name in previous}, key=_depth, reverse=True):
        while folder != path and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


def record_written(path: Path, written) -> None:
    """List ``written`` (paths under ``path``) in its manifest, for the next write to remove."""
    names = sorted({str(Path(p).relative_to(path)) for p in written})
    (path / MANIFEST).write_text("".join(f"{name}\n" for name in names))


def _manifest(path: Path) -> list[str]:
    listed = path / MANIFEST
    return listed.read_text().splitlines() if listed.is_file() else []


def _depth(folder: Path) -> int:
    return len(folder.parts)
