"""The LoRA-adapted decoder backbone: loading, LoRA/QLoRA wrapping, last-token pooling.

Any Hugging Face decoder works; per-family LoRA module names map the paper's logical
targets (q, k, v, o) onto each architecture, Phi-3's fused ``qkv_proj`` included.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from dfil.config import BackboneConfig, ConfigError, LoraConfig
from dfil.model.embedded import resolve_model_id
from dfil.model.load_report import quiet_expected_lm_head

if TYPE_CHECKING:
    from transformers import PreTrainedModel

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

_SEPARATE = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj"}
#: model_type -> logical target -> module name. Families not listed use _SEPARATE.
_FUSED_QKV = {"phi3": {"qkv": "qkv_proj", "o": "o_proj"}}


def lora_target_modules(model_type: str, targets: Sequence[str]) -> list[str]:
    """Module names that realise logical LoRA ``targets`` (subset of q,k,v,o) for a family.

    Phi-3 fuses q, k and v into one ``qkv_proj``: LoRA there adapts all three at once, so
    the targets must name all of q, k, v or none of them (App. D.1: q,k,v,o for cross-task).
    """
    unknown = sorted(set(targets) - set(_SEPARATE))
    if unknown:
        raise ValueError(f"unknown LoRA targets {unknown}; expected a subset of q,k,v,o")
    if model_type in _FUSED_QKV:
        names = _FUSED_QKV[model_type]
        qkv = {"q", "k", "v"} & set(targets)
        if qkv and qkv != {"q", "k", "v"}:
            raise ValueError(
                f"{model_type} fuses q,k,v into {names['qkv']}: LoRA targets {sorted(targets)} "
                "would need to adapt part of a fused projection; use q,k,v together"
            )
        modules = [names["qkv"]] if qkv else []
        return modules + ([names["o"]] if "o" in targets else [])
    return [_SEPARATE[t] for t in ("q", "k", "v", "o") if t in targets]


def bnb_4bit_config():
    """QLoRA quantisation (App. C.1 gives only "4-bit"): NF4, bf16 compute, double quant."""
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch.bfloat16,
        bnb_4bit_use_double_quant=True,
    )


def check_arch(arch: Mapping, name: str = "") -> None:
    """Refuse an ``arch`` key its model type's transformers config class does not know.

    The config classes keep an unknown keyword as a stray attribute and build their
    defaults: a misspelled ``num_hiden_layers`` would silently give a 32-layer model. A key
    is known when the class declares it (its fields, ``__init__`` parameters or
    ``attribute_map``) or consumes it (a legacy name such as ``rope_theta``, folded into a
    declared field). :class:`ConfigError` names the key and the closest known one.
    """
    from transformers import PretrainedConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    where = f"backbone {name!r}: model.backbone.arch" if name else "model.backbone.arch"
    kwargs = dict(arch)
    model_type = kwargs.pop("model_type", None)
    if model_type not in CONFIG_MAPPING:
        close = difflib.get_close_matches(str(model_type), list(CONFIG_MAPPING.keys()), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{where}.model_type: unknown model type {model_type!r}{hint}")
    cls = CONFIG_MAPPING[model_type]
    known = set(getattr(cls, "attribute_map", {}) or {})
    for klass in (cls, PretrainedConfig):
        known |= set(inspect.signature(klass.__init__).parameters) - {"self", "kwargs"}
        if dataclasses.is_dataclass(klass):
            known |= {f.name for f in dataclasses.fields(klass)}
    stored = vars(cls(**kwargs))
    for key in kwargs:
        if key not in known and key in stored:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}.{key}: not a key of {cls.__name__} (model_type "
                              f"{model_type!r}){hint}")


def load_backbone(spec: BackboneConfig, causal_lm: bool = False) -> PreTrainedModel:
    """Load (or, with ``spec.arch``, randomly build) the decoder named by ``spec``.

    ``causal_lm`` keeps the LM head (zero-shot option scoring); otherwise the bare decoder
    returns hidden states. ``trust_remote_code`` is passed through only when the backbone
    entry enables it. Quantized backbones need CUDA (bitsandbytes 4-bit kernels).
    """
    # transformers' model classes are imported here: their import (~4 s on a 2-core CPU)
    # is only worth paying by a job that runs the backbone.
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    auto = AutoModelForCausalLM if causal_lm else AutoModel
    dtype = DTYPES[spec.dtype]
    if spec.arch is not None:
        check_arch(spec.arch, spec.name)
        arch = dict(spec.arch)
        config = AutoConfig.for_model(arch.pop("model_type"), **arch)
        torch.manual_seed(spec.init_seed)
        return auto.from_config(config, dtype=dtype,
                                attn_implementation=spec.attn_implementation)
    if not spec.model_id:
        raise ValueError(f"backbone {spec.name!r}: set model_id (hub id or local path) or arch")
    model_id = resolve_model_id(spec.model_id)
    kwargs = {"dtype": dtype, "trust_remote_code": spec.trust_remote_code,
              "attn_implementation": spec.attn_implementation}
    if spec.quantized:
        if not torch.cuda.is_available():
            raise RuntimeError(f"backbone {spec.name!r} is 4-bit quantized and needs CUDA")
        kwargs.update(quantization_config=bnb_4bit_config(), dtype=torch.bfloat16,
                      device_map={"": torch.cuda.current_device()})
    if causal_lm:
        return auto.from_pretrained(model_id, **kwargs)
    with quiet_expected_lm_head():  # the bare decoder never uses the checkpoint's LM head
        return auto.from_pretrained(model_id, **kwargs)


def load_tokenizer(spec: BackboneConfig):
    """The backbone's tokenizer, padding on the right with a pad token set.

    ``spec.tokenizer == "char"`` builds an offline character-level tokenizer (random-weight
    backbones in tests and benchmarks); otherwise the tokenizer of ``spec.tokenizer`` or
    ``spec.model_id``.
    """
    name = spec.tokenizer or spec.model_id
    if name == "char":
        tokenizer = char_tokenizer()
    elif not name:
        raise ValueError(f"backbone {spec.name!r}: no tokenizer (set tokenizer or model_id)")
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            resolve_model_id(name), trust_remote_code=spec.trust_remote_code
        )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    return tokenizer


CHAR_VOCAB = (" abcdefghijklmnopqrstuvwxyz0123456789.,:;!?()_\"'-%/+*=<>[]&#$@"
              "ABCDEFGHIJKLMNOPQRSTUVWXYZ\n")


def char_tokenizer():
    """Character-level fast tokenizer over :data:`CHAR_VOCAB` (ids 0-2: pad, bos, unk)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "<unk>": 2}
    for ch in CHAR_VOCAB:
        vocab.setdefault(ch, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="<s>")


