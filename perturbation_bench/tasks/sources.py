"""Locate the benchmark's parquet files: a local folder in the hub layout, or the hub itself.

Layout (the hub's, and the one ``data_dir`` must follow; ``pairs/layout.py``)::

    DIR/<config>/*.parquet        config in syn_human, syn_mouse, motif_human (or any other name)

The files are read and checked by :mod:`perturbation_bench.pairs.files`.
"""

from __future__ import annotations

from pathlib import Path

from perturbation_bench.errors import DataSourceError
from perturbation_bench.pairs.layout import PARQUET_GLOB

HUB_DATASET_ID = "HuggingFaceBio/perturbation-bench"


def local_parquet_files(data_dir: str | Path, config: str) -> list[Path]:
    """Return ``data_dir/config/*.parquet``, sorted; raise if there are none."""
    folder = Path(data_dir).expanduser() / config
    if not folder.is_dir():
        if any(folder.parent.glob(PARQUET_GLOB)):
            raise DataSourceError(
                f"data_dir {str(data_dir)!r} holds parquet files itself, so it is a config "
                f"folder: pass its parent ({folder.parent.parent}) as data_dir"
            )
        present = config_folders(folder.parent)
        raise DataSourceError(
            f"data_dir {str(data_dir)!r} has no folder {config!r}: expected the hub layout "
            f"{Path(data_dir) / config / '*.parquet'}; configs there: "
            f"{', '.join(present) if present else 'none'}"
        )
    files = sorted(folder.glob(PARQUET_GLOB))
    if not files:
        raise DataSourceError(f"no *.parquet file in {folder}")
    return files


def config_folders(data_dir: str | Path) -> list[str]:
    """The configs in ``data_dir``: its sub-folders that hold parquet files, sorted."""
    root = Path(data_dir).expanduser()
    return sorted(p.name for p in root.glob("*") if p.is_dir() and any(p.glob(PARQUET_GLOB)))


def hub_parquet_files(config: str, revision: str | None = None) -> list[Path]:
    """Fetch (or find in the Hugging Face cache) the parquet files of one hub config.

    Raises:
        DataSourceError: the hub cannot be reached and nothing is cached, or the repository or
            config does not exist; the message says how to use local files instead.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        snapshot = snapshot_download(
            HUB_DATASET_ID,
            repo_type="dataset",
            revision=revision,
            allow_patterns=[f"{config}/{PARQUET_GLOB}"],
        )
    except (HfHubHTTPError, OSError) as err:
        raise DataSourceError(
            f"cannot load {HUB_DATASET_ID} config {config!r} from the Hugging Face hub "
            f"({type(err).__name__}: {str(err).splitlines()[0]}). To run offline, download "
            f"the parquet files elsewhere and pass their folder: "
            f'--metadata \'{{"data_dir": "/path/to/perturbation-bench"}}\' '
            f"(layout: /path/to/perturbation-bench/{config}/*.parquet)"
        ) from None
    files = sorted((Path(snapshot) / config).glob(PARQUET_GLOB))
    if not files:
        raise DataSourceError(
            f"{HUB_DATASET_ID} has no parquet files for config {config!r} "
            f"(revision {revision or 'main'})"
        )
    return files
