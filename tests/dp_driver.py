"""Run one perturbation-bench task through lm-eval's Python API, for multi-process launches.

    torchrun --nproc_per_node 2 tests/dp_driver.py MODEL DATA_DIR OUT.json [dna-hf|dna-mlm]

Rank 0 writes the results JSON (results and per-pair LLs); every process evaluates its share.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lm_eval.utils import setup_logging  # noqa: E402

import perturbation_bench.models.dna_hf  # noqa: E402,F401  (registers the models without the hook)
import perturbation_bench.models.dna_mlm  # noqa: E402,F401
from dna_fixtures import evaluate  # noqa: E402
from perturbation_bench.tasks.pairing import logged_pairs  # noqa: E402

setup_logging("INFO")
model_path, data_dir, out = sys.argv[1:4]
model = sys.argv[4] if len(sys.argv) > 4 else "dna-hf"
result = evaluate(model_path, ["perturbation_syn_human"], {"data_dir": data_dir}, model=model)
if result is not None:
    Path(out).write_text(
        json.dumps(
            {
                "results": result["results"]["perturbation_syn_human"],
                "lls": logged_pairs(result, "perturbation_syn_human"),
            },
            default=str,
        )
    )
