#!/usr/bin/env bash
# The GPU check (docs/benchmarks.md#on-a-gpu): on a machine with one CUDA GPU, torch and
# transformers and nothing reachable, install lm-eval and this package from wheels
# (scripts/device_wheels.sh makes them), build a random Llama of 2.84 B parameters read as
# 6-mers and random 8,196 bp pairs, and print `perturbation-bench bench --protocol gpu`'s table
# (bare loop, lm-eval hf, dna-hf with and without sharing, batch auto, float32, with memory, MFU
# and agreement with float32; below it each row's decoder passes, those of batch 1 and its padded
# tokens, and the way share_prefix=auto chose with both times) for changes at random places, then for changes in the last fifth
# of the window, then one `lm_eval` command-line run. About 7 minutes on one H200.
# Usage: bash scripts/device_check.sh WHEELS_DIR    (or --installed: use what python3 imports)
# PB_CHECK_SIZE=tiny runs the same steps with a tiny model and few pairs, on the CPU, to try
# the script itself.
set -euo pipefail
wheels=${1:?usage: device_check.sh WHEELS_DIR | --installed}
size=${PB_CHECK_SIZE:-2.8b}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ "$wheels" != "--installed" ]; then
  python3 -m pip install -q --no-index --no-deps --target "$work/site" "$wheels"/*.whl
  # a site directory, so that the package's .pth file (which registers its tasks) runs
  echo "import site; site.addsitedir('$work/site')" > "$work/site/sitecustomize.py"
  export PYTHONPATH="$work/site"
fi
if [ "$size" = tiny ]; then
  device=cpu dtype=float32 batch=4 random_pairs=8 late_pairs=4
else
  device=cuda dtype=bfloat16 batch=32 random_pairs=384 late_pairs=192
fi
python3 - "$work" "$size" "$random_pairs" "$late_pairs" <<'PY'
import sys
import time
from pathlib import Path

from perturbation_bench.fixtures.random_models import kmer_tokenizer, save_random_llama
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

work, size, n_random, n_late = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shape = {
    "2.8b": dict(layers=28, hidden=3072, heads=24, kv_heads=8, intermediate=8192,
                 device="cuda", dtype="bfloat16"),
    "tiny": dict(layers=2, hidden=64),
}[size]
start = time.perf_counter()
save_random_llama(work / "model", kmer_tokenizer(6), max_positions=1400,
                  initializer_range=0.02, **shape)
print(f"random Llama ({size}) saved in {time.perf_counter() - start:.0f} s", flush=True)
write_parquet(random_pairs(n_random, 8196, seed=0, patch=12), work / "random", "syn_human")
late = [random_pairs(1, 8196, seed, 12, at=0.8 + 0.19 * seed / n_late)[0] for seed in range(n_late)]
write_parquet(late, work / "late", "syn_human")
PY
bench() {
  python3 -c 'import sys; from perturbation_bench.cli import main; sys.exit(main())' bench \
    --protocol gpu --model "$work/model" --config syn_human --preset carbon --device "$device" \
    --dtype "$dtype" --batch-size "$batch" "$@" 2>&1 | grep -E '^(\||MFU|measuring|MISMATCH|passes)' || true
}
echo "## changes at random places ($random_pairs pairs)"
bench --data-dir "$work/random" --pairs "$random_pairs"
echo "## changes in the last fifth of the window ($late_pairs pairs)"
bench --data-dir "$work/late" --pairs "$late_pairs" --rows "bare loop" \
  --rows "dna-hf share_prefix=False" --rows dna-hf --rows float32
echo "## lm_eval command line (its table needs typepy, which needs pytz)"
python3 -m lm_eval --model dna-hf --model_args "pretrained=$work/model,dtype=$dtype" \
  --tasks perturbation_custom --metadata "{\"data_dir\": \"$work/random\", \"config\": \"syn_human\", \"preset\": \"carbon\"}" \
  --device "$device" --batch_size "$batch" --limit 64 2>&1 | grep -E '^\|' || true
