"""The ``sbatch`` a SLURM run of the workflow submits with: the site's own, with a
submission refused for a queue limit waited on and sent again, and one refused for any
other reason recorded in its cell's run directory with sbatch's words.

The executor plugin submits each job by running ``sbatch ...`` through the shell, so the
first ``sbatch`` on the Snakemake process's PATH; the workflow puts
``workflow/sbatch/`` first there for a SLURM run (``workflow/rules/submit.smk``), whose
``sbatch`` runs :func:`main`. A site's queue cap (MaxSubmitJobs of the association, or
the QOS's per user) refuses a job past the cap::

    sbatch: error: AssocMaxSubmitJobLimit
    sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job
    submit limit, user's size and/or time limits)

Snakemake would count it as the job's failure and, with its retries, send it again at
once into the still full queue. Here such a refusal (:func:`queue_limited`) is waited on
(:data:`WAIT_VAR` seconds, 60 by default) and the job sent again, as long as the user
has jobs queued (a cap with nothing queued is no queue limit: the refusal stands). Any
other refusal of a training or evaluation job is written to its run directory
(:data:`REFUSED`), and in the job's place a small CPU job is sent (:func:`stand_in`: the
same name, log and comment, so Snakemake follows it as the job; no partition, account,
QOS, GPU or time of the refused one) that writes the cell's failure record with sbatch's
words (``dfil refused``): the DAG goes on, and the tables and ``dfil grid status`` say
why the cell did not run. A refused frozen_features job's stand-in writes its stamp with
sbatch's words, and each cell that reads it records ``refused`` with them. The next run
moves those records aside before the DAG is built and submits the jobs again
(:mod:`dfil.preflight.refused`, :mod:`dfil.preflight.featurestamps`). A refusal of any
other job, or one whose stand-in is refused too, is passed on as it is.
"""

from __future__ import annotations

import datetime
import json
import os
import pwd
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

#: A run directory's record of the last submission sbatch refused.
REFUSED = "sbatch_refused.json"
#: How long to wait before sending a queue-limited submission again (seconds).
WAIT_VAR = "DFIL_SBATCH_WAIT"
#: The directory of the workflow's ``sbatch`` (set by it), skipped on PATH.
DIR_VAR = "DFIL_SBATCH_DIR"
#: The grid's results directory (``results/<grid>``), set by the workflow.
RESULTS_VAR = "DFIL_RESULTS"
#: The rules whose jobs have a run directory (``<results>/runs/<key>``).
CELL_RULES = ("train_cell", "evaluate_cell")
#: The rule whose job writes a frozen-feature stamp (``<results>/features/<fset>.json``).
FEATURE_RULE = "frozen_features"
#: The rule whose job trains a configuration's seeds together (``<results>/packs/<pack>.json``).
PACK_RULE = "train_pack"
#: A pack's name past its configuration, where the configuration's seeds fill several.
_PART = re.compile(r"pack\d+of\d+")
#: SLURM's reasons for a refusal at a submit cap.
_QUEUE_REASON = re.compile(r"\b(Assoc|QOS)\w*(MaxSubmitJob|GrpSubmitJob)\w*Limit\b")
#: SLURM's generic refusal by an accounting or QOS limit, and a named reason beside it.
_POLICY = "Job violates accounting/QOS policy"
_REASON = re.compile(r"sbatch: error: (\w+Limit)\s*$", re.M)


def route_through(sbatch_dir: Path, results: Path, env=os.environ) -> None:
    """Put the workflow's ``sbatch`` (in ``sbatch_dir``) first on ``env``'s PATH, with what
    it needs: the grid's ``results``, this interpreter (``DFIL_PYTHON``), and the wait
    before a queue-limited submission is sent again (:data:`WAIT_VAR`, 60 s unless set)."""
    env["PATH"] = f"{sbatch_dir}{os.pathsep}{env.get('PATH', '')}"
    env[RESULTS_VAR] = str(results)
    env["DFIL_PYTHON"] = sys.executable
    env.setdefault(WAIT_VAR, "60")


def queue_limited(stderr: str) -> bool:
    """Whether sbatch's ``stderr`` refuses for a queue limit: a submit cap named
    (``AssocMaxSubmitJobLimit``, ``QOSMaxSubmitJobPerUserLimit``, ...), or the generic
    accounting-policy refusal with no other limit named."""
    if _QUEUE_REASON.search(stderr):
        return True
    return _POLICY in stderr and not _REASON.search(stderr)


def real_sbatch(path: str, own: Path) -> str | None:
    """The first ``sbatch`` on ``path`` (a PATH value) outside the directory ``own``."""
    for entry in path.split(os.pathsep):
        if not entry or Path(entry).resolve() == own.resolve():
            continue
        found = Path(entry) / "sbatch"
        if found.is_file() and os.access(found, os.X_OK):
            return str(found)
    return None


