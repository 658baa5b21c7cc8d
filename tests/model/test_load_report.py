"""The bare decoder's expected "UNEXPECTED lm_head" load report is dropped, no other."""

import torch
from safetensors.torch import load_file, save_file

from dfil.config.cell import BackboneConfig
from dfil.model import load_backbone
from dfil.model.load_report import only_unexpected_lm_head
from tinymodel import TINY_LLAMA

REPORT = ("[transformers] \x1b[1mLlamaModel LOAD REPORT\x1b[0m from: /tmp/x\n"
          "Key            | Status     |  | \n"
          "---------------+------------+--+-\n"
          "{rows}\n\nNotes:\n- \x1b[33mUNEXPECTED:\x1b[0m\tcan be ignored when loading from "
          "different task/architecture; not ok if you expect identical arch.")


def test_only_unexpected_lm_head_hand_built_reports():
    lm_head = "lm_head.weight | \x1b[33mUNEXPECTED\x1b[0m |  | "
    assert only_unexpected_lm_head(REPORT.format(rows=lm_head))
    assert not only_unexpected_lm_head(REPORT.format(
        rows=lm_head + "\nlayers.0.mlp.up_proj.weight | MISSING |  | "))
    assert not only_unexpected_lm_head(REPORT.format(rows="extra.weight | UNEXPECTED |  | "))
    assert not only_unexpected_lm_head("some other warning")


def _saved_causal_lm(path, extra=False):
    from transformers import AutoConfig, AutoModelForCausalLM

    arch = dict(TINY_LLAMA, tie_word_embeddings=False)
    config = AutoConfig.for_model(arch.pop("model_type"), **arch)
    AutoModelForCausalLM.from_config(config).save_pretrained(path)
    if extra:  # a key the bare decoder does not expect besides the LM head
        weights = load_file(str(path / "model.safetensors"))
        weights["extra.weight"] = torch.zeros(2)
        save_file(weights, str(path / "model.safetensors"), metadata={"format": "pt"})


def test_bare_decoder_load_drops_only_the_expected_report(tmp_path, capfd, caplog):
    def logged() -> str:  # transformers logs to stderr, or through root when propagating
        text = capfd.readouterr().err + caplog.text
        caplog.clear()
        return text

    _saved_causal_lm(tmp_path / "lm")
    logged()
    load_backbone(BackboneConfig(model_id=str(tmp_path / "lm")))
    assert "LOAD REPORT" not in logged()
    _saved_causal_lm(tmp_path / "odd", extra=True)
    logged()
    load_backbone(BackboneConfig(model_id=str(tmp_path / "odd")))
    text = logged()
    assert "LOAD REPORT" in text and "extra.weight" in text and "lm_head.weight" in text
