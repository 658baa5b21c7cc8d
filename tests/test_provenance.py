"""What a run records about how it was produced (dfil.engine.provenance, dfil.engine.inputs)."""

from __future__ import annotations

import torch

from dfil.config.cell import CellConfig
from dfil.engine.inputs import cell_inputs
from dfil.engine.provenance import library_versions, provenance


def test_library_versions_name_torch_cuda_and_the_optional_libraries():
    versions = library_versions()
    assert versions["torch"] == torch.__version__
    assert versions["cuda"] == torch.version.cuda
    assert set(versions) >= {"transformers", "peft", "bitsandbytes", "flash_attn"}
    assert versions["transformers"]  # installed, so a version string


def test_provenance_records_inputs_gpu_and_versions():
    inputs = {"model": {"repo": "org/tiny", "commit": "a" * 40}}
    prov = provenance(torch.device("cpu"), 1.5, inputs)
    assert prov["inputs"] == inputs
    assert prov["gpu"] is None  # no GPU on the CPU
    assert prov["versions"]["torch"] == torch.__version__


def test_cell_inputs_name_model_and_data_commits():
    cell = CellConfig.model_validate({
        "model": {"backbone": {"name": "b", "model_id": "org/tiny", "revision": "a" * 40}},
        "data": {"source": f"hub:org/frog@{'b' * 40}", "test_source": "data/hard.jsonl"}})
    assert cell_inputs(cell) == {
        "model": {"repo": "org/tiny", "commit": "a" * 40},
        "data": {"source": {"repo": "org/frog", "commit": "b" * 40},
                 "test_source": {"path": "data/hard.jsonl"}}}
