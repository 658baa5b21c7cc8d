"""The report shows the runs whose prompts were cut to max_length: the index lists them,
each run page has a table per split."""

from report_tables import scaling_table

from dfil.contracts.metrics import write_metrics
from dfil.report import site
from records import metrics_record


def test_the_report_lists_the_runs_with_cut_prompts(tmp_path):
    runs = tmp_path / "runs"
    key = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed1"
    (runs / key).mkdir(parents=True)
    cut = {"items": 40, "cut": 40, "longest": 412, "max_length": 128}
    whole = {"items": 8, "cut": 0, "longest": 90, "max_length": 128}
    write_metrics(runs / key / "metrics.json",
                  metrics_record(truncation={"test": cut, "qure": whole}))
    context = {"title": "t", "grid": "unit", "standin": "", "commit": "abc", "figures": {},
               "failures": {}}
    out = site.write_pages([scaling_table()], {}, context, runs, tmp_path / "o")
    index = out["index.html"].read_text()
    assert "Runs with prompts cut to max_length" in index
    assert f'<a href="runs/{key.replace("/", "__")}.html">{key}</a>' in index
    assert "test: 40 of 40 cut to 128 tokens (longest 412)" in index and "qure:" not in index
    page = (tmp_path / "o" / "runs" / (key.replace("/", "__") + ".html")).read_text()
    assert "Prompts cut to max_length" in page and "<b>40</b>" in page


def test_no_cut_prompt_no_list(tmp_path):
    context = {"title": "t", "grid": "unit", "standin": "", "commit": "abc", "figures": {},
               "failures": {}}
    out = site.write_pages([scaling_table()], {}, context, tmp_path / "runs", tmp_path / "o")
    assert "prompts cut" not in out["index.html"].read_text()
