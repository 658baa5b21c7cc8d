import json
from collections import Counter

import numpy as np
import pytest

from dfil.cli import main
from dfil.core.quantifiers import QURE_CENTERS
from dfil.data.probes import ProbeConfig, generate_probes, write_probes
from dfil.data.probes.common import quantifier, qure_label


@pytest.fixture(scope="module")
def probes():
    return generate_probes(ProbeConfig(seed=0))


def test_counts(probes):
    assert {k: len(v) for k, v in probes.items()} == {
        "compositional": 900, "csmc": 200, "ipr": 40, "entailment": 1344, "naturalistic": 320,
    }


def test_compositional_structure(probes):
    rows = probes["compositional"]
    by_level = Counter(r["level"] for r in rows)
    assert by_level == {1: 600, 2: 300}
    combos = Counter(tuple(r["chain"]) for r in rows)
    assert len(combos) == 18 and set(combos.values()) == {50}
    assert sum(len(c) == 2 for c in combos) == 12 and sum(len(c) == 3 for c in combos) == 6
    for r in rows:
        assert 0.1 <= r["p_base"] <= 0.95 and r["p_base"] == r["k"] / r["n"]
        assert f"{r['k']} out of {r['n']}" in r["text"] and "[MASK]" in r["text"]
        factor = np.prod([QURE_CENTERS[o] for o in r["outer"]])
        assert r["p_comp_qure"] == pytest.approx(factor * r["p_base"])
        assert r["qure_label"] == qure_label(r["p_comp_qure"])
        assert qure_label(r["p_base"]) == quantifier(r["base_quantifier"])


def test_paper_worked_example_under_qure_centers():
    # "most of most of the 100 students passed" at p_base 0.8 -> 0.487 -> some.
    assert qure_label(0.78 * 0.78 * 0.8) == 4


def test_csmc_ipr_entailment_naturalistic(probes):
    csmc = probes["csmc"]
    assert Counter(r["domain"] for r in csmc) == {d: 20 for d in {r["domain"] for r in csmc}}
    assert len({r["domain"] for r in csmc}) == 10
    assert all(r["p_b"] - r["p_a"] >= 0.1 for r in csmc)
    assert not any("out of" in r["text_a"] + r["text_b"] for r in csmc)
    ipr = Counter(r["category"] for r in probes["ipr"])
    assert ipr == {"linguistic": 12, "approximate": 12, "comparative": 8, "emphatic": 8}
    assert all(not any(ch.isdigit() for ch in r["text"]) for r in probes["ipr"])
    ent = probes["entailment"]
    assert Counter(r["scenario"] for r in ent) == {"clinical": 448, "election": 448,
                                                   "manufacturing": 448}
    assert sum(r["entails"] for r in ent) == 672  # chance is 50%
    assert all(qure_label(r["p_i"]) == r["qi"] and qure_label(r["p_j"]) == r["qj"]
               for r in ent)
    nat = probes["naturalistic"]
    assert Counter(r["domain"] for r in nat) == {d: 40 for d in {r["domain"] for r in nat}}
    assert len({r["domain"] for r in nat}) == 8


@pytest.mark.slow
def test_write_probes_deterministic_and_manifest(tmp_path):
    a = write_probes(tmp_path / "a", ProbeConfig(seed=3))
    b = write_probes(tmp_path / "b", ProbeConfig(seed=3))
    c = write_probes(tmp_path / "c", ProbeConfig(seed=4))
    assert a == b
    assert all(a[k]["sha256"] != c[k]["sha256"] for k in ("compositional", "csmc",
                                                          "entailment", "naturalistic"))
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest == a and manifest["entailment"]["count"] == 1344
    for name in a:
        assert (tmp_path / "a" / f"{name}.jsonl").read_bytes() == (
            tmp_path / "b" / f"{name}.jsonl").read_bytes()


@pytest.mark.slow
def test_cli_probes(tmp_path, capsys):
    assert main(["probes", "--out", str(tmp_path), "--seed", "0"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["compositional"]["count"] == 900
    assert (tmp_path / "manifest.json").is_file()
