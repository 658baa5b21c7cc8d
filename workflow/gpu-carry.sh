#!/usr/bin/env bash
# What a lent GPU machine lacks for `pytest -m gpu` and the GPU benchmarks, gathered here
# into .gpu/ (git-ignored, ~20 MB, under a call's 64 MiB carry): the image there has
# Python 3.12, torch 2.11 (CUDA 13.0) and transformers 5.17 but no jsonschema or
# bitsandbytes, and nothing can be fetched from it. Wheels for transformers/peft at the
# versions this project is tested with, jsonschema and its dependencies, and bitsandbytes
# trimmed to its Python files and CUDA 13.0 library (the whole wheel, with a library per
# CUDA version, is over the carry limit).
#
# Here:        bash workflow/gpu-carry.sh
# There:       carry [".gpu"], and start the command with `source workflow/gpu-env.sh;`
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu
mkdir -p .gpu/whl .gpu/bnb
.venv/bin/python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .gpu/whl \
    transformers==5.23.0 peft==0.21.2 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
    referencing==0.37.0 rpds-py==2026.9.1
bnb=$(.venv/bin/python -c "import bitsandbytes, os; print(os.path.dirname(bitsandbytes.__file__))")
(cd "$bnb/.." && find bitsandbytes -name "*.py" -o -name "libbitsandbytes_cuda130.so" \
    -o -name "py.typed") | while read -r f; do
    mkdir -p ".gpu/bnb/$(dirname "$f")" && cp "$bnb/../$f" ".gpu/bnb/$f"
done
du -sh .gpu
