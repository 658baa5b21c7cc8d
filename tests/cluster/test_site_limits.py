"""Each rule's jobs against every limit a SLURM site enforces: the partition, account and
QOS each rule's jobs carry (its own resources over the profile's defaults), the
partitions' AllowAccounts, AllowQos and MaxTime, the QOS's MaxWall and GPU limits, the
associations' MaxSubmitJobs and MaxJobs; on the output of SLURM 22.05's commands written
by hand for a site shaped as a new user met it: a `standard` partition and an `accel`
one with two A100s a node that only the project's account and the GPU QOS may use, QOS
`short` (4 h) and `gpu-normal` (1 day, 2 GPUs a user), the user's default account
`general`, 20 jobs queued at most on each association."""

from __future__ import annotations

from dfil.cluster.checks import Check, problems
from dfil.cluster.fit import judge_rule_job, judge_submit_cap
from dfil.cluster.nodes import parse_sinfo
from dfil.cluster.policy import (
    Association,
    QosLimits,
    association,
    parse_associations,
    parse_partitions,
    parse_qos_limits,
    tres_gpus,
)
from dfil.cluster.rules import LIGHT, RuleJob, Setting, carried, resolve, rule_jobs
from dfil.cluster.slurm import site_from_profile, slurm_checks

SINFO = """\
standard* (null) (null) 2-00:00:00 16000 8
accel gpu:a100:2(S:0) (null) 2-00:00:00 16000 8
"""
SCONTROL = (
    "PartitionName=standard AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
    "MaxTime=2-00:00:00 State=UP\n"
    "PartitionName=accel AllowGroups=ALL AllowAccounts=proj-dfil AllowQos=gpu-normal "
    "Default=NO MaxTime=2-00:00:00 State=UP\n")
QOS = "normal||||\nshort|04:00:00|||\ngpu-normal|1-00:00:00|gres/gpu=2||\n"
ASSOC = "general||normal,short|normal|20|\nproj-dfil||gpu-normal,normal,short|normal|20|10\n"
USER = "general\n"
OUTPUTS = {"sinfo": (0, SINFO, ""), "scontrol": (0, SCONTROL, ""),
           "sacctmgr qos": (0, QOS, ""), "sacctmgr assoc": (0, ASSOC, ""),
           "sacctmgr user": (0, USER, "")}
GPU = {"gpu": 1, "gpu_model": "a100", "mem_mb": 8000, "runtime": 120, "cpus_per_task": 4}
LIGHT_JOB = {"gpu": 0, "mem_mb": 4000, "runtime": 30, "cpus_per_task": 1}
JOBS = {"train_cell": {"7b": GPU}, "evaluate_cell": {"7b": {**GPU, "runtime": 30}},
        "frozen_features": {"7b": {**GPU, "runtime": 30}}, "acceptance_run": {"7b": GPU},
        LIGHT: {"cpu": LIGHT_JOB}}
GPU_QOS = {"qos": "gpu-normal"}
#: The profile that fits: the work's account, the GPU QOS on each of the four GPU rules.
FITS = {"jobs": 20,
        "default-resources": {"slurm_account": "proj-dfil", "slurm_partition": "standard",
                              "gpu_partition": "accel", "qos": "short"},
        "set-resources": {rule: GPU_QOS for rule in ("train_cell", "evaluate_cell",
                                                      "frozen_features", "acceptance_run")}}


def test_parse_partitions_reads_accounts_qos_and_maxtime():
    standard, accel = parse_partitions(SCONTROL).values()
    assert (standard.allow_accounts, standard.allow_qos, standard.max_time) == (
        None, None, 172800)
    assert (accel.allow_accounts, accel.allow_qos) == ({"proj-dfil"}, {"gpu-normal"})
    deny = parse_partitions("PartitionName=x DenyAccounts=Guest DenyQos=long "
                            "MaxTime=UNLIMITED\n")["x"]
    assert (deny.deny_accounts, deny.deny_qos, deny.max_time) == ({"guest"}, {"long"}, None)


