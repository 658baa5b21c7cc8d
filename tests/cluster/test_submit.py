"""The workflow's sbatch (workflow/sbatch/sbatch, dfil.cluster.submit): a submission
refused for a queue limit is sent again after a wait, never passed on as a failure; a
training or evaluation job refused for anything else is recorded in its cell's run
directory and replaced by a one-CPU job writing its failure record with sbatch's words.
SLURM's sbatch and squeue are shell scripts on PATH printing SLURM 22.05's words."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from dfil.cluster.submit import (
    REFUSED,
    STAND_IN,
    cell_of,
    queue_limited,
    read_refusal,
    refusal_words,
    run_dir_of,
    stand_in,
    submit,
)
from dfil.contracts.failure import failure_ahead, failure_words
from dfil.preflight.refused import resubmit_refused
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
KEY = "ordinal_standin/tiny-llama/finetune/lamna/nfull/na/seed42"
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
    """An sbatch refusing with each of ``refusals`` in turn, then accepting (job 4242);
    call n's arguments in ``args<n>``, one a line."""
    bin_dir = tmp_path / "site-bin"
    bin_dir.mkdir(exist_ok=True)
    for old in [*tmp_path.glob("refusal*"), tmp_path / "count"]:
        old.unlink(missing_ok=True)
    for n, words in enumerate(refusals):
        (tmp_path / f"refusal{n}").write_text(words)
    (bin_dir / "sbatch").write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/count 2>/dev/null || echo 0); echo $((n + 1)) > {tmp_path}/count
for arg in "$@"; do printf '%s\\n' "$arg"; done > {tmp_path}/args$n
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


