#!/usr/bin/env bash
# Collect, on a machine with network, every wheel scripts/device_check.sh installs on a GPU
# machine that has python3 3.12, torch, transformers, accelerate, pandas, pyarrow, scipy,
# scikit-learn and matplotlib but no network: lm-eval and what it imports, this package's own
# few pure-Python needs, and this package's wheel. About 21 MB.
# Usage: bash scripts/device_wheels.sh DEST [PYTHON_VERSION]   (default 3.12)
# pytz is there because lm-eval prints its results table through typepy, which needs it.
set -euo pipefail
dest=${1:?usage: device_wheels.sh DEST [PYTHON_VERSION]}
version=${2:-3.12}
mkdir -p "$dest"
binary=(lm_eval==0.4.13 datasets evaluate dill multiprocess jsonlines pytablewriter DataProperty
        mbstrdecoder pathvalidate tabledata tcolorpy typepy chardet pytz more-itertools zstandard
        numexpr tqdm-multiprocess pyfaidx python_codon_tables memelite)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$version" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
  -d "$dest" "${binary[@]}"
# published as source only: built here into pure-Python wheels
python3 -m pip wheel -q --no-deps -w "$dest" sqlitedict word2number rouge_score nltk dinuc_shuf
python3 -m pip wheel -q --no-deps -w "$dest" "$(dirname "$0")/.."
ls "$dest" | wc -l | xargs echo "wheels in $dest:"
