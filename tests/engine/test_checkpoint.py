"""Checkpoints carry a content hash checked on every read."""

import hashlib
import json

import pytest
import torch
from safetensors.torch import save_file

from dfil.config.cell import ModelConfig
from dfil.engine.checkpoint import FORMAT, read_checkpoint, save_checkpoint, tensors_sha256
from dfil.util.errors import CheckpointError


class _Heads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = torch.nn.Linear(4, 3)


def test_tensors_sha256_hand_computed():
    tensors = {"b": torch.tensor([1, 2], dtype=torch.uint8),
               "a": torch.tensor(7, dtype=torch.int16)}
    expected = hashlib.sha256(
        json.dumps(["a", "torch.int16", []]).encode() + b"\x07\x00"
        + json.dumps(["b", "torch.uint8", [2]]).encode() + b"\x01\x02").hexdigest()
    assert tensors_sha256(tensors) == expected
    assert tensors_sha256({"a": torch.zeros(2, dtype=torch.bfloat16)}) != tensors_sha256(
        {"a": torch.zeros(2, dtype=torch.float16)})


def test_checkpoint_round_trip_keeps_its_hash(tmp_path):
    path = tmp_path / "model.safetensors"
    save_checkpoint(_Heads(), ModelConfig(), path, extra={"epoch": "1"})
    config, tensors, meta = read_checkpoint(path)
    assert config == ModelConfig() and meta["format"] == FORMAT and meta["epoch"] == "1"
    assert meta["tensors_sha256"] == tensors_sha256(tensors)


def test_overwritten_tensor_bytes_behind_an_intact_header_are_refused(tmp_path):
    path = tmp_path / "model.safetensors"
    save_checkpoint(_Heads(), ModelConfig(), path)
    data = bytearray(path.read_bytes())
    data[-8:] = b"\xff" * 8  # the last tensor's bytes: the header still parses (NaNs)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"model\.safetensors: tensor bytes do not match "
                                              r"the content hash"):
        read_checkpoint(path)


def test_truncated_checkpoint_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "model.safetensors"
    save_checkpoint(_Heads(), ModelConfig(), path)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(CheckpointError, match=r"model\.safetensors: not a readable "
                                              r"safetensors checkpoint"):
        read_checkpoint(path)


def test_a_checkpoint_without_a_content_hash_is_refused(tmp_path):
    path = tmp_path / "model.safetensors"
    meta = {"format": "dfil-checkpoint/1", "config": {}}
    save_file({"heads.weight": torch.zeros(3, 4)}, str(path),
              metadata={"dfil": json.dumps(meta)})
    with pytest.raises(CheckpointError, match=r"format 'dfil-checkpoint/1', expected "
                                              r"'dfil-checkpoint/2' \(one without a content "
                                              r"hash cannot be checked\)"):
        read_checkpoint(path)