def _run_wrapper(tmp_path: Path, bin_dir: Path, comment: str = COMMENT
                 ) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PATH": f"{WRAPPER.parent}:{bin_dir}:{os.environ['PATH']}",
               "DFIL_RESULTS": str(tmp_path / "results"), "DFIL_SBATCH_WAIT": "0",
               "DFIL_PYTHON": sys.executable}
    return subprocess.run(f"sbatch --parsable --job-name u1 --output 'logs/u1.log' "
                          f"--export=ALL --comment {comment} -A 'proj' -p 'accel' "
                          f"--qos=gpu-normal -t 2880 --mem 32000 --ntasks=1 --gres=gpu:a100:1 "
                          f"--cpus-per-task=8 -D {tmp_path} --wrap=\"true\"", shell=True,
                          env=environ, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def _cell_run(tmp_path: Path) -> Path:
    """A run directory of the smoke grid's cell ``KEY`` with its cell.yaml."""
    from dfil.config.cell import cell_of as resolved
    from dfil.config.cell import dump_cell
    from dfil.config.grid import load_grid_files

    grid = load_grid_files([ROOT / "config" / "smoke.yaml"])
    run = tmp_path / "results" / "runs" / KEY
    run.mkdir(parents=True)
    (run / "cell.yaml").write_text(dump_cell(resolved(grid.cells[KEY].config)))
    return run


def test_a_stand_in_keeps_what_snakemake_follows_and_asks_one_cpu():
    args = ["--parsable", "--job-name", "u1", "--output", "logs/u1.log", "--export=ALL",
            "--comment", COMMENT, "-A", "proj", "-p", "accel", "--qos=gpu-normal", "-t",
            "2880", "--mem", "32000", "--gres=gpu:a100:1", "--requeue", "-D", "/w",
            "--wrap=dfil train x"]
    kept = ["--parsable", "--job-name", "u1", "--output", "logs/u1.log", "--export=ALL",
            "--comment", COMMENT, "-D", "/w", *STAND_IN]
    assert stand_in(args, None, ["dfil", "refused", "--run", "/r x"]) == (
        [*kept, "--wrap=dfil refused --run '/r x'"], None)
    assert stand_in(args[:-1], "#!/bin/sh\ndfil train x\n", ["dfil", "refused"]) == (
        kept, "#!/bin/sh\ndfil refused\n")  # the plugin's script on standard input


def test_a_refused_cell_job_is_recorded_as_its_failure_by_a_job_in_its_place(tmp_path):
    """As the plugin calls it (`sbatch ...` through the shell, this one first on PATH): a
    refusal is kept in the run directory and a one-CPU job in its place writes the cell's
    failure record with sbatch's words, which `dfil grid status` and the tables give; the
    next run moves the record aside to submit the job again, and an accepted submission
    of the same rule removes the refusal."""
    run = _cell_run(tmp_path)
    done = _run_wrapper(tmp_path, _fake(tmp_path, [CAP, NODES]))
    assert (done.returncode, done.stdout) == (0, "4242\n")  # the stand-in's job id
    # never "submission failed": Snakemake's plugin takes those words for a failed job
    assert done.stderr == (
        f"sbatch: dfil: the train_cell job of {KEY.replace('/', '_')} was refused "
        "(Requested node configuration is not available); job 4242 records that as its "
        "failure\n")
    assert int((tmp_path / "count").read_text()) == 3
    record = read_refusal(run)
    assert record["rule"] == "train_cell" and record["refused"] == NODES.strip()
    words = refusal_words(record)
    assert words == ("sbatch refused its train_cell job: Batch job submission failed: "
                     "Requested node configuration is not available")
    assert cell_status(run, "train.log", "eval.log") == (words, "train.log")
    sent = (tmp_path / "args2").read_text().splitlines()
    assert not {"-A", "-p", "--qos=gpu-normal", "--gres=gpu:a100:1"} & set(sent)
    command = shlex.split(sent[-1].removeprefix("--wrap="))
    assert command[1:] == ["-m", "dfil", "refused", "--run", str(run.resolve()), "--stage",
                           "train"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    summary = json.loads((run / "train_summary.json").read_text())
    assert (summary["failed"]["reason"], summary["failed"]["message"]) == ("refused", words)
    assert cell_status(run, "train.log", "eval.log") == (words, "train.log")
    assert failure_words("refused").startswith("not run: the cluster refused its job")
    assert resubmit_refused([run]) == [f"dfil: {run}: its train job was refused last time "
                                       f"({words}); submitting it again"]
    assert not (run / "train_summary.json").exists()
    assert (run / "refused" / "train_summary.json").is_file()
    done = _run_wrapper(tmp_path, _fake(tmp_path, []))
    assert (done.returncode, done.stdout.strip()) == (0, "4242")
    assert not (run / REFUSED).exists()


def test_a_refused_job_of_another_rule_or_whose_stand_in_is_refused_fails(tmp_path):
    run = _cell_run(tmp_path)
    done = _run_wrapper(tmp_path, _fake(tmp_path, [NODES, NODES]))
    assert (done.returncode, done.stderr, done.stdout) == (1, NODES, "")
    assert read_refusal(run)["refused"] == NODES.strip()
    done = _run_wrapper(tmp_path, _fake(tmp_path, [NODES]), comment="rule_aggregate")
    assert (done.returncode, done.stderr) == (1, NODES)
    assert int((tmp_path / "count").read_text()) == 1  # nothing sent in its place


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


def test_a_refused_frozen_features_job_leaves_its_stamp_and_each_cell_reading_it_records_it(
        tmp_path, monkeypatch, capsys):
    """A frozen_features job refused: its stand-in writes the stamp with sbatch's words, a
    cell that reads the stamp records `refused` with them (keep-going) or stops naming
    them, and the next run removes the stamp and the cell's record to submit both again."""
    from dfil.cli import main as dfil
    from dfil.preflight.featurestamps import stale_stamps

    run = _cell_run(tmp_path)
    done = _run_wrapper(tmp_path, _fake(tmp_path, [NODES]),
                        comment="rule_frozen_features_wildcards_tiny-llama-0a1b2c3d4e5f_train")
    assert (done.returncode, done.stdout) == (0, "4242\n")
    sent = (tmp_path / "args1").read_text()  # sbatch's words span lines: the wrap last
    stamp = tmp_path / "results" / "features" / "tiny-llama-0a1b2c3d4e5f" / "train.json"
    command = shlex.split(sent[sent.index("--wrap=") + len("--wrap="):])
    assert command[3:7] == ["refused", "--stamp", str(stamp.resolve()), "--words"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    words = ("sbatch refused its frozen_features job: Batch job submission failed: "
             "Requested node configuration is not available")
    assert json.loads(stamp.read_text())["sbatch_refused"] == words
    assert failure_ahead([stamp]) == "refused"  # the cell's jobs ask for no GPU
    train = ["train", "--cell", str(run / "cell.yaml"), "--out", str(run), "--attempt", "1",
             "--features", str(stamp)]
    monkeypatch.delenv("DFIL_LAST_ATTEMPT", raising=False)
    assert dfil(train) == 2  # without keep-going: a failure naming sbatch's words
    assert words in capsys.readouterr().err
    monkeypatch.setenv("DFIL_LAST_ATTEMPT", "3")
    assert dfil(train) == 0
    failed = json.loads((run / "train_summary.json").read_text())["failed"]
    assert (failed["reason"], failed["message"], failed["stage"]) == ("refused", words, "train")
    assert cell_status(run, "train.log", "eval.log")[0] == words
    assert stale_stamps(stamp.parents[1], apply=True) == [
        f"dfil: {stamp}: its frozen_features job was refused last time ({words}); "
        "submitting it again"]
    assert not stamp.exists()
    assert len(resubmit_refused([run])) == 1 and not (run / "train_summary.json").exists()


def test_a_refused_pack_jobs_record_is_found_from_its_wildcards(tmp_path):
    from dfil.cluster.submit import pack_record_of

    results = tmp_path / "results" / "g"
    for seed in (1, 2):
        run = results / "runs" / "frog" / "tiny" / "dfil" / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "cell.yaml").write_text("name: x\n")
    assert cell_of(["--comment", "rule_train_pack_wildcards_frog_tiny_dfil"]) == (
        "train_pack", "frog_tiny_dfil")
    assert pack_record_of(results, "frog_tiny_dfil") == results / "packs/frog/tiny/dfil.json"
    assert pack_record_of(results, "frog_tiny_dfil_pack2of3") == (
        results / "packs/frog/tiny/dfil/pack2of3.json")
    assert pack_record_of(results, "frog_tiny_other") is None
