"""Run one task through lm-eval with ``--use_cache``, for the resume tests (killed, then rerun).

    python tests/resume_driver.py MODEL_KIND MODEL DATA_DIR CACHE OUT.json [TASK [METADATA]]

Batch size 1, so that the run advances piece by piece. Rank 0 writes results and per-pair LLs.
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
kind, model, data_dir, cache, out = sys.argv[1:6]
task = sys.argv[6] if len(sys.argv) > 6 else "perturbation_syn_human"
metadata = {"data_dir": data_dir, **(json.loads(sys.argv[7]) if len(sys.argv) > 7 else {})}
result = evaluate(model, [task], metadata, model=kind, use_cache=cache, batch_size=1)
if result is not None:
    Path(out).write_text(json.dumps({"results": result["results"][task], "lls": logged_pairs(result, task)},
                                    default=str))  # fmt: skip
