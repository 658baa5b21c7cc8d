"""Every subcommand's --help says what it does, its defaults and its exit codes."""

import pytest

from dfil.cli import build_parser, main

COMMANDS = ["probes", "synth-frog", "train", "evaluate", "grid", "aggregate", "render",
            "report", "pdf", "audit", "fetch-backbone", "hub"]


def test_top_level_lists_every_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert all(c in out for c in COMMANDS) and "exit codes" in out and "143" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_says_what_defaults_and_exit_codes(command, capsys):
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    text = sub.format_help()
    assert sub.description and "exit codes: 0 done; 2" in text
    assert ("143 preempted" in text) == (command == "train")
    for action in sub._actions:
        if action.default not in (None, False) and action.help and not action.required \
                and action.dest != "help":
            shown = " ".join(map(str, action.default)) if isinstance(action.default, list) \
                else str(action.default)
            assert f"(default: {shown})" in " ".join(text.split()), action.dest


def test_python_m_dfil_is_the_dfil_command():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "dfil", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: dfil ") and all(c in out.stdout for c in COMMANDS)
