"""Run one perturbation-bench task through lm-eval's Python API, for multi-process launches.

    torchrun --nproc_per_node 2 tests/dp_driver.py MODEL DATA_DIR OUT.json [MODEL_KIND [TASK [METADATA]]]

MODEL_KIND: dna-hf (default), dna-mlm or kmer-markov (MODEL: the FASTA it counts); TASK: default perturbation_syn_human; METADATA: JSON
merged into the task metadata.

Rank 0 writes the results JSON (results and per-pair LLs); every process evaluates its share.
"""

import faulthandler
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lm_eval.utils import setup_logging  # noqa: E402

import perturbation_bench.models.dna_hf  # noqa: E402,F401  (registers the models without the hook)
import perturbation_bench.models.dna_mlm  # noqa: E402,F401
import perturbation_bench.models.kmer_markov  # noqa: E402,F401
from dna_fixtures import evaluate  # noqa: E402
from perturbation_bench.tasks.pairing import logged_pairs  # noqa: E402

faulthandler.enable(all_threads=True)  # a rank that aborts prints every thread's stack
setup_logging("INFO")
model_path, data_dir, out = sys.argv[1:4]
model = sys.argv[4] if len(sys.argv) > 4 else "dna-hf"
task = sys.argv[5] if len(sys.argv) > 5 else "perturbation_syn_human"
metadata = {"data_dir": data_dir, **(json.loads(sys.argv[6]) if len(sys.argv) > 6 else {})}
result = evaluate(model_path, [task], metadata, model=model)
if result is not None:
    Path(out).write_text(
        json.dumps(
            {"results": result["results"][task], "lls": logged_pairs(result, task)}, default=str
        )
    )
