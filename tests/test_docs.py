"""What a user reads: the README is a front door (at most 200 lines, its links resolve, its
screenshot is committed), and neither it, docs/, the CLI's help nor the published pages'
templates speak of how the project is worked on."""

import re
from pathlib import Path

import pytest

from dfil.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Words about how the project is worked on, not about what it does.
WORKED_ON = re.compile(r"\bsessions?\b|\bissue\s*#?\d|\(#\d|\bpreviously\b|\binventory\b"
                       r"|\blent GPU\b|\bhelper engineers?\b", re.IGNORECASE)

USER_TEXTS = sorted([README, *(ROOT / "docs").glob("*.md"),
                     *(ROOT / "src/dfil/pages/templates").glob("*.j2"),
                     *(ROOT / "src/dfil/audit/templates").glob("*.j2")])


def test_the_readme_is_a_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "```bibtex" in text and "docs/report.png" in text
    for target in re.findall(r"\]\(([^)#\s]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


@pytest.mark.parametrize("path", USER_TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_users_read_says_nothing_of_how_it_is_worked_on(path):
    found = [(n, m.group()) for n, line in enumerate(path.read_text().splitlines(), 1)
             for m in WORKED_ON.finditer(line)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"


def _strings(node, skip=("inventory",)):
    """Every string value of a YAML tree, the keys in ``skip`` left out."""
    if isinstance(node, dict):
        return [s for k, v in node.items() if k not in skip for s in _strings(v, skip)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, skip)]
    return [node] if isinstance(node, str) else []


@pytest.mark.parametrize("name", ["tables.yaml", "paper_audit.yaml"])
def test_what_the_published_pages_print_says_nothing_of_how_it_is_worked_on(name):
    """Captions, notes and footnotes of the tables and the audit's notes are published:
    they cite the paper and the audit's checks, never a working document."""
    import yaml

    texts = _strings(yaml.safe_load((ROOT / "config" / name).read_text()))
    found = [m.group() + ": " + text[:80] for text in texts for m in WORKED_ON.finditer(text)]
    assert not found, f"config/{name}: {found}"


def test_the_clis_help_says_nothing_of_how_it_is_worked_on():
    parser = build_parser()
    texts = [parser.format_help(), *(sub.format_help() for sub in
                                     parser._subparsers._group_actions[0].choices.values())]
    found = [m.group() for t in texts for m in WORKED_ON.finditer(t)]
    assert not found, found


def test_the_pattern_catches_what_it_names():
    assert WORKED_ON.search("measured in a lent GPU session (see issue #47)")
    assert WORKED_ON.search("Inventory section 5, item 3")
    assert not WORKED_ON.search("a preempted job resumes from its last step")


def test_an_audit_check_a_caption_cites_is_one_the_audit_has():
    import yaml

    ids = {c["id"] for c in yaml.safe_load((ROOT / "config/paper_audit.yaml").read_text())[
        "checks"]}
    text = " ".join((ROOT / "config/tables.yaml").read_text().split())
    cited = re.findall(r"audit checks? ([a-z0-9-]+)(?: (?:and|to) ([a-z0-9-]+))?", text)
    named = {name for pair in cited for name in pair if name}
    assert len(cited) >= 6 and named <= ids, sorted(named - ids)
