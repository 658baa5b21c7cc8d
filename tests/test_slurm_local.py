"""The cluster path without a cluster: the one-machine SLURM script, the slurm/ profile
with the local overlay (dry runs), and which rules stay off the cluster. The running
cluster is checked by CI's stage after the tests (.ci/slurm-smoke)."""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from snakemake_cli import snakemake

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "workflow" / "slurm-local.sh"
OVERLAY = ROOT / "workflow" / "profiles" / "slurm-local"


@pytest.mark.parametrize("script", [SCRIPT, *(ROOT / ".ci" / name for name in (
    "slurm-smoke", "slurm-timeout", "slurm-site2", "hub-smoke", "site-users"))])
def test_scripts_parse(script):
    out = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_slurm_local_without_a_command_prints_usage():
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert out.returncode == 2 and "start|stop|status" in out.stderr


def test_profile_keeps_site_settings_in_one_block_and_names_its_status_command():
    text = (ROOT / "slurm" / "config.yaml").read_text()
    site = text[text.index("SITE SETTINGS"):text.index("# =====", text.index("SITE SETTINGS"))]
    assert "slurm_account" in site and "slurm_partition" in site and "slurm_extra" in site
    assert "slurm_account" not in text.replace(site, "")
    profile = yaml.safe_load(text)
    assert profile["slurm-status-command"] == "sacct"
    # The partitions are site settings; each training or evaluation job picks one by
    # whether it asks a GPU, so no rule names its own.
    assert "gpu_partition" in site
    signal = {"slurm_extra": "'--signal=TERM@300'"}
    assert profile["set-resources"] == {"train_cell": signal, "train_pack": signal}
    assert profile["default-resources"]["gpu_partition"] == "gpu"
    assert "gpu_model" not in text.replace(site, "").split("executor:")[1]


def test_overlay_changes_only_site_settings_and_polling():
    overlay = yaml.safe_load((OVERLAY / "config.yaml").read_text())
    assert set(overlay) == {"default-resources", "latency-wait",
                            "slurm-init-seconds-before-status-checks"}
    assert overlay["default-resources"]["slurm_account"] == "dfil-local"
    assert overlay["default-resources"]["qos"] == "gpu"
    assert (overlay["default-resources"]["slurm_partition"],
            overlay["default-resources"]["gpu_partition"]) == ("cpu", "gpu")
    assert "--qos" not in str(overlay) and "--constraint" not in str(overlay)


def _script_site() -> dict:
    """What workflow/slurm-local.sh sets up: the gpu partition's MaxTime (minutes) and the
    QOS it allows, the QOS the account may use, its enforcement."""
    text = SCRIPT.read_text()
    hours, minutes, _ = re.search(r"^GPU_MAXTIME=(\S+)", text, re.M).group(1).split(":")
    gpu = re.search(r"^PartitionName=gpu .*$", text, re.M).group(0)
    return {"maxtime": int(hours) * 60 + int(minutes),
            "partition_qos": set(re.search(r"AllowQos=(\S+)", gpu).group(1).split(",")),
            "account_qos": set(re.search(r"set qos=(\S+) defaultqos=", text).group(1)
                               .split(",")),
            "enforce": re.search(r"^AccountingStorageEnforce=(\S+)", text, re.M).group(1)}


def test_local_cluster_is_shaped_like_a_site_the_overlay_and_smoke_grid_fit():
    site = _script_site()
    assert site == {"maxtime": 120, "partition_qos": {"gpu"},
                    "account_qos": {"normal", "gpu"},
                    "enforce": "associations,limits,qos"}
    qos = yaml.safe_load((OVERLAY / "config.yaml").read_text())["default-resources"]["qos"]
    assert qos in site["partition_qos"] & site["account_qos"]
    smoke = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())["resources"]
    assert max(c["runtime"] for c in smoke.values()) == 30 <= site["maxtime"]


@pytest.fixture(scope="module")
def smoke_through_overlay():
    out = snakemake("-n", "--forceall", "all_tables", "--profile", "slurm", "--profile",
                    str(OVERLAY.relative_to(ROOT)), "--configfile=config/smoke.yaml")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def test_smoke_model_jobs_ask_the_local_cluster_for_an_h100(smoke_through_overlay):
    seen = set()
    for block in smoke_through_overlay.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        res = re.search(r"resources: (.*)", block).group(1)
        assert "slurm_account=dfil-local" in res and "qos=gpu" in res, block[:300]
        if rule in ("train_pack", "train_cell", "evaluate_cell", "frozen_features"):
            assert "slurm_partition=gpu" in res and "gpu=1" in res and "gpu_model=h100" in res
        else:
            assert "slurm_partition=cpu" in res and "gpu_model" not in res
        seen.add(rule)
    assert {"train_pack", "train_cell", "evaluate_cell", "probes", "aggregate"} <= seen


@pytest.fixture(scope="module")
def smoke_workflow():
    """The smoke grid's parsed workflow (Snakemake's API, nothing run)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        OutputSettings,
        ResourceSettings,
        StorageSettings,
    )

    with SnakemakeApi(OutputSettings()) as api:
        yield api.workflow(
            resource_settings=ResourceSettings(), storage_settings=StorageSettings(),
            config_settings=ConfigSettings(configfiles=[ROOT / "config" / "smoke.yaml"]),
            snakefile=ROOT / "Snakefile", workdir=ROOT)._workflow


def test_light_jobs_are_local_rules(smoke_workflow):
    local = set(smoke_workflow._localrules)
    assert {"render_table", "render_report", "cell_config", "aggregate", "probes",
            "untrained_cell"} <= local
    assert not local & {"train_cell", "evaluate_cell", "synth_frog"}


def test_profile_keeps_going_past_a_failed_cell():
    assert yaml.safe_load((ROOT / "slurm" / "config.yaml").read_text())["keep-going"] is True
