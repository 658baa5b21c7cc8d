#!/usr/bin/env bash
# Install what the project needs into .venv (CPU torch 2.13.0, the package with its dev
# extras) and a TeX distribution for tables.pdf. Used by workflow/quickstart.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off

if ! command -v pdflatex >/dev/null 2>&1; then
    tex=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended lmodern)
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${tex[@]}" >/dev/null
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y \
            -qq --no-install-recommends "${tex[@]}" >/dev/null
    else
        echo "pdflatex is missing and this user cannot apt-get: install ${tex[*]}" >&2
        exit 1
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# shellcheck disable=SC1091
source .venv/bin/activate
python -m pip install --quiet --upgrade pip
# The CPU build of torch 2.13.0 first, so nothing below pulls a CUDA build.
python -m pip install --quiet torch==2.13.0
python -m pip install --quiet -e ".[dev]"
