#!/usr/bin/env bash
# Install what the project needs into .venv (CPU torch 2.13.0, the package with its dev
# extras) and, where it can, a TeX distribution for tables.pdf. Used by
# workflow/quickstart.sh and .ci/run; on a GPU cluster see docs/cluster.md, "Running on your
# cluster" (the CUDA torch wheel replaces the CPU one).
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off

# TeX only renders tables.pdf: without pdflatex and without root (a cluster's login node)
# everything else is installed and the PDF step is skipped, saying how to get TeX.
if ! command -v pdflatex >/dev/null 2>&1; then
    tex=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended lmodern)
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${tex[@]}" >/dev/null
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n apt-get update -qq && sudo -n DEBIAN_FRONTEND=noninteractive apt-get \
            install -y -qq --no-install-recommends "${tex[@]}" >/dev/null
    else
        echo "setup: pdflatex is missing and this user cannot apt-get: installing" \
            "everything but TeX; tables.pdf will be skipped (the .tex tables, diff and" \
            "figures are still built). For the PDF: \`module load texlive\` where the" \
            "site has it, TeX Live's user install (https://tug.org/texlive/quickinstall.html," \
            "no root needed), or build the report where TeX is." >&2
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# shellcheck disable=SC1091
source .venv/bin/activate
python -m pip install --quiet --upgrade pip
# The CPU build of torch 2.13.0 first, so nothing below pulls a CUDA build.
python -m pip install --quiet torch==2.13.0
# Every other dependency at the version the project is tested with (a resolver's newer
# release has broken the SLURM executor plugin's settings before).
python -m pip install --quiet -c workflow/constraints.txt -e ".[dev]"
