"""Run one task through lm-eval with ``--use_cache``, for the resume tests (killed, then rerun).

    python tests/resume_driver.py MODEL_KIND MODEL DATA_DIR CACHE OUT.json [TASK [METADATA]]

Batch size 1, so that the run advances piece by piece. Rank 0 writes results and per-pair LLs.

With ``PB_TEST_PAUSE_AFTER=N`` and ``PB_TEST_PAUSE_STORE=SUFFIX`` in the environment, each process
stops for good (until it is killed) just before it would store its (N+1)-th entry in a SQLite
store whose file name ends with SUFFIX: the kill point of a resume test is then an event the test
observes (N entries stored, the run still going), never a delay.
"""

import json
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lm_eval.utils import setup_logging  # noqa: E402

import perturbation_bench.models.dna_hf  # noqa: E402,F401  (registers the models without the hook)
import perturbation_bench.models.dna_mlm  # noqa: E402,F401
from dna_fixtures import evaluate  # noqa: E402
from perturbation_bench.tasks.pairing import logged_pairs  # noqa: E402


def pause_after_stored(count: int, suffix: str) -> None:
    """Block this process before its (count+1)-th write to a store named ``*SUFFIX``."""
    from sqlitedict import SqliteDict

    original, written = SqliteDict.__setitem__, [0]

    def setitem(self, key, value):
        if self.filename.endswith(suffix):
            if written[0] >= count:
                threading.Event().wait()
            written[0] += 1
        original(self, key, value)

    SqliteDict.__setitem__ = setitem


if os.environ.get("PB_TEST_PAUSE_AFTER"):
    pause_after_stored(int(os.environ["PB_TEST_PAUSE_AFTER"]), os.environ["PB_TEST_PAUSE_STORE"])
setup_logging("INFO")
kind, model, data_dir, cache, out = sys.argv[1:6]
task = sys.argv[6] if len(sys.argv) > 6 else "perturbation_syn_human"
metadata = {"data_dir": data_dir, **(json.loads(sys.argv[7]) if len(sys.argv) > 7 else {})}
result = evaluate(model, [task], metadata, model=kind, use_cache=cache, batch_size=1)
if result is not None:
    Path(out).write_text(
        json.dumps(
            {"results": result["results"][task], "lls": logged_pairs(result, task)}, default=str
        )
    )
