"""The SLURM checks of the preflight, on sinfo and sacctmgr output written by hand in the
format of SLURM 22.05 (Debian's slurm-wlm): ``sinfo -h -o "%R %G %f"`` and ``sacctmgr -n
-P show assoc user=<user> format=account,qos``."""

from __future__ import annotations

import pytest

from dfil.cluster import slurm as cluster
from dfil.cluster.checks import Check, problems, summary
from dfil.cluster.nodes import NodeGroup, gpu_types, parse_sinfo
from dfil.cluster.slurm import (
    Site,
    judge_gpu_models,
    judge_partitions,
    site_from_profile,
    slurm_checks,
)
from dfil.util.errors import ConfigError

#: A site with a CPU partition, an A100 partition whose nodes also carry an "h100"
#: feature, and an H100 partition of two node configurations.
SINFO = """\
cpu (null) (null)
a100 gpu:a100:4(S:0-1) a100,ib,h100
h100 gpu:h100:8(S:0-1),nvme:1 h100,hopper
h100 gpu:h100:4(S:0) h100
"""
#: A 7b class's job as the grid asks it (dfil.config.grid.Grid.job_resources).
H100_JOB = {"gpu": 1, "gpu_model": "h100", "mem_mb": 32000, "runtime": 120,
            "cpus_per_task": 8}
#: The project's slurm/config.yaml as Snakemake reads it (SITE SETTINGS filled in).
PROFILE = {
    "default-resources": {"slurm_account": "proj-ml", "slurm_partition": "cpu",
                          "slurm_extra": "''"},
    "set-resources": {"train_cell": {"slurm_partition": "h100",
                                     "slurm_extra": "'--signal=TERM@300'"},
                      "evaluate_cell": {"slurm_partition": "h100"}},
}


def test_gpu_types_reads_the_gres_type_of_each_gpu_entry():
    assert gpu_types("gpu:h100:8(S:0-1),nvme:1") == {"h100"}
    assert gpu_types("gpu:a100:2(S:0,1),gpu:h100:2(S:2,3)") == {"a100", "h100"}
    assert gpu_types("gres/gpu:h200:4") == {"h200"}
    assert gpu_types("gpu:tesla") == {"tesla"}
    assert gpu_types("gpu:2") == set()
    assert gpu_types("(null)") == set()


def test_parse_sinfo_one_group_per_line():
    groups = parse_sinfo(SINFO)
    assert [g.partition for g in groups] == ["cpu", "a100", "h100", "h100"]
    assert groups[0] == NodeGroup("cpu", "(null)", frozenset())
    assert groups[1].features == {"a100", "ib", "h100"}
    assert groups[2].gpu_types == {"h100"}
    # %P marks the default partition with a star; it is the same partition.
    assert parse_sinfo("cpu* (null) (null)\n")[0].partition == "cpu"


def test_parse_sinfo_names_a_line_it_cannot_read():
    with pytest.raises(ValueError, match=r"sinfo output line 2: expected 'partition gres "
                                         r"features timelimit memory cpus', got "
                                         r"'gpu gpu:h100:2'"):
        parse_sinfo("cpu (null) (null)\ngpu gpu:h100:2\n")


def test_site_from_profile_keeps_each_partitions_key():
    site = site_from_profile(PROFILE)
    assert site.accounts == {"default-resources.slurm_account": "proj-ml"}
    assert site.partitions == {"default-resources.slurm_partition": "cpu",
                               "set-resources.train_cell.slurm_partition": "h100",
                               "set-resources.evaluate_cell.slurm_partition": "h100"}
    # frozen_features and acceptance_run take a GPU too: without their own partition or
    # the profile's gpu_partition, their jobs go to the default one.
    assert site.gpu_partitions() == {"h100", "cpu"}
    # No partition for the GPU rules: their jobs go to the default one.
    bare = site_from_profile({"default-resources": {"slurm_partition": "'batch'"}})
    assert bare.gpu_partitions() == {"batch"} and bare.accounts == {}
    # A partition for training only: evaluation (also a GPU job) goes to the default.
    half = site_from_profile({"default-resources": {"slurm_partition": "cpu"},
                              "set-resources": {"train_cell": {"slurm_partition": "gpu"}}})
    assert half.gpu_partitions() == {"gpu", "cpu"}


