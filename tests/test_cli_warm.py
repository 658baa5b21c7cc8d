"""The warm starter (dfil.cli.warm, dfil.cli.warmserve): a command run by a child of the
server gives what the same command gives in its own process (output, exit status,
files, numbers), a SIGTERM to the client reaches the child (preemption and resume), and
without a server the command runs in-process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from cells import interrupted, run_cli, stable, tiny_cell
from dfil.data.synthetic import write_frog_like
from warmserver import warm_server

# Real servers and served processes: `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "config" / "smoke.yaml")


@pytest.fixture(scope="module")
def server():
    with warm_server() as served:
        yield served


def warm(socket: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env={"DFIL_WARM_SOCKET": str(socket), **(env or {})})


def served(log: Path) -> list[str]:
    """The commands the server's log says it forked a child for."""
    return [line.split(": dfil ", 1)[1] for line in log.read_text().splitlines()
            if ": dfil " in line]


def from_main(stderr: str) -> list[str]:
    """A traceback's lines from ``main``'s frame on (the direct run's outer frames, the
    ``python -m`` machinery, have no counterpart in the server's child)."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith(", in main"))
    return [lines[0], *lines[start:]]


@pytest.mark.parametrize("args,code,text", [
    (["grid", "list", "--config", SMOKE], 0, "frog/tiny-llama/coral/lamna/nfull/na/seed42\n"),
    (["--help"], 0, "usage: dfil [-h] [--version] COMMAND ..."),
    (["grid", "list", "--config", "no-such.yaml"], 2, "dfil grid: error: no-such.yaml: cannot "
     "read ([Errno 2] No such file or directory: 'no-such.yaml')\n"),
    (["train", "--bogus"], 2, "dfil train: error: the following arguments are required: "
     "--cell, --out (see dfil train --help)\n"),
])
def test_a_served_command_prints_and_exits_as_a_direct_run(server, args, code, text):
    socket, log, _ = server
    direct, through = run_cli(*args), warm(socket, *args)
    assert (through.returncode, direct.returncode) == (code, code)
    assert (through.stdout, through.stderr) == (direct.stdout, direct.stderr)
    assert text in (through.stderr if code else through.stdout)
    assert served(log)[-1] == " ".join(args)


def test_a_served_command_writes_the_files_a_direct_run_writes(server, tmp_path):
    socket, log, _ = server
    key = "frog/tiny-llama/coral/lamna/nfull/na/seed42"
    for name, run in (("direct", run_cli), ("warm", lambda *a: warm(socket, *a))):
        out = run("grid", "cell", "--config", SMOKE, "--key", key, "--out",
                  tmp_path / name / "cell.yaml")
        assert out.returncode == 0, out.stderr
    assert served(log)[-1].endswith(f"--out {tmp_path / 'warm' / 'cell.yaml'}")
    written = [(tmp_path / n / "cell.yaml").read_text() for n in ("direct", "warm")]
    assert written[0] == written[1] and "name: frog_tiny-llama_coral_lamna_nfull_na_seed42" in (
        written[0])


def test_a_crash_is_its_traceback_and_exit_1(server):
    socket, _, _ = server
    args = ["grid", "list", "--config", SMOKE]
    crashing = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                "import warmserver; warmserver.install_crash(); "
                "from dfil.cli import main; sys.exit(main(sys.argv[1:]))")
    direct = subprocess.run([sys.executable, "-c", crashing, *args], capture_output=True,
                            text=True, timeout=300, env={**os.environ, "WARM_TEST_CRASH": "1"})
    through = warm(socket, *args, env={"WARM_TEST_CRASH": "1"})
    assert through.returncode == direct.returncode == 1
    assert from_main(through.stderr) == from_main(direct.stderr)
    assert through.stderr.splitlines()[-1] == "TypeError: the crash a test asked for"


def test_a_child_runs_with_its_client_s_signals_and_none_blocked(server, tmp_path):
    """The server blocks the relayed signals across a fork (so one relayed at once waits
    for the child's handlers): the child unblocks them, the server too; a child's
    ignored and caught signals are its client's, a fresh Python's."""
    socket, _, proc = server
    status = tmp_path / "status"
    args = ["grid", "list", "--config", SMOKE]
    with sigint_at_start(signal.default_int_handler):  # the client as from a terminal
        assert warm(socket, *args, env={"WARM_TEST_STATUS": str(status)}).returncode == 0
    fields = dict(line.split(":\t") for line in status.read_text().splitlines())
    assert int(fields["SigBlk"], 16) == 0
    caught, ignored = int(fields["SigCgt"], 16), int(fields["SigIgn"], 16)
    bit = lambda sig: 1 << (sig - 1)  # noqa: E731
    assert caught & bit(signal.SIGINT) and not ignored & bit(signal.SIGINT)
    assert ignored & bit(signal.SIGPIPE) and not caught & bit(signal.SIGTERM)
    server_status = Path(f"/proc/{proc.pid}/status").read_text()
    assert "SigBlk:\t0000000000000000" in server_status


def test_without_a_server_the_command_runs_in_process(server, tmp_path):
    socket, log, _ = server
    stale = tmp_path / "stale.sock"  # a socket file nobody listens on
    import socket as sockets

    with sockets.socket(sockets.AF_UNIX) as s:
        s.bind(str(stale))
    args = ["grid", "list", "--config", "no-such.yaml"]
    before = len(served(log))
    for env in ({"DFIL_WARM_SOCKET": str(tmp_path / "missing")},
                {"DFIL_WARM_SOCKET": str(stale)},
                {"DFIL_WARM_SOCKET": str(socket), "DFIL_WARM": "0"},
                {"DFIL_WARM_SOCKET": str(socket), "OMP_NUM_THREADS": "7"}):  # refused
        out = run_cli(*args, env=env)
        assert out.returncode == 2 and out.stderr.startswith("dfil grid: error: no-such.yaml")
    assert len(served(log)) == before
    assert "refused grid list --config no-such.yaml: OMP_NUM_THREADS=7" in log.read_text()


def test_the_server_stops_when_its_parent_is_gone(tmp_path):
    path = tmp_path / "s"
    parent = ("import subprocess, sys, time, os\n"
              "p = subprocess.Popen([sys.executable, '-m', 'dfil.cli', 'warm', 'serve', "
              f"'--socket', {str(path)!r}, '--preload', 'json'], start_new_session=True)\n"
              f"while not os.path.exists({str(path)!r}): time.sleep(0.05)\n"
              "print(p.pid)")
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True,
                         timeout=120)
    pid = int(out.stdout)
    deadline = time.monotonic() + 20
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists() and not path.exists()


def test_training_through_the_server_is_the_direct_run_also_after_sigterm(server,
                                                                          tmp_path):
    """Direct train + evaluate against the same through the server; then a served
    training sent SIGTERM (to its client) at step 18 of 30 (77 examples, batch 8: mid
    epoch 2): exit 143, resume state, and the resumed run ends as the uninterrupted."""
    socket, log, _ = server
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "smoke")
    runs = {name: tmp_path / name for name in ("direct", "warm", "stopped")}
    assert run_cli("train", "--cell", cell, "--out", runs["direct"]).returncode == 0
    assert run_cli("evaluate", "--run", runs["direct"]).returncode == 0
    for args in (["train", "--cell", cell, "--out", runs["warm"]],
                 ["evaluate", "--run", runs["warm"]]):
        assert warm(socket, *args).returncode == 0
    assert served(log)[-2:] == [f"train --cell {cell} --out {runs['warm']}",
                                f"evaluate --run {runs['warm']}"]
    same_run(runs["warm"], runs["direct"])

    client = paused_train(socket, cell, runs["stopped"], 18, tmp_path / "at-step",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client.send_signal(signal.SIGTERM)
    _, stderr = client.communicate(timeout=300)
    assert client.returncode == 143 and "preempted" in stderr, stderr
    assert (runs["stopped"] / "resume.pt").exists()
    resumed = warm(socket, "train", "--cell", cell, "--out", runs["stopped"])
    assert resumed.returncode == 0 and "resuming attempt 1 at epoch 2, step 8" in resumed.stdout
    assert warm(socket, "evaluate", "--run", runs["stopped"]).returncode == 0
    same_run(runs["stopped"], runs["direct"])


def paused_train(socket: Path, cell: Path, out: Path, at_step: int, mark: Path,
                 **streams) -> subprocess.Popen:
    """``dfil train`` through the server, returned once its child waits at ``at_step``
    (tests/warmserver.py's pause: it touches ``mark`` and waits for SIGTERM there)."""
    client = subprocess.Popen(
        [sys.executable, "-m", "dfil.cli", "train", "--cell", str(cell), "--out", str(out)],
        text=True, **streams,
        env={**os.environ, "DFIL_PROGRESS": "0", "DFIL_WARM_SOCKET": str(socket),
             "WARM_TEST_PAUSE_AT": str(at_step), "WARM_TEST_MARK": str(mark)})
    deadline = time.monotonic() + 300
    while not mark.exists():
        assert client.poll() is None and time.monotonic() < deadline, (
            client.stderr.read() if client.stderr else "")
        time.sleep(0.05)
    return client


def same_run(run: Path, reference: Path) -> None:
    """Byte-identical model, log and predictions; metrics equal but for provenance."""
    for name in ("model.safetensors", "train_log.jsonl", "predictions.parquet", "mf.json"):
        assert (run / name).read_bytes() == (reference / name).read_bytes(), name
    metrics = [json.loads((d / "metrics.json").read_text()) for d in (run, reference)]
    assert stable(metrics[0]) == stable(metrics[1])


def test_a_killed_client_takes_its_child_with_it(server, tmp_path):
    """SIGKILL cannot be relayed: the server sees the client's socket close and kills the
    child, as the job's own process would have died."""
    socket, log, _ = server
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "smoke", epochs=1)
    client = paused_train(socket, cell, tmp_path / "run", 2, tmp_path / "at-step",
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client.kill()
    assert client.wait(timeout=60) == -signal.SIGKILL
    deadline = time.monotonic() + 30
    while ": signal 9" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    child = int(served_pid(log.read_text(), f"--out {tmp_path / 'run'}"))
    assert f"pid {child}: its client is gone, killing it\n" in log.read_text()
    assert f"pid {child}: signal 9 (peak RSS " in log.read_text()
    assert not Path(f"/proc/{child}").exists()
    assert warm(socket, "--help").returncode == 0 and served(log)[-1] == "--help"  # serving on


def served_pid(text: str, ending: str) -> str:
    """The pid of the child the server forked for the command ending in ``ending``."""
    return next(line.split("pid ")[1].split(":")[0] for line in text.splitlines()
                if line.endswith(ending))


def test_the_workflow_s_server_serves_a_job_of_its_own_environment(tmp_path):
    """The server a local run starts (every module of PRELOAD imported) serves a job
    whose environment is the run's, although an import sets a variable in the server
    (torch._dynamo: TORCHINDUCTOR_CACHE_DIR)."""
    log = tmp_path / "warm.log"
    code = ("import os, subprocess, sys\nfrom pathlib import Path\n"
            "from dfil.cli.warm import THREAD_VARS, start_server, stop_server\n"
            f"server = start_server(Path({str(log)!r}))\n"
            "job = {**os.environ, **dict.fromkeys(THREAD_VARS, '1')}  # as Snakemake's\n"
            "out = subprocess.run([sys.executable, '-m', 'dfil.cli', '--version'], env=job)\n"
            "stop_server(server)\nsys.exit(out.returncode)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    text = log.read_text()
    assert "refused" not in text and len(served(log)) == 1 and served(log)[0] == "--version"
    assert re.search(r": exit 0 \(peak RSS \d+ MB, CPU \d+\.\d s\)\n", text)


def test_a_server_that_cannot_start_leaves_the_jobs_to_start_as_always(tmp_path, capsys,
                                                                        monkeypatch):
    from dfil.cli.warm import SOCKET_VAR, start_server

    monkeypatch.delenv(SOCKET_VAR, raising=False)
    (tmp_path / "logs").write_text("a file where the log's folder goes")
    assert start_server(tmp_path / "logs" / "warm.log") is None
    assert capsys.readouterr().err.startswith("dfil: the warm server could not start ([Errno ")
    assert SOCKET_VAR not in os.environ


def test_the_server_does_not_serve_once_cuda_started_while_importing(tmp_path):
    """A forked child cannot use a CUDA context its parent made: the server says so and
    ends before listening (its clients then run in-process)."""
    code = ("import sys, types\nfrom dfil.cli.warmserve import serve\n"
            "cuda = types.SimpleNamespace(is_initialized=lambda: True)\n"
            "sys.modules['torch'] = types.SimpleNamespace(cuda=cuda)\n"
            f"serve({str(tmp_path / 's')!r}, [])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and not (tmp_path / "s").exists()
    assert out.stderr.endswith("dfil warm: not serving: CUDA started while importing, and a "
                               "fork cannot use it\n")


@contextmanager
def sigint_at_start(handler):
    """Processes started inside inherit SIGINT as ``handler`` leaves it after exec: the
    default action (as from a terminal) for a Python handler, ignored for SIG_IGN (as
    ``cmd &`` in a script leaves it)."""
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_ends_a_served_command_as_it_ends_a_direct_one(server, tmp_path):
    """SIGINT (a terminal's ^C) mid-training: KeyboardInterrupt's traceback, then death
    by SIGINT, as Python ends after an uncaught KeyboardInterrupt. (A direct run of this
    training ends with 1 instead, as measured here; either way the job failed.) The
    child takes SIGINT as its client does, whatever the server inherited."""
    socket, _, _ = server
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "smoke", epochs=1)
    with sigint_at_start(signal.default_int_handler):
        direct = interrupted(cell, tmp_path / "direct", "SIGINT", 2)
        client = paused_train(socket, cell, tmp_path / "warm", 2, tmp_path / "at-step",
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client.send_signal(signal.SIGINT)
    _, stderr = client.communicate(timeout=120)
    assert client.returncode == -signal.SIGINT and direct.returncode == 1
    assert stderr.splitlines()[-1] == direct.stderr.splitlines()[-1] == "KeyboardInterrupt"


def test_a_client_that_ignores_sigint_has_a_child_that_ignores_it(server, tmp_path):
    """A job started with SIGINT ignored ignores ^C run directly; served, its client does
    not relay it and its child ignores it too (a SIGTERM then preempts it as usual)."""
    socket, _, _ = server
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "smoke", epochs=1)
    with sigint_at_start(signal.SIG_IGN):
        client = paused_train(socket, cell, tmp_path / "warm", 2, tmp_path / "at-step",
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child = int(served_pid(server[1].read_text(), f"--out {tmp_path / 'warm'}"))
    client.send_signal(signal.SIGINT)
    os.kill(child, signal.SIGINT)  # as a stray ^C to the child itself: ignored too
    time.sleep(1.0)
    assert client.poll() is None and Path(f"/proc/{child}").exists()
    client.send_signal(signal.SIGTERM)
    _, stderr = client.communicate(timeout=120)
    assert client.returncode == 143 and "preempted" in stderr, stderr
