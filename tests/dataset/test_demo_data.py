"""The demo dataset (demo_data/, scripts/make_demo_data.py): what the script builds, scored offline."""

from __future__ import annotations

import pytest

from dna_fixtures import REPO, evaluate
from perturbation_bench.dataset.validate import validate


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
