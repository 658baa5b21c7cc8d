"""LoRA on a decoder: the paper's logical targets (q, k, v, o) per family, and QLoRA's
4-bit preparation.

Supported families (tested with tiny random models): separate ``q_proj``/``k_proj``/
``v_proj``/``o_proj`` (Llama, Qwen2, Mistral, Gemma/Gemma-2 and most recent decoders), and
the fused or renamed projections of :data:`FAMILIES` (Phi-3, GPT-NeoX, Falcon, BLOOM,
GPT-2, Phi, OPT, GPT-J). peft is imported inside the functions: importing it loads
torch's compiler stack (~9 s on a 2-core CPU with bitsandbytes), which a frozen-backbone
job never needs; and it loads bitsandbytes only for a 4-bit backbone (:func:`apply_lora`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence

import torch
from torch import nn

from dfil.config.cell import LoraConfig
from dfil.util.errors import ConfigError

_SEPARATE = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj"}
#: model_type -> logical target -> module name, for families whose names differ from
#: _SEPARATE. "qkv" is a fused projection: LoRA on it adapts q, k and v together.
FAMILIES = {
    "phi3": {"qkv": "qkv_proj", "o": "o_proj"},
    "gpt_neox": {"qkv": "query_key_value", "o": "dense"},
    "falcon": {"qkv": "query_key_value", "o": "dense"},
    "bloom": {"qkv": "query_key_value", "o": "dense"},
    "gpt2": {"qkv": "c_attn", "o": "attn.c_proj"},  # mlp.c_proj is not attention
    "phi": {**_SEPARATE, "o": "dense"},
    "opt": {**_SEPARATE, "o": "out_proj"},
    "gptj": {**_SEPARATE, "o": "out_proj"},
}


def lora_target_modules(model_type: str, targets: Sequence[str]) -> list[str]:
    """Module names that realise logical LoRA ``targets`` (subset of q,k,v,o) for a family.

    A family that fuses q, k and v into one projection (Phi-3's ``qkv_proj``, GPT-NeoX's
    ``query_key_value``) adapts all three at once, so the targets must name all of q, k,
    v or none of them (App. D.1: q,k,v,o for cross-task).
    """
    unknown = sorted(set(targets) - set(_SEPARATE))
    if unknown:
        raise ValueError(f"unknown LoRA targets {unknown}; expected a subset of q,k,v,o")
    names = FAMILIES.get(model_type, _SEPARATE)
    if "qkv" in names:
        qkv = {"q", "k", "v"} & set(targets)
        if qkv and qkv != {"q", "k", "v"}:
            raise ConfigError(
                f"model.lora.targets: {model_type} fuses q,k,v into {names['qkv']}: LoRA "
                f"targets {sorted(targets)} would need to adapt part of a fused projection; "
                "use q,k,v together"
            )
        modules = [names["qkv"]] if qkv else []
        return modules + ([names["o"]] if "o" in targets else [])
    return [names[t] for t in ("q", "k", "v", "o") if t in targets]


def apply_lora(model, lora: LoraConfig, quantized: bool = False):
    """Wrap ``model`` with peft LoRA on the family's modules for ``lora.targets``.

    Only the LoRA matrices are trainable afterwards; a quantized model is first prepared
    by :func:`prepare_kbit`.
    """
    with contextlib.nullcontext() if quantized else _without_bitsandbytes():
        from peft import get_peft_model

        if quantized:
            model = prepare_kbit(model)
        return get_peft_model(model, peft_config(model.config.model_type, lora))


def peft_config(model_type: str, lora: LoraConfig):
    """peft's LoRA config for ``lora`` on a ``model_type`` decoder: what training wraps
    the model with and what a saved adapter's ``adapter_config.json`` records."""
    with _without_bitsandbytes():
        from peft import LoraConfig as PeftLoraConfig

    return PeftLoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora_target_modules(model_type, lora.targets),
        fan_in_fan_out=model_type == "gpt2",  # GPT-2's Conv1D stores W^T
        bias="none",
    )


@contextlib.contextmanager
def _without_bitsandbytes():
    """peft as if bitsandbytes were not installed, for a backbone that is not 4-bit: peft
    imports it whenever it is installed (~1 s of CPU, and on a CPU with AVX512-BF16 a
    warning about a missing kernels package), though only 4-bit layers use it.

    A ``None`` in ``sys.modules`` makes its import fail; peft's cached answers to "is
    bitsandbytes available" are cleared afterwards, so a 4-bit model later in the same
    process gets it."""
    if "bitsandbytes" in sys.modules:
        yield
        return
    sys.modules["bitsandbytes"] = None
    try:
        yield
    finally:
        del sys.modules["bitsandbytes"]
        checks = sys.modules.get("peft.import_utils")
        for name in ("is_bnb_available", "is_bnb_4bit_available"):
            getattr(getattr(checks, name, None), "cache_clear", lambda: None)()


def is_norm(module: nn.Module) -> bool:
    """LayerNorm and the families' RMSNorm/LayerNorm classes (by name: each family has its
    own, e.g. ``LlamaRMSNorm``)."""
    name = type(module).__name__
    return isinstance(module, nn.LayerNorm) or name.endswith(("RMSNorm", "LayerNorm"))


def prepare_kbit(model):
    """QLoRA's preparation of a 4-bit model (note R-qlora), without upcasting it.

    Every base parameter is frozen; the norms run in float32 (weights and input) for
    stable statistics and hand their output back in their input's dtype, so the
    embeddings and the residual stream stay in the model's dtype (bf16). peft's
    ``prepare_model_for_kbit_training`` instead casts every non-quantised parameter to
    float32, embeddings included (~5 GB at 72B), and the residual stream follows. The
    heads are float32 on their own (:func:`dfil.model.dual_path.build_model`). Input
    gradients are not needed: gradient checkpointing, when asked, is non-reentrant.
    """
    model.requires_grad_(False)
    for module in model.modules():
        if is_norm(module) and not getattr(module, "_dfil_kbit", False):
            module.float()
            module.register_forward_pre_hook(_input_to_float32)
            module.register_forward_hook(_output_to_input_dtype)
            module._dfil_kbit = True
    return model


def _input_to_float32(module, args):
    if args and torch.is_tensor(args[0]):
        module._dfil_dtype = args[0].dtype
        return (args[0].float(), *args[1:])
    return None


def _output_to_input_dtype(module, args, output):
    dtype = getattr(module, "_dfil_dtype", None)
    return output.to(dtype) if dtype is not None and torch.is_tensor(output) else output


def bnb_4bit_config():
    """QLoRA quantisation (App. C.1 gives only "4-bit"): NF4, bf16 compute, double quant."""
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch.bfloat16,
        bnb_4bit_use_double_quant=True,
    )
