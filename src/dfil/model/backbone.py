"""The decoder backbone: loading (random, local, embedded, or a pinned hub backbone from
the fetched cache; 4-bit), its attention implementation, the tokenizer, and last-token
pooling.

Which decoder families are supported and how LoRA maps onto them: :mod:`dfil.model.lora`;
which attention each model gets: :mod:`dfil.model.attention`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from dfil.config.cell import BackboneConfig
from dfil.hub import local_model
from dfil.model.attention import choose as choose_attention
from dfil.model.embedded import resolve_model_id
from dfil.model.load_report import quiet_expected_lm_head
from dfil.util.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from transformers import PreTrainedModel

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


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
        hint = did_you_mean(model_type, CONFIG_MAPPING.keys())
        raise ConfigError(f"{where}.model_type: unknown model type {model_type!r} ({hint}"
                          "a model_type of transformers' CONFIG_MAPPING)")
    cls = CONFIG_MAPPING[model_type]
    known = set(getattr(cls, "attribute_map", {}) or {})
    for klass in (cls, PretrainedConfig):
        known |= set(inspect.signature(klass.__init__).parameters) - {"self", "kwargs"}
        if dataclasses.is_dataclass(klass):
            known |= {f.name for f in dataclasses.fields(klass)}
    stored = vars(cls(**kwargs))
    for key in kwargs:
        if key not in known and key in stored:
            hint = did_you_mean(key, sorted(known))
            raise ConfigError(f"{where}.{key}: not a key of {cls.__name__} ({hint}model_type "
                              f"{model_type!r})")


def model_path(spec: BackboneConfig) -> str:
    """Where ``spec``'s weights are read from: a pinned hub backbone's fetched snapshot
    (offline, :func:`dfil.hub.local_model`), an embedded backbone's converted directory,
    else ``model_id`` as given (a local path, or a hub id for transformers to resolve)."""
    if spec.revision:
        return local_model(spec.model_id, spec.revision, spec.name)
    return resolve_model_id(spec.model_id)


def load_backbone(spec: BackboneConfig, causal_lm: bool = False) -> PreTrainedModel:
    """Load (or, with ``spec.arch``, randomly build) the decoder named by ``spec``.

    ``causal_lm`` keeps the LM head (zero-shot option scoring); otherwise the bare decoder
    returns hidden states. ``trust_remote_code`` is passed through only when the backbone
    entry enables it. Quantized backbones need CUDA (bitsandbytes 4-bit kernels).
    """
    # transformers' model classes are imported here: their import (~4 s on a 2-core CPU)
    # is only worth paying by a job that runs the backbone.
    from transformers import AutoModel, AutoModelForCausalLM

    auto = AutoModelForCausalLM if causal_lm else AutoModel
    dtype = DTYPES[spec.dtype]
    if spec.arch is not None:
        check_arch(spec.arch, spec.name)
        config = _transformers_config(spec)
        torch.manual_seed(spec.init_seed)
        model = auto.from_config(config, dtype=dtype, attn_implementation=choose_attention(
            spec.attn_implementation, _model_class(auto, config)))
        return _checkpointing(model, spec)
    if not spec.model_id:
        raise ConfigError(f"model.backbone: backbone {spec.name!r} needs model_id (hub id or "
                          "local path) or arch")
    if spec.quantized and not torch.cuda.is_available():
        raise ConfigError(f"model.backbone.quantized: backbone {spec.name!r} is 4-bit "
                          "quantized and needs CUDA, which this machine does not have")
    model_id = model_path(spec)
    config = _transformers_config(spec, model_id)
    kwargs = {"dtype": dtype, "trust_remote_code": spec.trust_remote_code,
              "attn_implementation": choose_attention(spec.attn_implementation,
                                                      _model_class(auto, config))}
    if spec.quantized:
        from dfil.model.lora import bnb_4bit_config

        kwargs.update(quantization_config=bnb_4bit_config(), dtype=torch.bfloat16,
                      device_map={"": torch.cuda.current_device()})
    if causal_lm:
        model = auto.from_pretrained(model_id, config=config, **kwargs)
    else:
        with quiet_expected_lm_head():  # the bare decoder never uses the checkpoint's LM head
            model = auto.from_pretrained(model_id, config=config, **kwargs)
    return _checkpointing(model, spec)


def _model_class(auto, config):
    """The class ``auto`` builds for ``config``; None when it is not in transformers'
    tables (remote code): transformers then chooses the attention itself."""
    try:
        return auto._model_mapping[type(config)]
    except (KeyError, AttributeError):
        return None


def _checkpointing(model, spec: BackboneConfig):
    if spec.gradient_checkpointing:
        kwargs = {"use_reentrant": False}  # no input grads needed, dropout replayed
        if hasattr(model, "activation_checkpointing_enable"):  # transformers >= 5.x
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    return model


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
        raise ConfigError(f"model.backbone: backbone {spec.name!r} has no tokenizer (set "
                          "tokenizer or model_id)")
    else:
        from transformers import AutoTokenizer

        where = model_path(spec) if name == spec.model_id else resolve_model_id(name)
        tokenizer = AutoTokenizer.from_pretrained(where,
                                                  trust_remote_code=spec.trust_remote_code)
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
    raw = _stored_config(spec)
    d = raw.get("hidden_size") or (raw.get("text_config") or {}).get("hidden_size")
    if isinstance(d, int):
        return d
    return _config_hidden_size(_transformers_config(spec))


def backbone_model_type(spec: BackboneConfig) -> str:
    """The ``model_type`` of the backbone ``spec`` names (``llama``, ``qwen2``), read from
    its config without loading weights: it decides LoRA's module names."""
    model_type = _stored_config(spec).get("model_type")
    if isinstance(model_type, str):
        return model_type
    return _transformers_config(spec).model_type


def _transformers_config(spec: BackboneConfig, where: str | None = None):
    """transformers' config of the backbone ``spec`` names: a random one's built from its
    ``arch`` (an alias such as GPT-2's ``n_embd`` resolved, defaults filled in), else read
    from where its weights are (``where``, when the caller has it: :func:`model_path`)."""
    from transformers import AutoConfig

    if spec.arch is not None:
        arch = dict(spec.arch)
        return AutoConfig.for_model(arch.pop("model_type"), **arch)
    return AutoConfig.from_pretrained(where or model_path(spec),
                                      trust_remote_code=spec.trust_remote_code)


def _stored_config(spec: BackboneConfig) -> dict:
    """The backbone's config as stored: its ``arch`` for a random one, else its local
    ``config.json`` (a plain JSON read spares a job transformers' import, ~2.5 s); empty
    where there is none (a hub id transformers resolves)."""
    if spec.arch is not None:
        return dict(spec.arch)
    if not spec.model_id:
        raise ConfigError(f"model.backbone: backbone {spec.name!r} needs model_id (hub id or "
                          "local path) or arch")
    local = Path(model_path(spec)) / "config.json"
    return json.loads(local.read_text()) if local.is_file() else {}
