"""Which partition a training or evaluation job goes to: the profile's GPU partition
where it asks a GPU, its CPU partition otherwise (a job that only records a failure)."""

from __future__ import annotations

from dfil.cluster.partitions import job_partition, profile_text
from dfil.cluster.slurm import site_from_profile


def test_job_partition_follows_the_gpu_request():
    assert job_partition({"gpu": 1, "mem_mb": 32000}, "cpu", "gpu") == "gpu"
    assert job_partition({"gpu": 0, "mem_mb": 4000}, "cpu", "gpu") == "cpu"
    assert job_partition({"mem_mb": 4000}, "cpu", "gpu") == "cpu"  # no gpu key: none asked
    # A profile naming no GPU partition sends every job to its default one.
    assert job_partition({"gpu": 2}, "batch", None) == "batch"
    assert job_partition({"gpu": 0}, None, "gpu") is None  # no profile: the site's default


def test_profile_text_unquotes_and_drops_empty_values():
    assert profile_text("'gpu'") == "gpu"
    assert profile_text('"h100-q" ') == "h100-q"
    assert profile_text("''") is None
    assert profile_text(None) is None


def test_site_reads_the_gpu_partition_resource():
    profile = {"default-resources": {"slurm_account": "a", "slurm_partition": "cpu",
                                     "gpu_partition": "'h100'"},
               "set-resources": {"train_cell": {"slurm_extra": "'--signal=TERM@300'"}}}
    site = site_from_profile(profile)
    assert site.partitions == {"default-resources.slurm_partition": "cpu",
                               "default-resources.gpu_partition": "h100"}
    assert site.gpu_partitions() == {"h100"}
    # A rule's own slurm_partition still wins for that rule.
    profile["set-resources"]["evaluate_cell"] = {"slurm_partition": "a100"}
    assert site_from_profile(profile).gpu_partitions() == {"h100", "a100"}
