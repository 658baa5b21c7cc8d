#!/usr/bin/env bash
# The embedded default end to end: install, then every table of the paper from real
# training runs of SmolLM2-135M on synthetic FRoG-format data, on the CPU, offline.
# Output: paper_tables/embedded/ (index.html, 29 .tex, tables.pdf where pdflatex is, diff.md,
# diff.html, figures/).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1

bash workflow/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate
snakemake all_tables --cores "${CORES:-2}" "$@"
echo "report: paper_tables/embedded/index.html  diff: paper_tables/embedded/diff.md"
