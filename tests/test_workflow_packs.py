"""The grid's ``pack``: one ``train_pack`` job trains a configuration's seeds together,
then each seed's ``train_cell`` job finishes its own run. Dry run of the embedded grid,
and a real build of one seed of the smoke grid (frozen heads: a pack trains them bit for
bit as one job a seed does)."""

import json
import os
import shutil
from contextlib import contextmanager

import pytest
import yaml

from snakemake_cli import ROOT, snakemake

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

CONFIG = "frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure"
SEEDS = ("seed123", "seed42", "seed456")


def counts(text: str) -> dict:
    import re

    table = text[text.index("Job stats:"):]
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)}


def requests(text: str, rule: str) -> list[dict]:
    """The GPU request (gpu, gpu_model) of each ``rule`` job Snakemake ran, as it printed
    them when it ran the job."""
    import re

    out = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        if re.match(rf"(?:local)?rule {rule}:", block):
            line = re.search(r"^\s*resources: (.*)$", block, re.MULTILINE).group(1)
            given = dict(item.split("=", 1) for item in line.split(", "))
            out.append({k: given[k] for k in ("gpu", "gpu_model")})
    return out


def workdir(tmp_path, pack: bool):
    work = tmp_path / ("packed" if pack else "alone")
    work.mkdir()
    shutil.copy(ROOT / "Snakefile", work)
    for d in ("workflow", "config"):
        shutil.copytree(ROOT / d, work / d)
    path = work / "config" / "smoke.yaml"
    grid = yaml.safe_load(path.read_text())
    grid["pack"] = pack
    path.write_text(yaml.safe_dump(grid, sort_keys=False))
    return work


def build(work, *targets, extra=()):
    out = snakemake(*targets, *extra, "--cores", "2", "--configfile", "config/smoke.yaml",
                    cwd=work)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


def forced_request(work, config: str, seed: str) -> list[dict]:
    """The GPU request of a seed's ``train_cell`` job, as a dry run forcing it prints it
    (its inputs exist: Snakemake asks the class of the job as it would run)."""
    target = f"results/smoke/runs/{config}/{seed}/train_summary.json"
    return requests(build(work, target, extra=("-n", "--forcerun", "train_cell")),
                    "train_cell")


@contextmanager
def unseen_edit(stamp):
    """A data directory's stamp saying another digest of ``easy.jsonl``, its times kept:
    data made again where Snakemake does not see it."""
    text, times = stamp.read_text(), stamp.stat()
    data = json.loads(text)
    data["sha256"]["easy.jsonl"] = "0" * 64

    def write(content):
        stamp.write_text(content)
        os.utime(stamp, ns=(times.st_atime_ns, times.st_mtime_ns))

    write(json.dumps(data))
    try:
        yield
    finally:
        write(text)


def test_the_embedded_grid_with_packs_trains_each_configuration_in_one_job(tmp_path):
    extra = tmp_path / "pack.yaml"
    extra.write_text("pack: true\n")
    out = snakemake("-n", "--forceall", "all_tables", "--cores", "2", "--configfile",
                    "config/config.yaml", str(extra))
    assert out.returncode == 0, out.stderr[-3000:]
    c = counts(out.stdout + out.stderr)
    # 25 configurations of three trained seeds; every seed's own job finishes its run
    assert c["train_pack"] == 25 and c["train_cell"] == 75