def apply_lora(model: PreTrainedModel, lora: LoraConfig, quantized: bool = False):
    """Wrap ``model`` with peft LoRA on the family's modules for ``lora.targets``.

    Only the LoRA matrices are trainable afterwards; quantized models are first prepared
    for k-bit training (fp32 norms, input grads) as QLoRA prescribes. peft is imported
    here, not at module level: importing it loads bitsandbytes and torch's compiler stack
    (~9 s on a 2-core CPU), which a frozen-backbone job never needs.
    """
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model, prepare_model_for_kbit_training

    if quantized:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    config = PeftLoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora_target_modules(model.config.model_type, lora.targets),
        bias="none",
    )
    return get_peft_model(model, config)


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted over real tokens only, so left padding does not shift them.

    ``[B, T] -> [B, T]``; pad positions get 0.
    """
    return (attention_mask.long().cumsum(-1) - 1).clamp_min(0)


def last_token_pool(states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Hidden state of the last real (mask = 1) token. ``[B, T, d], [B, T] -> [B, d]``.

    Works for left and right padding alike: the index is the last position whose mask is 1.
    """
    positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    last = (attention_mask.long() * (positions + 1)).argmax(dim=-1)
    return states[torch.arange(states.shape[0], device=states.device), last]


def hidden_size(model: PreTrainedModel) -> int:
    return _config_hidden_size(model.config)


def _config_hidden_size(config) -> int:
    return getattr(config, "hidden_size", None) or config.get_text_config().hidden_size


def backbone_hidden_size(spec: BackboneConfig) -> int:
    """``d`` of the backbone ``spec`` names, read from its config without loading weights."""
    if spec.arch is not None:
        return int(spec.arch["hidden_size"])
    if not spec.model_id:
        raise ValueError(f"backbone {spec.name!r}: set model_id (hub id or local path) or arch")
    local = Path(resolve_model_id(spec.model_id)) / "config.json"
    if local.is_file():  # a plain JSON read spares a job transformers' import (~2.5 s)
        raw = json.loads(local.read_text())
        d = raw.get("hidden_size") or raw.get("text_config", {}).get("hidden_size")
        if isinstance(d, int):
            return d
    from transformers import AutoConfig

    return _config_hidden_size(AutoConfig.from_pretrained(
        resolve_model_id(spec.model_id), trust_remote_code=spec.trust_remote_code))
