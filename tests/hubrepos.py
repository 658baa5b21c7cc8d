"""Hub repositories as plain local git repositories, the layout olah's ``mirrors-path``
serves: ``<mirrors>/models/<org>/<name>`` and ``<mirrors>/datasets/<org>/<name>``.

Each repo is a real git repository committed with a fixed author and date, so the same
files always give the same commit (a known commit to pin). Weights are stored as git-LFS
pointers with the object under ``.git/lfs/objects`` (as the hub stores them, and as olah
reads them; no git-lfs binary needed), so the git history stays small.

Content builders: a tiny random Llama (``save_pretrained``) with the library's character
tokenizer (fast, for unit tests); the embedded SmolLM2-135M's converted files (``dfil
fetch-backbone smollm2-135m``); a FRoG-format dataset repo whose README declares the
``mask_quant`` config with ``easy``/``hard`` splits (``load_dataset(repo, "mask_quant",
split=...)``, as ``dfil.data.load_frog`` reads ``GAIR/FRoG``), from dfil's synthetic
stand-in or from FRoG's real repository files (:func:`frog_samples_source`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

#: Suffixes stored as LFS pointers, as the hub stores weights and data blobs.
LFS_SUFFIXES = (".safetensors", ".parquet", ".bin", ".gguf")
GIT_ENV = {"GIT_AUTHOR_NAME": "dfil tests", "GIT_AUTHOR_EMAIL": "tests@dfil.invalid",
           "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "dfil tests",
           "GIT_COMMITTER_EMAIL": "tests@dfil.invalid",
           "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+0000", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null"}

FROG_README = """---
configs:
- config_name: mask_quant
  data_files:
  - split: easy
    path: mask_quant/easy.jsonl
  - split: hard
    path: mask_quant/hard.jsonl
---
# FRoG-format stand-in

Synthetic FRoG-format records from `dfil synth-frog` (not FRoG), served for tests.
"""


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _put_lfs(repo: Path, rel: str, source: Path) -> None:
    oid = _sha256(source)
    obj = repo / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid
    obj.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, obj)
    pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\n"
               f"size {source.stat().st_size}\n")
    (repo / rel).write_text(pointer)


def git_repo(path: Path, files: dict[str, bytes | Path], message: str = "initial") -> str:
    """Make ``path`` a git repository on branch ``main`` holding ``files`` (relative path
    -> bytes, or a file to copy) in one commit; returns the commit's hash."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    for rel, content in sorted(files.items()):
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path) and rel.endswith(LFS_SUFFIXES):
            _put_lfs(path, rel, content)
        elif isinstance(content, Path):
            shutil.copyfile(content, target)
        else:
            target.write_bytes(content)
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", message)
    return _git(path, "rev-parse", "HEAD")


def repo_path(mirrors: Path, kind: str, repo: str) -> Path:
    """Where olah looks for hub repo ``repo`` of ``kind`` (model or dataset)."""
    return Path(mirrors) / f"{kind}s" / repo


def tiny_model_files(out: Path, vocab_size: int | None = None, seed: int = 0) -> dict:
    """A randomly initialised tiny Llama (tests/tinymodel.py's shape, ``vocab_size`` rows
    of embedding and LM head if given, to make the weights file larger) saved with
    ``save_pretrained``, with the library's character tokenizer."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from dfil.model.backbone import char_tokenizer
    from tinymodel import TINY_LLAMA

    arch = dict(TINY_LLAMA, **({"vocab_size": vocab_size} if vocab_size else {}))
    config = AutoConfig.for_model(arch.pop("model_type"), **arch)
    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(config).save_pretrained(out)
    char_tokenizer().save_pretrained(out)
    return {p.name: p for p in sorted(Path(out).iterdir()) if p.is_file()}


def embedded_files(name: str = "smollm2-135m") -> dict:
    """The converted files of an embedded backbone, as ``dfil fetch-backbone`` left them."""
    from dfil.model.embedded import embedded_path

    root = embedded_path(name)
    if not (root / "config.json").is_file():
        raise FileNotFoundError(f"{root} holds no converted backbone: run "
                                f"`dfil fetch-backbone {name}` first")
    return {p.name: p for p in sorted(root.iterdir()) if p.is_file()}


def frog_hub_rows(path: Path) -> list[dict]:
    """The records of a FRoG repository file (``task=<task>.jsonl``: ``info`` = [percentage,
    quantifier, strength gap]) in the hub's record layout, ids ``frog-<line - 1>``."""
    rows = []
    for i, line in enumerate(Path(path).read_text().splitlines()):
        r = json.loads(line)
        rows.append({"id": f"frog-{i}", "question": r["question"],
                     "target_percentage_mention": r["info"][0], "quantifier": r["info"][1],
                     "quantifier_strength_gap": r["info"][2], "answer": r["target"],
                     "origin_question": "", "raw_question": "", "source": "frog"})
    return rows


def frog_samples_source(samples: Path, out: Path, easy: str = "task=mask_quant.jsonl",
                        hard: str = "task=mislead.jsonl") -> Path:
    """``out`` holding ``easy.jsonl`` and ``hard.jsonl`` in the hub's layout, from FRoG's
    repository files in ``samples`` (../shared/data/frog-samples: 30 real items per task;
    the hard split stands in with another task's items, which share no question with the
    easy ones)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for split, name in (("easy", easy), ("hard", hard)):
        rows = frog_hub_rows(Path(samples) / name)
        (out / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def frog_dataset_files(source: Path) -> dict:
    """A FRoG-format dataset repo from a directory holding ``easy.jsonl`` and
    ``hard.jsonl`` (``dfil synth-frog --out``)."""
    files = {"README.md": FROG_README.encode()}
    for split in ("easy", "hard"):
        path = Path(source) / f"{split}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no {split} split (write it with dfil synth-frog)")
        files[f"mask_quant/{split}.jsonl"] = path
    return files