def kill_packs(tmp_path, monkeypatch, attempt: str) -> None:
    """Every `dfil train` of a pack on Snakemake attempt ``attempt`` kills itself at
    start, as the out-of-memory killer would (a ``sitecustomize`` on PYTHONPATH)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "if sys.argv[1:2] == ['train'] and '--pack-record' in sys.argv and \\\n"
        f"        sys.argv[sys.argv.index('--attempt') + 1] == {attempt!r}:\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(hook), os.environ.get("PYTHONPATH")) if p))


def test_a_pack_killed_on_its_last_attempt_leaves_its_seeds_to_their_own_jobs(
        tmp_path, monkeypatch):
    """The pack's process killed from outside on the last attempt records nothing
    itself; its job's `dfil died` records that the pack gave up, and the seed's own job
    trains it alone, on its GPU class."""
    work = workdir(tmp_path, pack=True)
    kill_packs(tmp_path, monkeypatch, attempt="1")
    target = f"results/smoke/runs/{CONFIG}/seed42/train_summary.json"
    text = build(work, target, extra=("--keep-going", "--retries", "0"))
    record = json.loads((work / "results/smoke/packs" / f"{CONFIG}.json").read_text())
    assert record["runs"] == [f"results/smoke/runs/{CONFIG}/{seed}" for seed in SEEDS]
    assert record["together"] == [] and record["gave_up"]["reason"] == "error"
    assert "exit status 137 (SIGKILL)" in record["gave_up"]["message"]
    assert requests(text, "train_cell") == [{"gpu": "1", "gpu_model": "h100"}]
    run = work / "results/smoke/runs" / CONFIG / "seed42"
    summary = json.loads((run / "train_summary.json").read_text())
    assert summary["trained"] and "failed" not in summary
    [attempt] = json.loads((run / "attempts.json").read_text())
    assert attempt.get("pack") is None


def test_a_pack_killed_before_its_last_attempt_is_tried_again(tmp_path, monkeypatch):
    work = workdir(tmp_path, pack=True)
    kill_packs(tmp_path, monkeypatch, attempt="1")
    target = f"results/smoke/runs/{CONFIG}/seed42/train_summary.json"
    text = build(work, target, extra=("--keep-going", "--retries", "1"))
    assert counts(text)["train_pack"] == 1 and "exit status 137" in text  # attempt 1
    record = json.loads((work / "results/smoke/packs" / f"{CONFIG}.json").read_text())
    assert "gave_up" not in record and len(record["together"]) == 3  # its second attempt
    log = (work / "results/smoke/logs/train_pack" / f"{CONFIG}.log").read_text()
    assert log.count("in a pack of 3 seeds") == 3  # each seed's line, once: one attempt ran


def test_one_seeds_target_trains_its_pack_and_finishes_only_itself(tmp_path):
    work = workdir(tmp_path, pack=True)
    runs = work / "results" / "smoke" / "runs"
    text = build(work, f"results/smoke/runs/{CONFIG}/seed42/train_summary.json")
    c = counts(text)
    assert c["train_pack"] == 1 and c["train_cell"] == 1
    # the pack trains on its class's GPU; the seed's summary after it asks for none
    assert requests(text, "train_pack") == [{"gpu": "1", "gpu_model": "h100"}]
    assert requests(text, "train_cell") == [{"gpu": "0", "gpu_model": ""}]
    record = json.loads((work / "results/smoke/packs" / f"{CONFIG}.json").read_text())
    assert len(record["together"]) == 3
    for seed in SEEDS:
        [attempt] = json.loads((runs / CONFIG / seed / "attempts.json").read_text())
        assert attempt["pack"]["seeds"] == [123, 42, 456] and attempt["pack"]["size"] == 3
        assert attempt["pack"]["device"].startswith("cpu (")  # where the pack trained
    # the seed's own job copies the summary its pack sealed for it (no torch loaded)
    summary = json.loads((runs / CONFIG / "seed42" / "train_summary.json").read_text())
    assert summary == record["summaries"][f"results/smoke/runs/{CONFIG}/seed42"]
    log = (work / "results/smoke/logs/train" / CONFIG / "seed42.log").read_text()
    assert "finished in its pack; summary written from" in log
    assert not (runs / CONFIG / "seed123" / "train_summary.json").exists()

    # another seed of the pack: its own job only, which trains nothing again
    log = (runs / CONFIG / "seed123" / "train_log.jsonl").read_bytes()
    text = build(work, f"results/smoke/runs/{CONFIG}/seed123/train_summary.json")
    assert "train_pack" not in counts(text) and counts(text)["train_cell"] == 1
    assert requests(text, "train_cell") == [{"gpu": "0", "gpu_model": ""}]
    assert (runs / CONFIG / "seed123" / "train_log.jsonl").read_bytes() == log

    # its data made again where Snakemake does not see it (the stamp's digests edited,
    # its times kept): the seed's job would train it, so it keeps its GPU class
    with unseen_edit(work / "results/smoke/data/frog/dfil-sha256.json"):
        assert forced_request(work, CONFIG, "seed123") == [{"gpu": "1", "gpu_model": "h100"}]
    assert forced_request(work, CONFIG, "seed123") == [{"gpu": "0", "gpu_model": ""}]

    # a seed's training moved aside (as the preflight's damage repair does, cell.yaml
    # kept): the record still lists it, but its own job trains it alone, on its GPU class
    seed456 = runs / CONFIG / "seed456"
    for name in ("attempts.json", "model.safetensors"):
        (seed456 / name).rename(tmp_path / name)
    text = build(work, f"results/smoke/runs/{CONFIG}/seed456/train_summary.json")
    assert "train_pack" not in counts(text)
    assert requests(text, "train_cell") == [{"gpu": "1", "gpu_model": "h100"}]
    [attempt] = json.loads((seed456 / "attempts.json").read_text())
    assert attempt.get("pack") is None

    # a seed's run deleted: its pack trains it again, and only its own job follows (the
    # pack's record is ancient() to its siblings' jobs)
    shutil.rmtree(runs / CONFIG / "seed42")
    text = build(work, *(f"results/smoke/runs/{CONFIG}/{seed}/train_summary.json"
                         for seed in ("seed42", "seed123")), extra=("-n",))
    assert counts(text)["train_pack"] == 1 and counts(text)["train_cell"] == 1

    # the same seed with one job a seed: the same checkpoint, bit for bit
    alone = workdir(tmp_path, pack=False)
    text = build(alone, f"results/smoke/runs/{CONFIG}/seed123/train_summary.json")
    assert "train_pack" not in counts(text)
    for name in ("model.safetensors", "train_log.jsonl"):
        packed = (runs / CONFIG / "seed123" / name).read_bytes()
        assert packed == (alone / "results/smoke/runs" / CONFIG / "seed123" / name).read_bytes()
