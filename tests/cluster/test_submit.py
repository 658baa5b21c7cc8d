"""The workflow's sbatch (workflow/sbatch/sbatch, dfil.cluster.submit): a submission
refused for a queue limit is sent again after a wait, never passed on as a failure; one
refused for anything else is passed on with sbatch's words and recorded in its cell's run
directory, which `dfil grid status` reads. SLURM's sbatch and squeue are shell scripts on
PATH printing SLURM 22.05's words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dfil.cluster.submit import (
    REFUSED,
    cell_of,
    queue_limited,
    read_refusal,
    refusal_words,
    run_dir_of,
    submit,
)
from dfil.results.status import cell_status

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "workflow" / "sbatch" / "sbatch"
CAP = ("sbatch: error: AssocMaxSubmitJobLimit\nsbatch: error: Batch job submission failed: "
       "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
       "limits)\n")
WALL = ("sbatch: error: QOSMaxWallDurationPerJobLimit\nsbatch: error: Batch job submission "
        "failed: Job violates accounting/QOS policy (job submit limit, user's size and/or "
        "time limits)\n")
NODES = ("sbatch: error: Batch job submission failed: Requested node configuration is not "
         "available\n")
KEY = "ordinal_standin/tiny-llama/dfil/lam0.5/nfull/na/seed42"
COMMENT = "rule_train_cell_wildcards_" + KEY.replace("/", "_")


def test_queue_limits_are_told_from_other_refusals():
    assert queue_limited(CAP)
    assert queue_limited("sbatch: error: QOSMaxSubmitJobPerUserLimit\n")
    assert queue_limited("sbatch: error: Batch job submission failed: Job violates "
                         "accounting/QOS policy (job submit limit, user's size and/or time "
                         "limits)\n")
    assert not queue_limited(WALL)
    assert not queue_limited(NODES)


def test_the_cell_of_a_submission_from_the_plugins_comment(tmp_path):
    args = ["--parsable", "--job-name", "u", "--comment", COMMENT, "--wrap=x"]
    assert cell_of(args) == ("train_cell", KEY.replace("/", "_"))
    assert cell_of(["--comment", "rule_aggregate"]) is None
    runs = tmp_path / "runs"
    for key in (KEY, KEY.replace("seed42", "seed43")):
        (runs / key).mkdir(parents=True)
        (runs / key / "cell.yaml").write_text("{}")
    assert run_dir_of(tmp_path, KEY.replace("/", "_")) == runs / KEY
    assert run_dir_of(tmp_path, "frog_nothing") is None


def _fake(tmp_path: Path, refusals: list[str]) -> Path:
    """An sbatch refusing with each of ``refusals`` in turn, then accepting (job 4242)."""
    bin_dir = tmp_path / "site-bin"
    bin_dir.mkdir(exist_ok=True)
    for n, words in enumerate(refusals):
        (tmp_path / f"refusal{n}").write_text(words)
    (bin_dir / "sbatch").write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/count 2>/dev/null || echo 0); echo $((n + 1)) > {tmp_path}/count
cat > {tmp_path}/stdin
if [ -f {tmp_path}/refusal$n ]; then cat {tmp_path}/refusal$n >&2; exit 1; fi
echo 4242
""")
    (bin_dir / "squeue").write_text("#!/bin/sh\necho 17\n")
    for name in ("sbatch", "squeue"):
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_a_queue_limit_is_waited_on_and_sent_again(tmp_path):
    sbatch = _fake(tmp_path, [CAP, CAP])
    waits = []
    done = submit(str(sbatch / "sbatch"), ["--parsable"], "#!/bin/sh\ntrue\n", 30,
                  queued=lambda: True, sleep=waits.append)
    assert (done.returncode, done.stdout.strip(), waits) == (0, "4242", [30, 30])
    assert (tmp_path / "stdin").read_text() == "#!/bin/sh\ntrue\n"  # each try gets it


def test_a_refusal_for_anything_else_is_passed_on_at_once(tmp_path):
    sbatch = _fake(tmp_path, [WALL])
    waits = []
    done = submit(str(sbatch / "sbatch"), [], None, 30, queued=lambda: True,
                  sleep=waits.append)
    assert (done.returncode, done.stderr, waits) == (1, WALL, [])
    # a cap with nothing queued is no queue limit: the refusal stands
    (tmp_path / "count").unlink()
    sbatch = _fake(tmp_path, [CAP])
    done = submit(str(sbatch / "sbatch"), [], None, 30, queued=lambda: False,
                  sleep=waits.append)
    assert (done.returncode, waits) == (1, [])


def _run_wrapper(tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PATH": f"{WRAPPER.parent}:{bin_dir}:{os.environ['PATH']}",
               "DFIL_RESULTS": str(tmp_path / "results"), "DFIL_SBATCH_WAIT": "0",
               "DFIL_PYTHON": sys.executable}
    return subprocess.run(f'sbatch --parsable --comment {COMMENT} --wrap="true"', shell=True,
                          env=environ, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_the_workflows_sbatch_records_a_refusal_and_status_shows_it(tmp_path):
    """As the plugin calls it (`sbatch ...` through the shell, this one first on PATH): a
    refusal is passed on and kept in the run directory; `dfil grid status` gives its
    words; an accepted submission of the same rule removes it."""
    run = tmp_path / "results" / "runs" / KEY
    run.mkdir(parents=True)
    (run / "cell.yaml").write_text("{}")
    done = _run_wrapper(tmp_path, _fake(tmp_path, [CAP, NODES]))
    assert (done.returncode, done.stderr, done.stdout) == (1, NODES, "")
    assert int((tmp_path / "count").read_text()) == 2
    record = read_refusal(run)
    assert record["rule"] == "train_cell" and record["refused"] == NODES.strip()
    assert refusal_words(record) == ("sbatch refused its train_cell job: Batch job "
                                     "submission failed: Requested node configuration is "
                                     "not available")
    assert cell_status(run, "train.log", "eval.log") == (refusal_words(record), "train.log")
    done = _run_wrapper(tmp_path, _fake(tmp_path, []))
    assert (done.returncode, done.stdout.strip()) == (0, "4242")
    assert not (run / REFUSED).exists()


def test_route_through_puts_the_workflows_sbatch_first(tmp_path):
    import os
    import sys

    from dfil.cluster.submit import RESULTS_VAR, WAIT_VAR, route_through

    env = {"PATH": "/usr/bin"}
    route_through(tmp_path / "sbatch", tmp_path / "results", env)
    assert env["PATH"] == f"{tmp_path / 'sbatch'}{os.pathsep}/usr/bin"
    assert env[RESULTS_VAR] == str(tmp_path / "results")
    assert env["DFIL_PYTHON"] == sys.executable and env[WAIT_VAR] == "60"
    env = {WAIT_VAR: "5"}
    route_through(tmp_path, tmp_path, env)
    assert env[WAIT_VAR] == "5" and env["PATH"].startswith(str(tmp_path))
