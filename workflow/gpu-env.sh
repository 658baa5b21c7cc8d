# Sourced at the start of a command on a lent GPU machine (see workflow/gpu-carry.sh):
# installs the carried wheels into /tmp/site and puts them, the trimmed bitsandbytes and
# this checkout's src/ on the path of the image's python3.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .gpu/whl/*.whl || return 1
export PYTHONPATH="/tmp/site:$PWD/.gpu/bnb:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export DFIL_PROGRESS=0 PYTHONUNBUFFERED=1
python3 -c "import torch, transformers, peft, bitsandbytes, jsonschema, dfil; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__, 'peft', peft.__version__, 'bnb', bitsandbytes.__version__)"