def test_site_from_profile_reads_snakemakes_list_form_and_per_rule_accounts():
    listed = site_from_profile({
        "default-resources": ["slurm_account='proj-ml'", "slurm_partition=cpu", "mem_mb=1000"],
        "set-resources": ["train_cell:slurm_partition=gpu", "train_cell:slurm_account=gpu-acct",
                          "evaluate_cell:slurm_partition=gpu"]})
    assert listed.accounts == {"default-resources.slurm_account": "proj-ml",
                               "set-resources.train_cell.slurm_account": "gpu-acct"}
    assert listed.gpu_partitions() == {"gpu", "cpu"}
    with pytest.raises(ConfigError, match=r"profile key set-resources: 'slurm_partition=gpu' "
                                          r"is not rule:name=value"):
        site_from_profile({"set-resources": ["slurm_partition=gpu"]})


def test_partitions_present_and_missing():
    groups = parse_sinfo(SINFO)
    ok = judge_partitions(site_from_profile(PROFILE), groups)
    assert [c.status for c in ok] == ["ok", "ok"]
    assert "partition h100 (set-resources.evaluate_cell.slurm_partition, " \
           "set-resources.train_cell.slurm_partition) exists" in ok[1].text
    missing = judge_partitions(Site({}, {"default-resources.slurm_partition": "gpu"}), groups)
    assert missing[0].status == "problem"
    assert "partition 'gpu' (default-resources.slurm_partition) is not among this " \
           "cluster's partitions (a100, cpu, h100)" in missing[0].text
    assert "SITE SETTINGS" in missing[0].text


def test_gpu_model_is_judged_against_the_gpu_partitions_gres_types():
    groups = parse_sinfo(SINFO)
    checks = judge_gpu_models({"7b": "h100", "72b": "h200", "small": None}, {"h100"}, groups)
    by_class = {c.text.split(":")[0]: c for c in checks}
    assert by_class["class 7b"].status == "ok"
    assert "gpu_model h100 is a GPU type in partition h100" in by_class["class 7b"].text
    bad = by_class["class 72b"]
    assert bad.status == "problem"
    assert "no node in partition h100 has GPUs of type h200; its GPU types: h100" in bad.text
    assert by_class["class small"].status == "ok"


def test_a_feature_is_not_a_gres_type():
    """The A100 nodes carry an 'h100' feature: --gpus=h100:1 would still be refused."""
    checks = judge_gpu_models({"7b": "h100"}, {"a100"}, parse_sinfo(SINFO))
    assert checks[0].status == "problem"
    assert "h100 is a node feature there, not a GRES type" in checks[0].text
    assert "its GPU types: a100" in checks[0].text


def test_any_gpu_needs_a_gpu_somewhere():
    checks = judge_gpu_models({"small": None}, {"cpu"}, parse_sinfo(SINFO))
    assert checks[0].status == "problem"
    assert "no node in partition cpu has a GPU GRES" in checks[0].text


def test_site_from_profile_reads_the_qos_resource_and_the_plugins_setting():
    site = site_from_profile({**PROFILE, "slurm-qos": "long",
                              "default-resources": {**PROFILE["default-resources"],
                                                    "qos": "normal"},
                              "set-resources": {"train_cell": {"qos": "'gpu-long'"}}})
    assert site.qos == {"default-resources.qos": "normal",
                        "set-resources.train_cell.qos": "gpu-long", "slurm-qos": "long"}
    assert site_from_profile(PROFILE).qos == {}


def test_not_a_slurm_host_is_skipped(monkeypatch):
    monkeypatch.setattr(cluster.shutil, "which", lambda name: None)
    checks = slurm_checks(site_from_profile(PROFILE), {"train_cell": {"7b": H100_JOB}})
    assert checks == [Check("slurm", "skipped", "not a SLURM host (no sinfo on PATH): "
                                                "skipped")]
    assert not problems(checks)


