"""dfil.model.embedded: the GGUF conversion parses its file once."""

from __future__ import annotations

import gguf
import numpy as np

from dfil.model.embedded import _gguf_parsed_once


def test_the_gguf_file_and_name_map_are_made_once_within_the_block(tmp_path):
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_tensor("token_embd.weight", np.arange(8, dtype=np.float32).reshape(2, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with _gguf_parsed_once():
        first = gguf.GGUFReader(str(path))
        assert gguf.GGUFReader(str(path)) is first
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is gguf.get_tensor_name_map(
            gguf.MODEL_ARCH.LLAMA, 2)
    assert gguf.GGUFReader is reader and gguf.get_tensor_name_map is name_map
    assert first.tensors[0].name == "token_embd.weight"
    assert first.tensors[0].data.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert gguf.GGUFReader(str(path)) is not first
