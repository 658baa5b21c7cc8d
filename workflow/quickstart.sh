#!/usr/bin/env bash
# The embedded default end to end: install, then every table of the paper from real
# training runs of SmolLM2-135M on synthetic FRoG-format data, on the CPU, offline.
# Output: paper_tables/embedded/ (29 .tex, tables.pdf, diff.md, diff.html, figures/).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1

bash workflow/setup.sh
# shellcheck disable=SC1091
source .venv/bin/activate
snakemake all_tables --cores "${CORES:-2}" "$@"
echo "tables: paper_tables/embedded/tables.pdf  diff: paper_tables/embedded/diff.md"