def test_parse_qos_limits_reads_maxwall_and_gpu_limits():
    limits = parse_qos_limits(QOS)
    assert limits["short"] == QosLimits("short", 14400.0)
    assert limits["gpu-normal"] == QosLimits("gpu-normal", 86400.0, gpus_per_user=2)
    assert parse_qos_limits("big||cpu=64|gres/gpu:a100=4|50\n")["big"] == QosLimits(
        "big", None, None, 4, 50)
    assert tres_gpus("cpu=8,gres/gpu:a100=4,gres/gpu:h100=2") == 2
    assert tres_gpus("cpu=8") is None


def test_parse_associations_and_the_one_a_job_runs_under():
    assocs = parse_associations(ASSOC + "proj-dfil|accel|gpu-normal|gpu-normal|5|\n")
    assert assocs[0] == Association("general", "", frozenset({"normal", "short"}),
                                    "normal", 20, None)
    assert association(assocs, "PROJ-DFIL", "accel").max_submit == 5
    assert association(assocs, "proj-dfil", "standard").max_jobs == 10
    assert association(assocs, "other", None) is None


def test_each_rule_carries_its_own_resources_over_the_defaults():
    site = site_from_profile(FITS)
    partition, account, qos = carried(site.resources, "frozen_features", gpu=True)
    assert partition == Setting("accel", "default-resources.gpu_partition")
    assert account == Setting("proj-dfil", "default-resources.slurm_account")
    assert qos == Setting("gpu-normal", "set-resources.frozen_features.qos")
    light = carried(site.resources, LIGHT, gpu=False)
    assert light[0] == Setting("standard", "default-resources.slurm_partition")
    assert light[2] == Setting("short", "default-resources.qos")
    # the plugin's slurm-qos is the last resort, below every qos resource
    bare = site_from_profile({"slurm-qos": "normal"})
    assert carried(bare.resources, "train_cell", gpu=True) == (
        None, None, Setting("normal", "slurm-qos"))


def test_unset_settings_take_the_sites_defaults():
    job = RuleJob("train_cell", "7b", GPU, None, None, None)
    done = resolve(job, "standard", "general", lambda account, partition: "normal")
    assert done.partition == Setting("standard", "the site's default partition")
    assert done.account == Setting("general", "the user's default account")
    assert done.qos == Setting("normal", "the default QOS of association general")


def test_a_site_where_everything_fits_passes(fake_slurm):
    run, calls = fake_slurm(OUTPUTS)
    checks = slurm_checks(site_from_profile(FITS), JOBS, run)
    assert not problems(checks), [c.text for c in problems(checks)]
    assert Check("slurm", "ok", "rule frozen_features (class 7b): partition accel "
                 "(default-resources.gpu_partition), account proj-dfil (default-resources."
                 "slurm_account), qos gpu-normal (set-resources.frozen_features.qos): "
                 "allowed, and its job (30 min, 8000 MB, 1 GPU) within the partition's and "
                 "the QOS's limits") in checks
    assert Check("slurm", "ok", "the profile's jobs: 20 is within the site's submit cap "
                 "(MaxSubmitJobs of association proj-dfil 20)") in checks
    assert Check("slurm", "ok", "association proj-dfil: at most 10 of its jobs run at once "
                 "(MaxJobs); the rest wait queued") in checks
    assert [c[0] if c[0] != "sacctmgr" else c[4] for c in calls] == [
        "sinfo", "scontrol", "qos", "assoc"]


