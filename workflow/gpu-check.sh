#!/usr/bin/env bash
# The whole device check, in one call on a lent GPU, first thing (about 7 minutes on an
# H100; every step bounded by `timeout`, all of them by BUDGET seconds, so the summary
# comes back inside a 600 s call):
#   kit        source workflow/gpu-env.sh: the carried wheels, every import checked
#   pytest     pytest -m gpu
#   bench-b8   benchmarks/train_throughput.py on qwen2.5-7b (random weights), the
#   bench-b32  project's step against the plain loop, batch 8 and 32
#   cell-*     one dfil cell on the qwen2.5-7b architecture (random weights, the
#              built-in character tokenizer, a synthetic FRoG-like set): dfil train, then
#              dfil evaluate
# A failed step does not stop the next. Each step's log, the cell's metrics.json and
# summary.txt (printed last) go to $OUT: 8 files, what the device tool brings back.
#
# Here:   bash workflow/gpu-carry.sh; then the device tool's run with carry [".gpu"],
#         timeout_s 600 and the command `bash workflow/gpu-check.sh`
# Dry run here (CPU, tiny-llama, .venv's python, no kit installed, a minute or two):
#         bash workflow/gpu-check.sh --cpu      (logs in $OUT, default /tmp/gpu-check)
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
BUDGET=${BUDGET:-540}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = --cpu ]; then
    export PATH=$PWD/.venv/bin:$PATH
    arch=tiny-llama dtype=float32 maxlen=128
    bench=(--device cpu --warmup 1 --rounds 2 --steps 2)
    set -- --check-only
else
    arch=qwen2.5-7b dtype=bfloat16 maxlen=256
    bench=(--warmup 4 --rounds 3 --steps 8)
    set --
fi
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
summary=()

note() {  # note NAME RC START: one summary line
    local status=ok
    case $2 in 0) ;; 124 | 137) status="timed out" ;; skip) status="skipped: out of time" ;;
        *) status=failed ;; esac
    summary+=("$(printf '%-10s %-22s rc %-4s %4ss' "$1" "$status" "$2" $((SECONDS - $3)))")
    echo "== $1: $status (rc $2) after $((SECONDS - $3))s"
}

step() {  # step NAME SECONDS COMMAND...: COMMAND bounded by SECONDS and BUDGET
    local name=$1 limit=$2 start=$SECONDS rc left=$((BUDGET - SECONDS))
    shift 2
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 20 ]; then
        note "$name" skip "$start"
        return
    fi
    echo "== $name (at most ${limit}s): $*"
    timeout -k 10 "$limit" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    tail -n 4 "$OUT/$name.log"
    note "$name" "$rc" "$start"
}

start=$SECONDS
{
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv || true
    # shellcheck source=workflow/gpu-env.sh
    source workflow/gpu-env.sh "$@"
} >"$OUT/kit.log" 2>&1
rc=$?
tail -n 4 "$OUT/kit.log"
note kit "$rc" "$start"

step pytest 150 python3 -m pytest -m gpu -q -p no:cacheprovider
for batch in 8 32; do
    step "bench-b$batch" $((batch == 8 ? 90 : 120)) python3 benchmarks/train_throughput.py \
        --arch "$arch" --batch "$batch" --paths dfil,plain "${bench[@]}"
done

python3 -m dfil.cli synth-frog --out "$work/frog" --n-easy 400 --n-hard 120 >/dev/null 2>&1
python3 - "$work" "$arch" "$dtype" "$maxlen" <<'PY' || echo "gpu-check: no cell written"
import sys
from pathlib import Path

import yaml

from dfil.cost.archs import arch

work, name, dtype, maxlen = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
shape = arch(name)
shape["max_position_embeddings"] = max(shape.get("max_position_embeddings", 0), 512)
cell = {"name": "gpu-check",
        "model": {"method": "dfil", "lora": {"r": 16, "alpha": 32},
                  "backbone": {"name": name, "arch": shape, "tokenizer": "char",
                               "dtype": dtype}},
        "data": {"source": str(work / "frog"), "max_length": maxlen, "standin": True},
        "train": {"epochs": 1, "batch_size": 8, "seed": 0},
        "eval": {"grid_sizes": [1000], "probes": False}}
(work / "cell.yaml").write_text(yaml.safe_dump(cell))
PY
step cell-train 200 python3 -m dfil.cli train --cell "$work/cell.yaml" --out "$work/run"
step cell-eval 150 python3 -m dfil.cli evaluate --run "$work/run"
[ -f "$work/run/metrics.json" ] && cp "$work/run/metrics.json" "$OUT/cell-metrics.json"

{
    echo "gpu-check on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null ||
        echo CPU), arch $arch, ${SECONDS}s in all"
    printf '%s\n' "${summary[@]}"
    for batch in 8 32; do
        echo "-- bench batch $batch"
        grep -E 'tok/s|dfil / plain' "$OUT/bench-b$batch.log" 2>/dev/null
    done
    echo "-- cell"
    grep -E '^attempt .* epoch' "$OUT/cell-train.log" 2>/dev/null | tail -n 4
    grep -E '_acc=' "$OUT/cell-eval.log" 2>/dev/null
} >"$OUT/summary.txt"
echo
cat "$OUT/summary.txt"
