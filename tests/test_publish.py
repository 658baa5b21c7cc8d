"""``dfil publish``: a staged file is published only if it reads as what it is, and never
replaces a published file with one holding fewer entries where no run it reads is new or
retrained, unless allowed (``--allow-fewer``; the workflow's ``--config allow_fewer=1``);
``dfil publish-check`` checks them all before any is published."""

from pathlib import Path

import pandas as pd
import pytest

from dfil.cli import main
from dfil.render.publish import Content, check_all, read, read_dir, repair_staged

KEYS = ("frog/tiny/dfil/lam0.5/nfull/qure/seed42", "frog/tiny/coral/na/nfull/na/seed42")


def table(entries: list[list[str]], hashes=("aaa", "bbb"), spec="5f1e0c2a9b3d") -> str:
    """A table as ``dfil render`` writes it: the header with its spec's digest and each
    run key and its config hash, then the float with one body row per ``entries`` item."""
    head = ["% Table 5 (tab:x) rendered by dfil 0.1.0 (git abc)",
            "% config: smoke (grid.yaml); 2 run directories under runs",
            f"% spec: {spec}",
            *(f"%   {k}  config {h}" for k, h in zip(KEYS, hashes, strict=True))]
    body = [f"Row {i} & {' & '.join(row)} \\\\" for i, row in enumerate(entries)]
    return "\n".join([*head, r"\begin{table}[!htb]", r"\centering", r"\caption{X}",
                      r"\begin{tabular}{lcc}", r"\toprule", r"\textbf{M} & A & B \\",
                      r"\midrule", r"\multicolumn{3}{l}{\textit{Section}} \\", *body,
                      r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


FULL = [["43.2 $\\pm$ 0.3", "\\textbf{50.1}"], ["---", "12.0"]]  # 3 filled entries
LESS = [["43.2 $\\pm$ 0.3", "---"], ["---", "12.0"]]  # 2 filled entries


def publish(tmp_path, staged_text: str, published_text: str | None, *flags: str):
    staged, out = tmp_path / "staging" / "T05.tex", tmp_path / "T05.tex"
    staged.parent.mkdir(exist_ok=True)
    staged.write_text(staged_text)
    if published_text is not None:
        out.write_text(published_text)
    return main(["publish", str(staged), str(out), *flags]), staged, out


def test_a_table_counts_its_filled_entries_and_its_runs(tmp_path):
    # by hand: FULL's body has 4 entries, one of them "---"; the section line holds none
    path = tmp_path / "T05.tex"
    path.write_text(table(FULL))
    content = read(path)
    assert content.count == 3
    assert content.runs == {f"{KEYS[0]} aaa", f"{KEYS[1]} bbb", "spec 5f1e0c2a9b3d"}


def test_a_truncated_staged_table_is_refused_and_the_published_one_stays(tmp_path, capsys):
    good = table(FULL)
    rc, staged, out = publish(tmp_path, good[:100], good)
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"dfil publish: error: {staged}: damaged staged file (no "
                          r"\begin{table}); nothing is published and ")
    assert out.read_text() == good


def test_a_table_with_fewer_entries_from_the_same_runs_is_refused_unless_allowed(
        tmp_path, capsys):
    rc, staged, out = publish(tmp_path, table(LESS), table(FULL))
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1
    assert (f"{out}: refusing to replace it with {staged}, which has 2 filled entries where it "
            "has 3, from the same runs and config hashes") in err
    assert "--config allow_fewer=1" in err
    assert out.read_text() == table(FULL)
    rc, _, out = publish(tmp_path, table(LESS), None, "--allow-fewer")
    assert rc == 0 and out.read_text() == table(LESS)


@pytest.mark.parametrize("hashes", [("aaa", "ccc"), ("aaa", "none")])
def test_a_table_whose_config_hashes_changed_replaces_the_old_one(tmp_path, hashes):
    rc, _, out = publish(tmp_path, table(LESS, hashes), table(FULL))
    assert rc == 0 and out.read_text() == table(LESS, hashes)


def test_a_table_whose_spec_was_edited_to_fewer_entries_is_refused_unless_allowed(
        tmp_path, capsys):
    """A row taken out of config/tables.yaml: fewer entries, same runs, a new spec digest."""
    rc, staged, out = publish(tmp_path, table(LESS, spec="0a0a0a0a0a0a"), table(FULL))
    assert rc == 2 and out.read_text() == table(FULL)
    assert ("which has 2 filled entries where it has 3, from the same runs and config "
            "hashes, its table spec edited;") in capsys.readouterr().err
    rc, _, out = publish(tmp_path, table(LESS, spec="0a0a0a0a0a0a"), table(FULL),
                         "--allow-fewer")
    assert rc == 0 and out.read_text() == table(LESS, spec="0a0a0a0a0a0a")


def one_run_table(entries: list[list[str]]) -> str:
    """``table`` as a render-map typo leaves it: reading the first run only."""
    return table(entries).replace(f"%   {KEYS[1]}  config bbb\n", "")


def test_a_table_reading_fewer_of_its_runs_with_fewer_entries_is_refused(tmp_path, capsys):
    # a render-map or tables.yaml edit that reads 1 of the 2 runs and no new one
    rc, _, out = publish(tmp_path, one_run_table(LESS), table(FULL))
    assert rc == 2 and out.read_text() == table(FULL)
    assert ("which has 2 filled entries where it has 3, from 1 of the 2 runs it was made "
            "from and no new one (an edit of the render map or config/tables.yaml that "
            "reads fewer runs);") in capsys.readouterr().err


def test_publish_check_refuses_every_loss_at_once_and_writes_no_stamp(tmp_path, capsys):
    stage, stamp = tmp_path / "staging", tmp_path / "staging" / "check.txt"
    stage.mkdir()
    pairs = []
    for name, staged_text, published in (("T01.tex", table(FULL), table(LESS)),
                                         ("T02.tex", table(LESS), table(FULL)),
                                         ("T03.tex", one_run_table(LESS), table(FULL)),
                                         ("T04.tex", table(FULL)[:200], None)):
        (stage / name).write_text(staged_text)
        if published is not None:
            (tmp_path / name).write_text(published)
        pairs += ["--pair", str(stage / name), str(tmp_path / name)]
    rc = main(["publish-check", "--stamp", str(stamp), *pairs])
    err = capsys.readouterr().err.splitlines()
    # T02 and T03 would lose entries, T04 is damaged; T01 gains: three lines, no stamp
    assert rc == 2 and len(err) == 3 and not stamp.exists()
    err[-1] = err[-1].removeprefix("dfil publish-check: error: ")  # the CLI's refusal
    assert [line.split(":", 1)[0] for line in err] == [
        str(tmp_path / "T02.tex"), str(tmp_path / "T03.tex"), str(stage / "T04.tex")]
    assert err[-1].endswith("(nothing was published: 3 staged file(s) refused)")
    assert (tmp_path / "T02.tex").read_text() == table(FULL)  # nothing was copied
    (stage / "T04.tex").write_text(table(FULL))
    rc = main(["publish-check", "--stamp", str(stamp), *pairs, "--allow-fewer"])
    assert rc == 0 and stamp.read_text().count(" -> ") == 4
    missing = ["--pair", str(stage / "T09.tex"), str(tmp_path / "T09.tex")]
    assert main(["publish-check", "--stamp", str(tmp_path / "s2"), *missing]) == 2
    assert (f"{stage / 'T09.tex'}: nothing staged to publish; {tmp_path / 'T09.tex'} stays "
            "as it is") in capsys.readouterr().err


def test_a_table_with_as_many_or_more_entries_replaces_the_old_one(tmp_path):
    rc, _, out = publish(tmp_path, table(FULL), table(LESS))
    assert rc == 0 and out.read_text() == table(FULL)


def test_a_damaged_published_file_is_replaced_saying_so(tmp_path, capsys):
    rc, _, out = publish(tmp_path, table(LESS), table(FULL)[:50])
    assert rc == 0 and out.read_text() == table(LESS)
    assert f"{out} was damaged (no \\begin{{table}}): replaced" in capsys.readouterr().out


@pytest.mark.parametrize("name,text,why", [
    ("numbers.csv", "table,value\nT1,3.0\nT2,", "its last line is cut"),
    ("numbers.csv", "table,value\n", "no rows below its header"),
    ("numbers.csv", "table,value\nT1,3.0\nT2\n", "line 3 has 1 fields, its header 2"),
    ("index.html", "<!DOCTYPE html>\n<html><body><p>cut", "not a whole HTML page"),
    ("tables.pdf", "%PDF-1.5\n1 0 obj", "not a whole PDF"),
    ("tables.tex", "\\documentclass{article}\n\\begin{document}\n\\input{T01",
     "a LaTeX document without its \\end{document}"),
    ("diff.md", "", "empty"),
])
def test_a_damaged_staged_report_file_is_refused(tmp_path, capsys, name, text, why):
    staged, out = tmp_path / "staging" / name, tmp_path / name
    staged.parent.mkdir()
    staged.write_text(text)
    assert main(["publish", str(staged), str(out)]) == 2
    assert f"{staged}: damaged staged file ({why}" in capsys.readouterr().err
    assert not out.exists()


def numbers(values: list[str]) -> str:
    rows = [f"T5,{KEYS[0]},{v}" for v in values]
    return "\n".join(["table,runs,value", *rows, ""])


def test_numbers_csv_with_fewer_numbers_from_the_same_runs_is_refused(tmp_path, capsys):
    staged, out = tmp_path / "staging" / "numbers.csv", tmp_path / "numbers.csv"
    staged.parent.mkdir()
    staged.write_text(numbers(["1.0", ""]))
    out.write_text(numbers(["1.0", "2.0"]))
    assert main(["publish", str(staged), str(out)]) == 2
    assert "which has 1 numbers where it has 2" in capsys.readouterr().err


def aggregate_frame(rows: int, config_hash: str = "aaa") -> pd.DataFrame:
    from dfil.results.aggregate import COLUMNS

    base = {"task": "frog", "backbone": "tiny", "method": "dfil", "variant": "",
            "lam": "0.5", "budget": "full", "init": "qure", "seed": "42",
            "run_dir": "runs/x", "config_hash": config_hash, "package_version": "0.1.0",
            "git_commit": "abc"}
    return pd.DataFrame([{**base, "metric": f"m{i}", "value": float(i)} for i in range(rows)],
                        columns=COLUMNS)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_an_aggregate_with_fewer_rows_from_the_same_runs_is_refused(tmp_path, capsys, suffix):
    staged, out = tmp_path / "staging" / f"metrics{suffix}", tmp_path / f"metrics{suffix}"
    staged.parent.mkdir()

    def write(frame, path):
        frame.to_parquet(path, index=False) if suffix == ".parquet" else frame.to_csv(
            path, index=False)

    write(aggregate_frame(2), staged)
    write(aggregate_frame(3), out)
    assert main(["publish", str(staged), str(out)]) == 2
    assert "which has 2 rows where it has 3" in capsys.readouterr().err
    write(aggregate_frame(2, "ccc"), staged)  # a config edit: its runs' hashes changed
    assert main(["publish", str(staged), str(out)]) == 0


def test_a_truncated_staged_parquet_is_refused(tmp_path, capsys):
    staged, out = tmp_path / "staging" / "metrics.parquet", tmp_path / "metrics.parquet"
    staged.parent.mkdir()
    aggregate_frame(3).to_parquet(staged, index=False)
    staged.write_bytes(staged.read_bytes()[:100])
    assert main(["publish", str(staged), str(out)]) == 2
    assert f"{staged}: damaged staged file (unreadable parquet" in capsys.readouterr().err


def test_the_document_of_every_table_is_published_when_whole(tmp_path, capsys):
    staged, out = tmp_path / "staging" / "tables.tex", tmp_path / "tables.tex"
    staged.parent.mkdir()
    staged.write_text("\\documentclass{article}\n\\begin{document}\n\\input{T01-a}\n"
                      "\\end{document}\n")
    assert main(["publish", str(staged), str(out)]) == 0
    assert out.read_text() == staged.read_text()


def test_a_directory_of_pages_is_published_when_each_page_is_whole(tmp_path, capsys):
    staged, out = tmp_path / "staging" / "runs", tmp_path / "runs"
    staged.mkdir(parents=True)
    (staged / ".snakemake_timestamp").write_text("")  # Snakemake's marker: not a page
    (staged / "a.html").write_text("<!DOCTYPE html>\n<html><body>a</body></html>\n")
    assert main(["publish", str(staged), str(out)]) == 0
    assert (out / "a.html").is_file()
    (staged / "b.html").write_text("<!DOCTYPE html>\n<html><body>cut")
    assert main(["publish", str(staged), str(out)]) == 2
    assert f"{staged / 'b.html'}: damaged staged file (not a whole HTML page" in \
        capsys.readouterr().err
    assert not (out / "b.html").exists()


def run_pages(directory: Path, pages: dict[str, str]) -> Path:
    """A directory of run pages (key -> config hash), each as the report writes it."""
    directory.mkdir(parents=True, exist_ok=True)
    for key, config_hash in pages.items():
        (directory / f"{key}.html").write_text(
            f"<!DOCTYPE html>\n<html><body><h1>{key}</h1>\n"
            f"<p>Config hash <code>{config_hash}</code></p></body></html>\n")
    return directory


def test_run_pages_count_their_runs_and_fewer_of_the_same_are_refused(tmp_path, capsys):
    out = run_pages(tmp_path / "runs", {"a": "aaa", "b": "bbb", "c": "ccc"})
    assert read_dir(out) == Content("directory", frozenset({"a aaa", "b bbb", "c ccc"}), 3,
                                    "run pages")
    fewer = run_pages(tmp_path / "staging" / "runs", {"a": "aaa", "b": "bbb"})
    assert main(["publish", str(fewer), str(out)]) == 2
    assert ("has 2 run pages where it has 3, from 2 of the 3 runs it was made from and no "
            "new one") in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["a.html", "b.html", "c.html"]
    problems = check_all([(fewer, out)])  # the workflow's check before any publish
    assert len(problems) == 1 and "run pages" in problems[0]
    assert main(["publish", str(fewer), str(out), "--allow-fewer"]) == 0
    assert "3 run pages replaced by 2" in capsys.readouterr().out


def test_fewer_run_pages_with_a_retrained_run_replace_the_old_ones(tmp_path):
    out = run_pages(tmp_path / "runs", {"a": "aaa", "b": "bbb", "c": "ccc"})
    grid_edit = run_pages(tmp_path / "staging" / "runs", {"a": "aaa", "b": "b22"})
    assert main(["publish", str(grid_edit), str(out)]) == 0
    assert "Config hash <code>b22</code>" in (out / "b.html").read_text()


def test_a_staged_file_damaged_after_it_was_made_is_moved_aside_to_be_made_again(tmp_path):
    stage = tmp_path / "results" / "smoke" / "staging"
    good, cut = stage / "paper_tables" / "smoke" / "T05.tex", stage / "paper_tables" / "T06.tex"
    good.parent.mkdir(parents=True)
    good.write_text(table(FULL))
    cut.write_text(table(FULL)[:100])
    files = [good, cut, stage / "aggregate" / "metrics.parquet"]  # the last not made yet
    aside = stage / "damaged" / "paper_tables" / "T06.tex"
    note = (f"dfil: {cut}: damaged staged file (no \\begin{{table}}); "
            f"VERB {aside}, so the DAG makes it again before publishing it")
    assert repair_staged(files, stage, apply=False) == [note.replace("VERB", "would move it to")]
    assert cut.exists() and not aside.exists()
    assert repair_staged(files, stage) == [note.replace("VERB", "moved to")]
    assert not cut.exists() and aside.read_text() == table(FULL)[:100]
    assert good.read_text() == table(FULL) and repair_staged(files, stage) == []


def test_a_table_without_its_run_header_never_replaces_a_published_one(tmp_path, capsys):
    good = table(FULL)
    headless = "\n".join(line for line in table(FULL).splitlines()
                         if not line.startswith("%"))
    rc, staged, out = publish(tmp_path, headless, good)
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"dfil publish: error: {staged}: damaged staged file (no run header "
                          "(the '% Table ... rendered by dfil' and '% config:' lines dfil "
                          "render opens a table with, naming its runs)); nothing is published")
    assert out.read_text() == good


