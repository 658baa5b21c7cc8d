#!/usr/bin/env bash
# What a lent GPU machine lacks for the package, `pytest -m gpu` and the GPU benchmarks,
# gathered here into .gpu/ (git-ignored, ~46 MB, under a call's 64 MiB carry). The image
# there has Python 3.12 and the packages workflow/gpu-image.txt lists (torch 2.11 with
# CUDA 13.0 among them), and nothing can be fetched from it. Every other runtime
# dependency travels as a wheel for CPython 3.12 on manylinux x86_64 (or a pure-Python
# one, built here when the package publishes only a source archive), at the version this
# checkout's .venv has; bitsandbytes travels trimmed to its Python files, its metadata and
# its CUDA 13.0 library (the whole wheel, with a library per CUDA version, is over the
# carry limit). tests/test_gpu_kit.py checks that each of pyproject.toml's dependencies,
# and each dependency of a carried package, is carried here or listed in gpu-image.txt.
#
# Here:    bash workflow/gpu-carry.sh
# There:   carry [".gpu"], then `bash workflow/gpu-check.sh` (the whole device check), or
#          start a command with `source workflow/gpu-env.sh;`
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python

# Carried as wheels, one distribution name each (versions from .venv).
CARRY=(
    transformers peft              # newer than the image's
    datasets dill multiprocess
    itables
    gguf
    jsonschema jsonschema-specifications referencing rpds-py
    pydantic pydantic-core annotated-types typing-inspection
    snakemake snakemake-interface-common snakemake-interface-executor-plugins
    snakemake-interface-logger-plugins snakemake-interface-report-plugins
    snakemake-interface-scheduler-plugins snakemake-interface-storage-plugins
    argparse-dataclass conda-inject configargparse connection-pool docutils dpath
    fastjsonschema gitdb gitpython greenlet humanfriendly immutables jupyter-core
    nbformat platformdirs pulp smart-open smmap sqlalchemy sqlmodel tenacity throttler
    traitlets yte
    packaging                      # snakemake asks <26; the image has 26.3
    coral-pytorch                  # dev: tests/model/test_losses.py, collected by -m gpu
)

rm -rf .gpu
mkdir -p .gpu/whl .gpu/bnb
mapfile -t pins < <($py -c 'import sys
from importlib.metadata import version
print("\n".join(f"{n}=={version(n)}" for n in sys.argv[1:]))' "${CARRY[@]}")
# --no-deps: each one is named above; a package with no wheel comes as its source archive
$py -m pip download --quiet --no-deps --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .gpu/whl "${pins[@]}"
for sdist in .gpu/whl/*.tar.gz .gpu/whl/*.zip; do
    [ -e "$sdist" ] || continue
    $py -m pip wheel --quiet --no-deps -w .gpu/whl "$sdist"
    rm "$sdist"
done
tags='-(py3|py2\.py3|py312|cp312)-(none|cp312)-(any|manylinux[0-9a-z_.]*x86_64)\.whl$'
if ls .gpu/whl | grep -v -E -e "$tags" -e '-cp3[0-9]+-abi3-manylinux[0-9a-z_.]*x86_64\.whl$'
then
    echo "gpu-carry: the wheels above would not install on CPython 3.12, x86_64" >&2
    exit 1
fi

site=$($py -c "import os, bitsandbytes as b; print(os.path.dirname(os.path.dirname(b.__file__)))" \
    2>/dev/null)
meta=bitsandbytes-$($py -c 'from importlib.metadata import version as v; print(v("bitsandbytes"))')
(cd "$site" && find bitsandbytes "$meta.dist-info" -name "*.py" -o -name py.typed \
    -o -name libbitsandbytes_cuda130.so -o -name METADATA -o -name top_level.txt) |
    while read -r f; do
        mkdir -p ".gpu/bnb/$(dirname "$f")" && cp "$site/$f" ".gpu/bnb/$f"
    done
echo "gpu-carry: $(ls .gpu/whl | wc -l) wheels and bitsandbytes (trimmed) in .gpu/"
du -sh .gpu
