# Sourced at the start of a command on a lent GPU machine (see workflow/gpu-carry.sh):
# installs the carried wheels into /tmp/site and puts them, the trimmed bitsandbytes and
# this checkout's src/ on the path of the image's python3; then checks, in well under a
# minute, that what the package, `pytest -m gpu` and benchmarks/train_throughput.py
# import is there (workflow/gpu_kit.py, the tests' collection, the benchmark's --help),
# and returns 1 saying what is missing otherwise.
# Here, the checks alone on .venv: PATH=$PWD/.venv/bin:$PATH; source workflow/gpu-env.sh --check-only
if [ "${1:-}" != --check-only ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .gpu/whl/*.whl || return 1
    export PYTHONPATH="/tmp/site:$PWD/.gpu/bnb:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
    _kit_site=(--site /tmp/site)
else
    _kit_site=()
fi
export DFIL_PROGRESS=0 PYTHONUNBUFFERED=1
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__,
      'cuda', torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else
      'no GPU')" || return 1
timeout 300 python3 workflow/gpu_kit.py "${_kit_site[@]}" || return 1
timeout 120 python3 -m pytest -m gpu --collect-only -q -p no:cacheprovider >/tmp/gpu-collect.log \
    2>&1 || { tail -n 30 /tmp/gpu-collect.log; echo "gpu-env: pytest -m gpu cannot collect"; return 1; }
tail -n 1 /tmp/gpu-collect.log
timeout 120 python3 benchmarks/train_throughput.py --help >/dev/null \
    || { echo "gpu-env: benchmarks/train_throughput.py --help fails"; return 1; }
echo "gpu-env: ok"
