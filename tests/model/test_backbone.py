import pytest
import torch
from archs import ARCHS

from dfil.config.cell import BackboneConfig, LoraConfig
from dfil.model import apply_lora, build_model, count_trainable, load_backbone
from dfil.model.backbone import backbone_hidden_size, backbone_model_type, check_arch
from dfil.model.lora import bnb_4bit_config, lora_target_modules
from dfil.util.errors import ConfigError
from tinymodel import TINY_LLAMA, tiny_config


def test_lora_targets_per_family():
    assert lora_target_modules("qwen2", ("q", "v")) == ["q_proj", "v_proj"]
    assert lora_target_modules("llama", ("o", "q", "k", "v")) == [
        "q_proj", "k_proj", "v_proj", "o_proj"
    ]
    assert lora_target_modules("phi3", ("q", "k", "v", "o")) == ["qkv_proj", "o_proj"]
    assert lora_target_modules("gpt_neox", ("q", "k", "v", "o")) == ["query_key_value", "dense"]
    assert lora_target_modules("gpt_neox", ("o",)) == ["dense"]
    assert lora_target_modules("opt", ("q", "o")) == ["q_proj", "out_proj"]
    with pytest.raises(ValueError, match="fuses q,k,v into qkv_proj"):
        lora_target_modules("phi3", ("q", "v"))
    with pytest.raises(ValueError, match="gpt_neox fuses q,k,v into query_key_value"):
        lora_target_modules("gpt_neox", ("q", "v"))
    with pytest.raises(ValueError, match="unknown LoRA targets"):
        lora_target_modules("llama", ("q", "gate"))


def test_phi3_fused_qkv_lora_wraps_real_modules():
    arch = {"model_type": "phi3", "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
            "vocab_size": 64, "pad_token_id": 0}
    model = load_backbone(BackboneConfig(name="tiny-phi3", arch=arch))
    model = apply_lora(model, LoraConfig(r=2, alpha=4, targets=("q", "k", "v", "o")))
    # qkv_proj: r * (32 + 96); o_proj: r * (32 + 32); 2 layers.
    assert count_trainable(model) == 2 * (2 * (32 + 96) + 2 * (32 + 32))


def test_cross_task_lora_qkvo_on_llama():
    cfg = tiny_config(lora=LoraConfig(r=4, alpha=8, targets=("q", "k", "v", "o")))
    model = build_model(cfg)
    wrapped = {n.split(".")[-4] for n, p in model.backbone.named_parameters() if "lora_A" in n}
    assert wrapped == {"q_proj", "k_proj", "v_proj", "o_proj"}


def test_random_init_is_seeded():
    a = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA), init_seed=3))
    b = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA), init_seed=3))
    c = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA), init_seed=4))
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_check_arch_refuses_a_misspelled_key_suggesting_the_close_one():
    arch = {k: v for k, v in TINY_LLAMA.items() if k != "num_hidden_layers"}
    arch["num_hiden_layers"] = 2
    with pytest.raises(ConfigError, match=r"backbone 'tiny': model\.backbone\.arch\."
                                          r"num_hiden_layers: not a key of LlamaConfig "
                                          r"\(did you mean 'num_hidden_layers'\? "
                                          r"model_type 'llama'\)$"):
        load_backbone(BackboneConfig(name="tiny", arch=arch))
    with pytest.raises(ConfigError, match=r"arch\.model_type: unknown model type 'lama' "
                                          r"\(did you mean 'llama'\? a model_type of "
                                          r"transformers' CONFIG_MAPPING\)$"):
        check_arch({**TINY_LLAMA, "model_type": "lama"})


def test_check_arch_accepts_declared_and_legacy_keys():
    for name, arch in ARCHS.items():  # rope_theta: a legacy name folded into rope_parameters
        check_arch(arch, name)
    check_arch({**TINY_LLAMA, "tie_word_embeddings": True, "rope_theta": 1e4})


def test_local_path_loads_and_remote_code_stays_off(tmp_path, monkeypatch):
    load_backbone(BackboneConfig(arch=dict(TINY_LLAMA))).save_pretrained(tmp_path)
    seen = {}
    from transformers import AutoModel

    original = AutoModel.from_pretrained

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(AutoModel, "from_pretrained", spy)
    model = load_backbone(BackboneConfig(name="local", model_id=str(tmp_path)))
    assert model.config.hidden_size == 32
    assert seen["trust_remote_code"] is False
    load_backbone(BackboneConfig(name="local", model_id=str(tmp_path), trust_remote_code=True))
    assert seen["trust_remote_code"] is True


def test_hidden_size_from_a_local_config_without_transformers(tmp_path):
    """A plain config.json read; nested text configs and renamed keys too (the latter
    through AutoConfig's attribute map)."""
    import json

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 48}))
    assert backbone_hidden_size(BackboneConfig(name="a", model_id=str(tmp_path))) == 48
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "llava", "text_config": {"model_type": "llama", "hidden_size": 40}}))
    assert backbone_hidden_size(BackboneConfig(name="b", model_id=str(tmp_path))) == 40
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_embd": 24}))
    assert backbone_hidden_size(BackboneConfig(name="c", model_id=str(tmp_path))) == 24