def test_an_unreachable_controller_is_a_problem(fake_slurm):
    error = "slurm_load_partitions: Unable to contact slurm controller (connect failure)"
    run, _ = fake_slurm({"sinfo": (1, "", error)})
    checks = slurm_checks(site_from_profile(PROFILE), {}, run)
    assert [c.status for c in checks] == ["problem"]
    assert error in checks[0].text


def test_unreadable_sinfo_output_is_a_problem_not_a_traceback(fake_slurm):
    run, _ = fake_slurm({"sinfo": (0, "PARTITION GRES\ncpu (null)\n", "")})
    checks = slurm_checks(site_from_profile(PROFILE), {}, run)
    assert [c.status for c in checks] == ["problem"]
    assert "sinfo output line 1: expected 'partition gres features timelimit memory cpus'" \
        in checks[0].text


def test_without_a_profile_only_gpu_types_are_checked(fake_slurm):
    run, calls = fake_slurm({"sinfo": (0, SINFO, "")})
    checks = slurm_checks(None, {"train_cell": {"7b": H100_JOB}}, run)
    assert [c.status for c in checks] == ["ok", "ok", "skipped"]
    assert "gpu_model h100 is a GPU type in any partition" in checks[0].text
    assert len(calls) == 1


def test_summary_counts_problems_and_skips():
    checks = [Check("hub", "ok", "a"), Check("slurm", "skipped", "b"),
              Check("disk", "problem", "c")]
    assert summary(checks).startswith("preflight: 1 problem(s) in 3 checks, 1 skipped")
    assert summary(checks[:2]) == "preflight: all 1 checks ok, 1 skipped; nothing was " \
                                  "submitted"
    assert checks[2].line() == "PROBLEM  disk   c"
    with pytest.raises(ValueError, match="unknown check status 'maybe'"):
        Check("hub", "maybe", "x")


def test_the_projects_profiles_merge_as_snakemake_merges_them(tmp_path):
    """slurm/ alone asks for the placeholder account; the slurm-local overlay replaces
    default-resources whole and keeps slurm/'s set-resources."""
    from dfil.cli.preflight import load_profile
    from dfil.util.errors import MissingInputError
    from snakemake_cli import ROOT

    alone = site_from_profile(load_profile([ROOT / "slurm"]))
    assert alone.accounts == {"default-resources.slurm_account": "your-account"}
    local = site_from_profile(load_profile([ROOT / "slurm",
                                            ROOT / "workflow/profiles/slurm-local"]))
    assert local.accounts == {"default-resources.slurm_account": "dfil-local"}
    assert local.gpu_partitions() == {"gpu"}
    assert local.partitions["default-resources.slurm_partition"] == "cpu"
    with pytest.raises(MissingInputError, match=r"--profile .*nowhere: no Snakemake profile"):
        load_profile([tmp_path / "nowhere"])


#: sinfo -h -o "%R %G %f %l %m %c" on a cluster with a 2-day H100 partition of 8-GPU nodes
#: and a 4-hour debug partition.
SINFO_LIMITS = """\
cpu* (null) (null) 7-00:00:00 257000 64
h100 gpu:h100:8(S:0-1) h100 2-00:00:00 1000000+ 96
debug gpu:h100:1 h100 4:00:00 64000 16
"""


def test_parse_sinfo_reads_time_limit_memory_and_cpus():
    cpu, h100, debug = parse_sinfo(SINFO_LIMITS)
    assert (h100.time_limit, h100.mem_mb, h100.cpus, h100.gpus("h100")) == (
        172800, 1000000, 96, 8)
    assert (debug.time_limit, debug.gpus(None), cpu.gpus(None)) == (14400, 1, 0)
    assert (h100.gpus(""), cpu.gpus("")) == (8, 0)  # a class without gpu_model: any
    assert parse_sinfo("gpu gpu:h100:2 (null) infinite 1000 4")[0].time_limit is None


