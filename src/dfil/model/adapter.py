"""A run's LoRA in peft's own format: the ``adapter/`` folder of a LoRA run directory,
which ``peft.PeftModel.from_pretrained(base, <run>/adapter)`` loads onto the run's
backbone as training adapted it: the bare decoder, without its LM head (transformers'
``AutoModel``, :func:`dfil.model.backbone.load_backbone`), whose module names its keys
carry. The heads stay in the run's ``model.safetensors``.

The tensors are the checkpoint's (:func:`dfil.engine.checkpoint.trained_state`'s names,
solo or packed: :meth:`dfil.model.pack.PackedModel.seed_state`), renamed to peft's and
unchanged otherwise; ``adapter_config.json`` is the LoRA config training wrapped the
backbone with (:func:`dfil.model.lora.peft_config`), naming the backbone it adapts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from dfil.config.cell import ModelConfig
from dfil.contracts.rundir import ADAPTER_WEIGHTS
from dfil.model.backbone import backbone_model_type
from dfil.model.lora import peft_config
from dfil.util.atomic import atomic_dir, atomic_path


def adapter_state(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The LoRA tensors of a run's checkpoint ``state``
    (``backbone.base_model.model.<module>.lora_A.default.weight [r, in]``,
    ``...lora_B.default.weight [out, r]``) as peft names them in its weights file:
    ``base_model.model.<module>.lora_A.weight``. The heads are left out."""
    return {name.removeprefix("backbone.").replace(".default.weight", ".weight"): t.contiguous()
            for name, t in state.items()
            if name.startswith("backbone.") and (".lora_A." in name or ".lora_B." in name)}


def save_adapter(state: Mapping[str, torch.Tensor], config: ModelConfig,
                 out: str | Path) -> None:
    """Write the LoRA of checkpoint ``state`` (a cell's ``model`` ``config``) to the folder
    ``out`` in peft's format (``adapter_config.json``, ``adapter_model.safetensors``), all at once:
    ``out`` is replaced whole or not at all. A ``ValueError`` if ``state`` holds no LoRA (a
    frozen backbone's run)."""
    from safetensors.torch import save_file

    tensors = adapter_state(state)
    if not tensors:
        raise ValueError(f"{out}: the checkpoint holds no LoRA weights (model.adapter: "
                         f"{config.adapter})")
    lora = peft_config(backbone_model_type(config.backbone), config.lora)
    lora.base_model_name_or_path = config.backbone.model_id or config.backbone.name
    lora.revision = config.backbone.revision or None
    with atomic_dir(out) as folder:
        lora.save_pretrained(str(folder))
        with atomic_path(folder / ADAPTER_WEIGHTS) as tmp:
            save_file(tensors, str(tmp), metadata={"format": "pt"})