def test_a_published_table_damaged_or_edited_since_is_published_again(tmp_path):
    import os

    from dfil.render.publish import republish

    rc, staged, out = publish(tmp_path, table(FULL), None)
    assert rc == 0 and republish([(staged, out)]) == []
    out.write_text(table(FULL)[:100])  # truncated after publishing
    assert republish([(staged, out)], apply=False) == [
        f"dfil: {out}: damaged since it was published from {staged} (no \\begin{{table}}): a "
        "run that builds the DAG publishes it again from staging"]
    assert republish([(staged, out)]) == [
        f"dfil: {out}: damaged since it was published from {staged} (no \\begin{{table}}): "
        "published again from staging"]
    assert out.read_text() == table(FULL)
    out.write_text(table(FULL).replace("12.0", "13.0"))  # a number edited by hand
    (note,) = republish([(staged, out)])
    assert note == (f"dfil: {out}: edited since it was published from {staged}: published "
                    "again from staging")
    assert out.read_text() == table(FULL)
    # A staged file newer than the published one is the DAG's to publish, or to refuse.
    staged.write_text(table(LESS))
    os.utime(staged, ns=(out.stat().st_mtime_ns + 10**9,) * 2)
    assert republish([(staged, out)]) == [] and out.read_text() == table(FULL)