def test_a_class_whose_job_outlasts_the_partition_is_a_problem():
    """72b-4bit asks 1050 min on every attempt: under the h100 partition's 48 h, over the
    debug partition's 4 h."""
    from dfil.cluster.limits import judge_limits

    groups = parse_sinfo(SINFO_LIMITS)
    big = {"gpu": 1, "gpu_model": "h100", "mem_mb": 160000, "runtime": 1050,
           "cpus_per_task": 8}
    (ok,) = judge_limits({"72b-4bit": big}, {"h100"}, groups)
    assert ok == Check("slurm", "ok", "class 72b-4bit: each attempt (1050 min, 160000 MB, 1 "
                       "GPU) fits partition h100")
    (bad,) = judge_limits({"72b-4bit": big}, {"debug"}, groups)
    assert bad.status == "problem"
    assert ("class 72b-4bit: its job does not fit partition debug: runtime 1050 min > "
            "the partition's limit of 240 min; mem_mb 160000 > 64000 MB a node") in bad.text
    assert "every attempt asks the same" in bad.text
    (gpus,) = judge_limits({"x": {**big, "runtime": 60, "mem_mb": 1, "gpu": 2}}, {"debug"},
                           groups)
    assert gpus.text.split(": ", 2)[2].startswith("gpu 2 > 1 h100s a node")
    # no node of the class's GPU type: the gpu_model check says it, not this one
    assert judge_limits({"x": {**big, "gpu_model": "h200"}}, {"h100"}, groups) == []
    # a class without gpu_model (the grid's "": any GPU) is judged on every GPU node
    (anygpu,) = judge_limits({"x": {**big, "runtime": 60, "mem_mb": 1, "gpu": 2,
                                    "gpu_model": ""}}, {"debug"}, groups)
    assert anygpu.text.split(": ", 2)[2].startswith("gpu 2 > 1 GPUs a node")


def test_every_attempt_of_the_paper_grid_fits_a_one_day_partition():
    """Each class's largest job is its configured request, whatever the profile's retries:
    a job stopped at its time limit continues from its checkpoint in a job of the same
    size, so the 72b-4bit class asks 1050 min on its third attempt too, inside 24 h."""
    from dfil.cli.preflight import rule_jobs
    from dfil.cluster.limits import judge_limits
    from dfil.cluster.slurm import _by_class
    from dfil.config.grid import load_grid_files
    from snakemake_cli import ROOT

    grid = load_grid_files([ROOT / "config/paper.yaml"])
    jobs = _by_class(rule_jobs(grid))
    resources = grid.config["resources"]
    assert set(jobs) == {s for s, r in resources.items() if r.get("gpu")} & {
        c.size for c in grid.cells.values()}
    assert jobs["72b-4bit"]["runtime"] == resources["72b-4bit"]["runtime"] == 1050
    day = parse_sinfo("gpu gpu:h100:8(S:0-1) h100 1-00:00:00 2000000 96\n")
    checks = judge_limits(jobs, {"gpu"}, day)
    assert [c.status for c in checks] == ["ok"] * len(jobs)


def test_site_flags_go_through_the_plugins_resources_not_slurm_extra():
    """The executor plugin refuses its own options (--qos, --constraint, ...) inside
    slurm_extra: no slurm_extra of the project's profiles holds one, and neither the
    profiles' text nor the README or docs/cluster.md shows one there, not even in a comment."""
    import re

    from snakemake_executor_plugin_slurm.validation import get_forbidden_slurm_options

    from dfil.cli.preflight import load_profile
    from snakemake_cli import ROOT

    profile = load_profile([ROOT / "slurm", ROOT / "workflow/profiles/slurm-local"])
    extras = [v for k, v in cluster._resources(profile).items() if k.endswith("slurm_extra")]
    assert extras
    for value in extras:
        for pattern in get_forbidden_slurm_options():
            assert not re.search(pattern, str(value)), (value, pattern)
    for doc in (ROOT / "README.md", ROOT / "docs/cluster.md", ROOT / "slurm/config.yaml",
                ROOT / "workflow/profiles/slurm-local/config.yaml"):
        text = doc.read_text()
        assert not re.search(r"slurm_extra[^\n]*--(qos|constraint)", text), doc
        assert not re.search(r"--(qos|constraint)[^\n]*slurm_extra", text), doc