def test_hidden_size_and_model_type_of_a_random_backbones_arch():
    """From the arch as given, or through transformers' config of it (an alias such as
    GPT-2's n_embd resolved, a default filled in), never a hub lookup."""
    tiny = BackboneConfig(name="t", arch={"model_type": "llama", "hidden_size": 32})
    assert (backbone_hidden_size(tiny), backbone_model_type(tiny)) == (32, "llama")
    gpt2 = BackboneConfig(name="g", arch={"model_type": "gpt2", "n_embd": 24, "n_layer": 1})
    assert (backbone_hidden_size(gpt2), backbone_model_type(gpt2)) == (24, "gpt2")
    default = BackboneConfig(name="d", arch={"model_type": "gpt2", "n_layer": 1})
    assert backbone_hidden_size(default) == 768  # transformers' GPT-2 default


def test_missing_model_id_is_a_clear_error():
    with pytest.raises(ConfigError, match=r"^model\.backbone: backbone 'x' needs model_id"):
        load_backbone(BackboneConfig(name="x"))


def test_qlora_quantisation_config():
    cfg = bnb_4bit_config()
    assert cfg.load_in_4bit and cfg.bnb_4bit_quant_type == "nf4"
    assert cfg.bnb_4bit_use_double_quant and cfg.bnb_4bit_compute_dtype == torch.bfloat16


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU error path")
def test_quantized_backbone_without_cuda_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"^model\.backbone\.quantized: .* needs CUDA"):
        load_backbone(BackboneConfig(name="q", model_id=str(tmp_path), quantized=True))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="bitsandbytes 4-bit needs CUDA")
def test_qlora_4bit_trains_on_gpu(tmp_path):
    arch = dict(TINY_LLAMA, hidden_size=64, intermediate_size=128)
    load_backbone(BackboneConfig(arch=arch)).save_pretrained(tmp_path)
    import bitsandbytes as bnb

    from dfil.config.cell import ModelConfig

    cfg = ModelConfig(backbone=BackboneConfig(name="q", model_id=str(tmp_path), quantized=True),
                      lora=LoraConfig(r=4, alpha=8))
    model = build_model(cfg)
    model.heads.cuda()
    quantized = [m for m in model.backbone.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert quantized
    ids = torch.randint(3, 96, (2, 7), device="cuda")
    out = model(ids, torch.ones_like(ids))
    (out.main_logits.float().sum() + out.p.sum()).backward()
    assert all(p.grad is not None for n, p in model.named_parameters() if "lora_B" in n)


def test_kbit_preparation_keeps_embeddings_and_residual_stream_in_bf16():
    """QLoRA's preparation without peft's upcast: norms run in float32, everything else
    (embeddings, the residual stream between layers, the final states) stays bf16."""
    from dfil.model.lora import is_norm, prepare_kbit

    model = prepare_kbit(load_backbone(BackboneConfig(arch=dict(TINY_LLAMA), dtype="bfloat16")))
    dtypes = {n: p.dtype for n, p in model.named_parameters()}
    norms = {n for n, m in model.named_modules() if is_norm(m)}
    assert norms and all(dtypes[f"{n}.weight"] == torch.float32 for n in norms)
    assert dtypes["embed_tokens.weight"] == torch.bfloat16
    assert {d for n, d in dtypes.items() if not any(n.startswith(m) for m in norms)} == {
        torch.bfloat16}
    assert not any(p.requires_grad for p in model.parameters())
    seen = []
    for layer in model.layers:
        layer.register_forward_hook(lambda m, a, out: seen.append(
            (out[0] if isinstance(out, tuple) else out).dtype))
    ids = torch.randint(3, 96, (2, 7))
    out = model(input_ids=ids).last_hidden_state
    assert seen == [torch.bfloat16] * 2 and out.dtype == torch.bfloat16
    lora = apply_lora(model, LoraConfig(r=2, alpha=4), quantized=True)
    names = [n for n, p in lora.named_parameters() if p.requires_grad]
    assert names and all("lora_" in n for n in names)
    assert lora.get_base_model().embed_tokens.weight.dtype == torch.bfloat16


def test_gradient_checkpointing_is_a_backbone_knob():
    cfg = tiny_config()
    cfg = type(cfg)(method="dfil", backbone=type(cfg.backbone)(
        **{**vars(cfg.backbone), "gradient_checkpointing": True}), lora=cfg.lora)
    model = build_model(cfg).train()
    base = model.backbone.get_base_model()
    assert getattr(base, "is_activation_checkpointing", None) or base.is_gradient_checkpointing
    ids = torch.randint(3, 96, (2, 7))
    out = model(ids, torch.ones_like(ids))
    (out.main_logits.sum() + out.p.sum()).backward()
    assert all(p.grad is not None for n, p in model.named_parameters() if "lora_B" in n)