def test_every_misfit_of_the_grid_in_one_round(fake_slurm):
    """No account set (the user's default, general, is not allowed on accel), the GPU QOS
    on training only, a day-long training, 3 GPUs and 32 GB, 100 jobs: each rule's line
    names all its misfits, and the submit cap its line."""
    run, _ = fake_slurm(OUTPUTS)
    profile = {"jobs": 100,
               "default-resources": {"slurm_partition": "standard", "gpu_partition": "accel",
                                     "qos": "short"},
               "set-resources": {"train_cell": GPU_QOS}}
    big = {"gpu": 3, "gpu_model": "a100", "mem_mb": 32000, "runtime": 1500,
           "cpus_per_task": 4}
    jobs = {"train_cell": {"7b": big}, "evaluate_cell": {"7b": {**GPU, "runtime": 300}},
            LIGHT: {"cpu": LIGHT_JOB}}
    checks = slurm_checks(site_from_profile(profile), jobs, run)
    train, evaluate, cap = (c.text for c in problems(checks))
    assert train.startswith(
        "rule train_cell (class 7b): partition accel (default-resources.gpu_partition), "
        "account general (the user's default account), qos gpu-normal (set-resources."
        "train_cell.qos): ")
    for misfit in (
            "partition accel does not allow account general (the user's default account) "
            "(AllowAccounts: proj-dfil): set slurm_account in default-resources",
            "qos gpu-normal (set-resources.train_cell.qos) is not one account general may "
            "use (normal, short): set qos in set-resources.train_cell",
            "runtime 1500 min > qos gpu-normal's MaxWall 1440 min: set qos in "
            "set-resources.train_cell to one whose MaxWall takes it",
            "gpu 3 > the 2 GPU(s) qos gpu-normal lets a user (MaxTRESPU)",
            "mem_mb 32000 > 16000 MB a node (lower it in the grid config's resources:)",
            "gpu 3 > 2 a100s a node"):
        assert misfit in train, misfit
    assert ("partition accel does not allow qos short (default-resources.qos) (AllowQos: "
            "gpu-normal): set qos in set-resources.evaluate_cell to one it allows") in evaluate
    assert "runtime 300 min > qos short's MaxWall 240 min" in evaluate
    assert cap == ("the profile's jobs: 100 > the site's submit cap (MaxSubmitJobs of "
                   "association general 20): sbatch refuses each job past 20 queued; set the "
                   "line `jobs: 20` in the SITE SETTINGS block of the slurm profile "
                   "(slurm/config.yaml)")
    light = next(c for c in checks if c.text.startswith(LIGHT))
    assert light.status == "ok"


def test_a_partitions_maxtime_and_a_qos_gpu_limit_per_job():
    policy = parse_partitions("PartitionName=accel MaxTime=04:00:00\n")
    job = RuleJob("evaluate_cell", "7b", {**GPU, "runtime": 300, "gpu": 2},
                  Setting("accel", "default-resources.gpu_partition"),
                  Setting("proj-dfil", "default-resources.slurm_account"),
                  Setting("big", "default-resources.qos"))
    check = judge_rule_job(job, policy, {"big": QosLimits("big", gpus_per_job=1)},
                           None, [])
    assert check.status == "problem"
    assert ("runtime 300 min > partition accel's MaxTime 240 min: lower the class's "
            "runtime in the grid config's resources:, or send evaluate_cell to a partition "
            "that takes it (slurm_partition in set-resources.evaluate_cell)") in check.text
    assert "gpu 2 > the 1 GPU(s) qos big lets a job (MaxTRES)" in check.text


def test_a_class_without_gpu_model_is_judged_on_every_gpu_node():
    """gpu_model "" (the grid's default) takes any GPU: a job asking more GPUs than any
    node has is a problem, as for a named type, not a job asking none."""
    groups = parse_sinfo("accel gpu:a100:2 a100 1-00:00:00 64000 16\n")
    job = RuleJob("train_cell", "7b", {**GPU, "gpu": 3, "gpu_model": ""},
                  Setting("accel", "default-resources.gpu_partition"), None, None)
    check = judge_rule_job(job, None, None, None, groups)
    assert check.status == "problem" and "gpu 3 > 2 GPUs a node" in check.text


def test_submit_cap_reads_the_qos_per_user_cap_and_a_zero_maxjobs():
    assoc = Association("proj", max_submit=50, max_jobs=0)
    checks = judge_submit_cap(40, [(assoc, QosLimits("gpu", max_submit_per_user=30))])
    assert checks[0].status == "problem" and "set the line `jobs: 30`" in checks[0].text
    assert "MaxSubmitJobsPU of qos gpu 30" in checks[0].text
    assert checks[1].status == "problem" and "association proj: MaxJobs 0" in checks[1].text
    assert judge_submit_cap(100, [(None, None)]) == []