def cell_of(args: Sequence[str]) -> tuple[str, str] | None:
    """(rule, wildcards) of a training, evaluation, frozen-feature or pack job from the
    plugin's ``--comment rule_<rule>_wildcards_<wildcards>`` (the run key, feature set or
    pack, each ``/`` an ``_``); None for any other job."""
    for flag, value in zip(args, args[1:], strict=False):
        if flag == "--comment":
            for rule in (*CELL_RULES, FEATURE_RULE, PACK_RULE):
                head = f"rule_{rule}_wildcards_"
                if value.startswith(head) and value != head:
                    return rule, value[len(head):]
    return None


def run_dir_of(results: Path, wildcards: str) -> Path | None:
    """The run directory under ``results/runs`` whose key reads as ``wildcards`` with
    each ``/`` an ``_``; None where none, or more than one, does."""
    runs = results / "runs"
    found = [path.parent for path in runs.glob("**/cell.yaml")
             if str(path.parent.relative_to(runs)).replace("/", "_") == wildcards]
    return found[0] if len(found) == 1 else None


def pack_record_of(results: Path, wildcards: str) -> Path | None:
    """The record of the pack whose wildcards read ``wildcards``: a configuration (a run
    directory's parent under ``results/runs``), with ``_pack<i>of<n>`` where its seeds
    fill several packs; None where no configuration, or more than one, reads so."""
    runs = results / "runs"
    configs = {path.parent.parent.relative_to(runs).as_posix()
               for path in runs.glob("**/cell.yaml")}
    found = []
    for config in configs:
        flat = config.replace("/", "_")
        if wildcards == flat:
            found.append(config)
        elif wildcards.startswith(f"{flat}_") and _PART.fullmatch(wildcards[len(flat) + 1:]):
            found.append(f"{config}/{wildcards[len(flat) + 1:]}")
    return results / "packs" / f"{found[0]}.json" if len(found) == 1 else None


def stamp_of(results: Path, wildcards: str) -> Path:
    """The stamp of the feature set whose wildcards read ``wildcards``
    (``<group>_<item set>``: an item set has no ``_``)."""
    group, items = wildcards.rsplit("_", 1)
    return results / "features" / group / f"{items}.json"


def record_refusal(run_dir: Path, rule: str, words: str, command: Sequence[str],
                   now: datetime.datetime | None = None) -> Path:
    """Write :data:`REFUSED` in ``run_dir``: the rule, sbatch's words, the command, when."""
    stamp = (now or datetime.datetime.now().astimezone()).isoformat(timespec="seconds")
    path = run_dir / REFUSED
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"rule": rule, "refused": words.strip(), "when": stamp,
                               "command": shlex.join(command)}, indent=1) + "\n")
    tmp.replace(path)
    return path


