"""Save and load what was trained (LoRA adapter, heads, MF) with the resolved config.

One safetensors file: the heads' tensors (every parameter and the feature statistics),
every trainable backbone parameter (the LoRA matrices), and the resolved
:class:`ModelConfig` as JSON metadata, so the frozen base weights are never copied and the
file alone rebuilds the model. Writes are atomic (temporary file, fsync, rename): a
half-written checkpoint never has the final name.
The metadata carries a sha256 of the tensors, checked on every read: a file whose tensor
bytes were overwritten behind an intact header is refused, not evaluated.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, safe_open, save_file

from dfil.config.cell import ModelConfig, load_cell, to_dict
from dfil.config.validation import validate
from dfil.contracts.rundir import ADAPTER, BEST, CELL
from dfil.util.atomic import atomic_path
from dfil.util.errors import CheckpointError, ConfigError

#: /2: the metadata carries ``tensors_sha256``; /1 files (no hash) are refused.
FORMAT = "dfil-checkpoint/2"


def tensors_sha256(tensors: dict[str, torch.Tensor]) -> str:
    """sha256 over each tensor's name, dtype, shape and raw bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].detach().to("cpu").contiguous()
        digest.update(json.dumps([name, str(t.dtype), list(t.shape)]).encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The heads' whole state (parameters and persistent buffers: the feature statistics)
    and the trainable backbone parameters (LoRA), detached, on CPU."""
    state = model.heads.state_dict(prefix="heads.")
    state.update((name, param) for name, param in model.named_parameters()
                 if param.requires_grad and not name.startswith("heads."))
    return {name: t.detach().to("cpu").contiguous() for name, t in state.items()}


def save_checkpoint(model: torch.nn.Module, config: ModelConfig, path: Path,
                    extra: dict | None = None) -> None:
    """Write ``model``'s trained tensors and ``config`` to ``path`` atomically."""
    save_state(trained_state(model), config, path, extra)


def save_state(state: dict[str, torch.Tensor], config: ModelConfig, path: Path,
               extra: dict | None = None) -> None:
    """Write trained tensors ``state`` (named as :func:`trained_state` names them) and
    ``config`` to ``path`` atomically.

    All metadata sits in one key holding key-sorted JSON: safetensors does not keep the
    order of several metadata keys, and the file should be byte-identical for equal runs.
    """
    meta = {**(extra or {}), "format": FORMAT, "config": to_dict(config),
            "tensors_sha256": tensors_sha256(state)}
    metadata = {"dfil": json.dumps(meta, sort_keys=True)}
    with atomic_path(path) as tmp:
        save_file(state, tmp, metadata=metadata)


def read_checkpoint(path: Path) -> tuple[ModelConfig, dict[str, torch.Tensor], dict]:
    """Resolved config, tensors and metadata of a checkpoint; :class:`CheckpointError`
    naming the file if it is missing, unreadable (e.g. truncated), of another format, or
    its tensors do not match the content hash in its metadata."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        with safe_open(str(path), framework="pt") as fh:
            metadata = dict(fh.metadata() or {})
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"{path}: not a readable safetensors checkpoint ({err})") from err
    try:
        meta = json.loads(metadata["dfil"])
    except (KeyError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path}: no dfil metadata ({err})") from err
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r} "
                              "(one without a content hash cannot be checked)")
    if tensors_sha256(tensors) != meta.get("tensors_sha256"):
        raise CheckpointError(f"{path}: tensor bytes do not match the content hash in its "
                              "metadata (damaged or overwritten)")
    try:
        config = validate(ModelConfig, meta["config"], "checkpoint.config")
    except (KeyError, ConfigError) as err:
        raise CheckpointError(f"{path}: bad embedded config ({err})") from err
    return config, tensors, meta


def load_into(model: torch.nn.Module, tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Copy checkpoint tensors into ``model``; every trained tensor must match exactly."""
    expected = trained_state(model)
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: does not fit the model (missing {missing[:3]}, unexpected {unexpected[:3]})"
        )
    for name, value in tensors.items():
        if expected[name].shape != value.shape:
            raise CheckpointError(
                f"{path}: {name} has shape {tuple(value.shape)}, "
                f"model expects {tuple(expected[name].shape)}"
            )
    # Through load_state_dict, so modules see their state loaded (FeatureStandardizer);
    # the frozen base weights are not in a checkpoint, hence strict=False.
    result = model.load_state_dict(tensors, strict=False)
    # The check above compares the names trained_state gives; a module whose state_dict
    # keys differ from them would otherwise be skipped silently here.
    if result.unexpected_keys:
        raise CheckpointError(f"{path}: does not fit the model "
                              f"(unexpected {result.unexpected_keys[:3]})")


def load_model(path: Path, device: torch.device | str = "cpu"):
    """Rebuild the model a checkpoint was saved from (base weights, then trained tensors)
    on ``device``; returns it with its config. The one loader of trained models."""
    from dfil.model.dual_path import build_model

    config, tensors, _ = read_checkpoint(path)
    model = build_model(config, backbone=config.adapter != "none").to(device)
    load_into(model, tensors, path)
    return model, config


def load_trained(run_dir: Path, device: torch.device | str = "cpu"):
    """The cell and best model of a trained run directory, checked against each other."""
    run_dir = Path(run_dir)
    cell = load_cell(run_dir / CELL)
    model, config = load_model(run_dir / BEST, device)
    if config.method != cell.model.method:
        raise CheckpointError(f"{run_dir / BEST}: method {config.method} != its cell's "
                              f"{cell.model.method}")
    return cell, model


def export_adapter(run_dir: Path) -> None:
    """Write a LoRA run's ``adapter/`` (peft's format, :mod:`dfil.model.adapter`) from its
    best checkpoint; :class:`CheckpointError` naming the checkpoint if it does not read."""
    from dfil.model.adapter import save_adapter

    config, state, _ = read_checkpoint(Path(run_dir) / BEST)
    save_adapter(state, config, Path(run_dir) / ADAPTER)