def test_rule_jobs_follow_the_grid(fake_slurm):
    site = site_from_profile(FITS)
    jobs = rule_jobs(site.resources, JOBS)
    assert [j.label for j in jobs] == [
        "rule train_cell (class 7b)", "rule evaluate_cell (class 7b)",
        "rule frozen_features (class 7b)", "rule acceptance_run (class 7b)",
        f"{LIGHT} (class cpu)"]


def test_a_seeds_summary_after_its_pack_carries_its_rules_qos_to_the_cpu_partition(
        fake_slurm):
    """train_cell's class cpu (with the grid's pack, a seed's summary job) goes to the
    CPU partition under train_cell's own QOS: a CPU partition that refuses the GPU QOS is
    a problem named for that rule and class; one that takes it fits."""
    jobs = {"train_cell": {"7b": GPU, "cpu": LIGHT_JOB}, LIGHT: {"cpu": LIGHT_JOB}}
    strict = SCONTROL.replace("AllowQos=ALL Default=YES", "AllowQos=normal,short Default=YES")
    run, _ = fake_slurm({**OUTPUTS, "scontrol": (0, strict, "")})
    (bad,) = problems(slurm_checks(site_from_profile(FITS), jobs, run))
    assert bad.text.startswith("rule train_cell (class cpu): partition standard "
                               "(default-resources.slurm_partition)")
    assert ("partition standard does not allow qos gpu-normal (set-resources.train_cell.qos)"
            in bad.text)
    run, _ = fake_slurm(OUTPUTS)
    assert not problems(slurm_checks(site_from_profile(FITS), jobs, run))


def test_a_packed_grid_checks_its_seeds_summary_jobs_on_the_cpu_class():
    from dfil.cli.preflight import rule_jobs as grid_rule_jobs
    from dfil.config.grid import Grid, load_grid_files
    from snakemake_cli import ROOT

    smoke = load_grid_files([ROOT / "config/smoke.yaml"])
    assert smoke.config["pack"]
    jobs = grid_rule_jobs(smoke)
    assert jobs["train_cell"]["cpu"] == smoke.config["resources"]["cpu"]
    assert set(jobs["train_pack"]) == {"tiny"}
    alone = grid_rule_jobs(Grid({**smoke.config, "pack": False}))
    assert "cpu" not in alone["train_cell"] and "train_pack" not in alone


def test_a_sacctmgr_that_fails_leaves_its_limits_unchecked(fake_slurm):
    run, _ = fake_slurm({**OUTPUTS, "sacctmgr qos": (1, "", "no dbd")})
    checks = slurm_checks(site_from_profile(FITS), JOBS, run)
    assert Check("slurm", "skipped", "`sacctmgr -n -P show qos format=name,maxwall,"
                 "maxtrespu,maxtres,maxsubmitpu` failed (no dbd): the QOS's MaxWall and GPU "
                 "limits not checked") in checks
    assert not problems(checks)
    run, _ = fake_slurm({**OUTPUTS, "sacctmgr assoc": (0, "x|y\n", "")})
    (bad,) = problems(slurm_checks(site_from_profile(FITS), JOBS, run))
    assert "sacctmgr assoc output line 1: expected 'account|partition|qos|" in bad.text


def test_memory_and_cpus_are_judged_before_the_gpu_type_is_fixed(fake_slurm):
    """The grid asks h100 on a100 nodes with 32 GB and 16 CPUs a job: the type is one
    problem, memory and CPUs on the partition's GPU nodes the rule's, in the same round."""
    run, _ = fake_slurm(OUTPUTS)
    job = {"gpu": 1, "gpu_model": "h100", "mem_mb": 32000, "runtime": 60, "cpus_per_task": 16}
    checks = problems(slurm_checks(site_from_profile(FITS), {"train_cell": {"7b": job}}, run))
    assert [c.text.split(":")[0] for c in checks] == ["class 7b", "rule train_cell (class 7b)"]
    assert "mem_mb 32000 > 16000 MB a node" in checks[1].text
    assert "cpus_per_task 16 > 8 CPUs a node" in checks[1].text
    assert "h100s a node" not in checks[1].text