def read_refusal(run_dir: Path) -> dict | None:
    """The :data:`REFUSED` record of ``run_dir``, or None (none, or unreadable)."""
    try:
        record = json.loads((run_dir / REFUSED).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and "refused" in record else None


def _one_line(stderr: str, *prefixes: str) -> str:
    """sbatch's ``stderr`` in one line, each line's ``sbatch: error:`` and ``prefixes``
    left out."""
    lines = []
    for line in stderr.splitlines():
        for prefix in ("sbatch: error: ", *prefixes):
            line = line.removeprefix(prefix)
        if line.strip():
            lines.append(line.strip())
    return "; ".join(lines)


def refusal_words(record: dict) -> str:
    """What ``dfil grid status`` says of a refused submission."""
    return (f"sbatch refused its {record.get('rule', 'job')} job: "
            f"{_one_line(str(record['refused']))}")


def _queued() -> bool:
    """Whether this user has jobs in SLURM's queue (``squeue`` failing: assumed so)."""
    user = pwd.getpwuid(os.getuid()).pw_name
    done = subprocess.run(["squeue", "-h", "-u", user, "-o", "%i"], capture_output=True,
                          text=True, check=False)
    return done.returncode != 0 or bool(done.stdout.strip())


def submit(sbatch: str, args: Sequence[str], stdin: str | None, wait: float,
           queued: Callable[[], bool] = _queued,
           sleep: Callable[[float], None] = time.sleep) -> subprocess.CompletedProcess:
    """Run ``sbatch args`` until it is accepted or refused for anything but a queue limit
    while the user has jobs queued (``queued``), ``wait`` seconds between tries."""
    while True:
        done = subprocess.run([sbatch, *args], input=stdin, capture_output=True, text=True,
                              check=False)
        if done.returncode == 0 or not queue_limited(done.stderr) or not queued():
            return done
        sleep(wait)


#: The plugin's flags that a stand-in job keeps: Snakemake follows a job by its name, log
#: and comment; the working directory and cluster place it. Every other flag goes.
_KEPT = {"--job-name", "--output", "--comment", "-D", "--chdir", "--clusters", "-M"}
_KEPT_BARE = {"--parsable", "--export=ALL"}
#: What a stand-in job asks for: one CPU for a few minutes.
STAND_IN = ["--ntasks=1", "--cpus-per-task=1", "--mem=1000", "--time=10"]


def stand_in(args: Sequence[str], stdin: str | None, command: Sequence[str]
             ) -> tuple[list[str], str | None]:
    """The sbatch arguments and standard input of a job in the place of the refused
    ``args``: the plugin's own name, log, comment and directory (``--flag value`` or
    ``--flag=value``), one CPU for :data:`STAND_IN`, running ``command`` (by ``--wrap`` as
    the plugin did, else as the script on standard input)."""
    kept, wrapped, i = [], False, 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        takes_value = "=" not in arg and name.startswith("-") and i + 1 < len(args) and (
            not args[i + 1].startswith("-"))
        if arg in _KEPT_BARE:
            kept.append(arg)
        elif name in _KEPT:
            kept.extend(args[i:i + 2] if takes_value else [arg])
        elif name == "--wrap":
            wrapped = True
        i += 2 if takes_value else 1
    script = shlex.join(command)
    if wrapped:
        return [*kept, *STAND_IN, f"--wrap={script}"], None
    return [*kept, *STAND_IN], f"#!/bin/sh\n{script}\n" if stdin is not None else None


def _record_in_place(sbatch: str, args: Sequence[str], stdin: str | None,
                     record: list[str]) -> subprocess.CompletedProcess:
    """Send the job that writes the refused job's output as its failure (``dfil refused``
    with ``record``, its arguments)."""
    python = os.environ.get("DFIL_PYTHON", sys.executable)
    new_args, new_stdin = stand_in(args, stdin, [python, "-m", "dfil", "refused", *record])
    return subprocess.run([sbatch, *new_args], input=new_stdin, capture_output=True,
                          text=True, check=False)


def _refused(rule: str, wildcards: str, results: Path, words: str,
             args: Sequence[str]) -> list[str] | None:
    """Keep a refusal of ``rule``'s job where its stand-in reads it; the stand-in's
    ``dfil refused`` arguments (None: a job with nothing to record, a cell with no run
    directory yet)."""
    if rule == FEATURE_RULE:
        return ["--stamp", str(stamp_of(results, wildcards).resolve()), "--words", words]
    if rule == PACK_RULE:  # its seeds' own jobs then train them one by one
        record = pack_record_of(results, wildcards)
        return None if record is None else ["--pack-record", str(record.resolve()),
                                            "--words", words]
    run_dir = run_dir_of(results, wildcards)
    if run_dir is None:
        return None
    record_refusal(run_dir, rule, words, ["sbatch", *args])
    stage = "train" if rule == "train_cell" else "evaluate"
    return ["--run", str(run_dir.resolve()), "--stage", stage]


def main(argv: Sequence[str] | None = None) -> int:
    """``sbatch`` as the plugin calls it: the site's, with the rules of the module doc."""
    args = list(sys.argv[1:] if argv is None else argv)
    sbatch = real_sbatch(os.environ.get("PATH", ""), Path(os.environ.get(DIR_VAR, ".")))
    if sbatch is None:
        print("sbatch: error: dfil: no sbatch on PATH besides the workflow's", file=sys.stderr)
        return 127
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    done = submit(sbatch, args, stdin or None, float(os.environ.get(WAIT_VAR, "60")))
    job, results = cell_of(args), os.environ.get(RESULTS_VAR)
    if job is not None and results:
        rule, wildcards = job
        if done.returncode:
            record = _refused(rule, wildcards, Path(results), done.stderr, args)
            recorded = (_record_in_place(sbatch, args, stdin or None, record)
                        if record is not None else None)
            if recorded is not None and recorded.returncode == 0:
                # in sbatch's own words Snakemake's plugin reads a failure of this job
                print(f"sbatch: dfil: the {rule} job of {wildcards} was refused "
                      f"({_one_line(done.stderr, 'Batch job submission failed: ')}); job "
                      f"{recorded.stdout.strip()} records "
                      "that as its failure", file=sys.stderr)
                done = recorded
        elif rule in CELL_RULES and (run_dir := run_dir_of(Path(results), wildcards)) and (
                read_refusal(run_dir) or {}).get("rule") == rule:
            (run_dir / REFUSED).unlink(missing_ok=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
