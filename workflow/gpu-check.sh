#!/usr/bin/env bash
# The whole device check, in one call on a lent GPU, first thing (about 8 minutes on an
# H100; every step bounded by `timeout`, all of them by BUDGET seconds, so the summary
# comes back inside a 600 s call):
#   kit        source workflow/gpu-env.sh: the carried wheels, every import checked
#   tests      pytest -m gpu, each test in its own bounded pytest (a failure's traceback
#              is kept even when a later test runs out of time), the quick ones first
#   bench-b8   benchmarks/train_throughput.py on qwen2.5-7b (random weights), batch 8 a
#              seed: the project's step, a pack of 3 seeds and the plain loop
#   bench-pack6  the same, a pack of 6 seeds against the project's step
#   qlora-pack benchmarks/qlora_memory.py: a pack of 3 seeds over a 4-bit Qwen2.5-72B
#              shape cut to 2 and 4 layers, peak memory and tokens/s
#   cell-*     one dfil cell on the qwen2.5-7b architecture: random weights drawn on the
#              GPU and saved, then loaded by the cell through from_pretrained as a
#              cluster cell loads its hub weights (drawing 7B weights on the host takes
#              minutes); the built-in character tokenizer, a synthetic FRoG-like set;
#              dfil train, then dfil evaluate
#   resume     the kill-and-resume gpu tests, last: three trainings each
# A failed step does not stop the next. Each step's log, the cell's metrics.json and
# summary.txt (printed last) go to $OUT: 9 files, what the device tool brings back.
#
# Here:   bash workflow/gpu-carry.sh; then the device tool's run with carry [".gpu"],
#         timeout_s 600 and the command `bash workflow/gpu-check.sh`
# Dry run here (CPU, tiny-llama, .venv's python, no kit installed, a minute or two):
#         bash workflow/gpu-check.sh --cpu      (logs in $OUT, default /tmp/gpu-check)
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
BUDGET=${BUDGET:-555}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu=
if [ "${1:-}" = --cpu ]; then
    cpu=1
    export PATH=$PWD/.venv/bin:$PATH
    arch=tiny-llama dtype=float32 maxlen=128
    bench=(--device cpu --warmup 6 --rounds 2 --steps 6)
    set -- --check-only
else
    arch=qwen2.5-7b dtype=bfloat16 maxlen=256
    bench=(--warmup 6 --rounds 3 --steps 12)
    set --
fi
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
summary=()

note() {  # note NAME RC START: one summary line
    local status=ok
    case $2 in 0) ;; 124 | 137) status="timed out" ;; skip) status="skipped: out of time" ;;
        cpu) status="skipped: needs CUDA" ;;
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

gpu_tests() {  # gpu_tests NAME SECONDS-EACH SELECT: the selected gpu tests, one pytest each
    local name=$1 each=$2 select=$3 start=$SECONDS failed=0 id rc left
    python3 -m pytest -m gpu --collect-only -q -p no:cacheprovider 2>/dev/null |
        grep '::' | grep $select >"$work/$name.ids"
    for id in $(cat "$work/$name.ids"); do
        left=$((BUDGET - SECONDS))
        [ "$left" -lt 20 ] && { echo "$id: not run, out of time" >>"$OUT/pytest.log"; failed=1; continue; }
        echo "== $id" >>"$OUT/pytest.log"
        timeout -k 10 $((each < left ? each : left)) python3 -m pytest -q -rs --tb=short \
            -p no:cacheprovider "$id" >>"$OUT/pytest.log" 2>&1
        rc=$?
        [ "$rc" -ne 0 ] && failed=$rc
        echo "$id: rc $rc" | tee -a "$OUT/pytest.log" >>"$work/tests.txt"
    done
    note "$name" "$failed" "$start"
}

: >"$OUT/pytest.log"
gpu_tests tests 90 '-v test_killed_cuda_cell_resumes'
step bench-b8 120 python3 benchmarks/train_throughput.py --arch "$arch" --batch 8 \
    --paths dfil,pack,plain --pack 3 "${bench[@]}"
step bench-pack6 90 python3 benchmarks/train_throughput.py --arch "$arch" --batch 8 \
    --paths dfil,pack --pack 6 "${bench[@]}"
if [ -n "$cpu" ]; then
    note qlora-pack cpu "$SECONDS"
else
    step qlora-pack 100 python3 benchmarks/qlora_memory.py --arch qwen2.5-72b --layers 2,4 \
        --steps 4 --pack 3
fi

python3 -m dfil.cli synth-frog --out "$work/frog" --n-easy 400 --n-hard 120 >/dev/null 2>&1
step cell-build 120 python3 - "$work" "$arch" "$dtype" "$maxlen" <<'PY'
import sys
import time
from pathlib import Path

import torch
import yaml
from transformers import AutoConfig, AutoModel

from dfil.cost.archs import arch

work, name, dtype, maxlen = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
shape = arch(name)
shape["max_position_embeddings"] = max(shape.get("max_position_embeddings", 0), 512)
started = time.perf_counter()
config = AutoConfig.for_model(shape.pop("model_type"), **shape)
with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
    model = AutoModel.from_config(config, dtype=getattr(torch, dtype))
model.save_pretrained(work / "backbone")
print(f"{name}: random weights drawn and saved in {time.perf_counter() - started:.0f} s")
cell = {"name": "gpu-check",
        "model": {"method": "dfil", "lora": {"r": 16, "alpha": 32},
                  "backbone": {"name": name, "model_id": str(work / "backbone"),
                               "tokenizer": "char", "dtype": dtype}},
        "data": {"source": str(work / "frog"), "max_length": maxlen, "standin": True},
        "train": {"epochs": 1, "batch_size": 8, "seed": 0},
        "eval": {"grid_sizes": [1000], "probes": False}}
(work / "cell.yaml").write_text(yaml.safe_dump(cell))
PY
step cell-train 150 python3 -m dfil.cli train --cell "$work/cell.yaml" --out "$work/run"
step cell-eval 100 python3 -m dfil.cli evaluate --run "$work/run"
[ -f "$work/run/metrics.json" ] && cp "$work/run/metrics.json" "$OUT/cell-metrics.json"
cat "$OUT/cell-build.log" "$OUT/cell-train.log" >"$work/cell.log" 2>/dev/null
mv "$work/cell.log" "$OUT/cell-train.log" && rm -f "$OUT/cell-build.log"
gpu_tests resume 150 test_killed_cuda_cell_resumes

{
    echo "gpu-check on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null ||
        echo CPU), arch $arch, ${SECONDS}s in all"
    printf '%s\n' "${summary[@]}"
    for bench in bench-b8 bench-pack6; do
        echo "-- $bench"
        grep -E 'tok/s|dfil / plain|pack of' "$OUT/$bench.log" 2>/dev/null
    done
    echo "-- qlora-pack"
    grep -E 'EXTRAPOLATED from|tokens_per_s' "$OUT/qlora-pack.log" 2>/dev/null
    echo "-- gpu tests"
    cat "$work/tests.txt" 2>/dev/null
    echo "-- cell"
    grep -E 'random weights drawn|^attempt .* epoch' "$OUT/cell-train.log" 2>/dev/null | tail -n 4
    grep -E '_acc=' "$OUT/cell-eval.log" 2>/dev/null
} >"$OUT/summary.txt"
echo
cat "$OUT/summary.txt"
