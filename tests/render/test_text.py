from dfil.render.text import plain, row_names, split_cells, template_heads


def test_latex_reads_as_text():
    assert plain(r"Compositional from-text (Tab.~\ref{tab:comp})", {"tab:comp": 3}) == \
        "Compositional from-text (Tab. 3)"
    assert plain(r"\textbf{DFIL (\%)} $\pm$ $\lambda_{\text{DFIL}}{=}0.1$") == \
        "DFIL (%) ± λ_DFIL=0.1"
    assert plain(r"\emph{a}---b") == "a—b"


def test_cells_split_at_top_level_ampersands_only():
    assert split_cells(r"a & \textbf{b \& c} & {d & e}") == ["a ", r" \textbf{b \& c} ",
                                                             " {d & e}"]


def test_template_heads_are_the_last_head_line():
    assert template_heads("scaling") == ["Backbone", "DFIL (%)", "Fine-tune (%)", "Δ",
                                         "MF mono."]
    assert template_heads("no_such_table") == []


def test_rows_are_named_by_label_and_section_outside_the_table():
    from dfil.render.entries import Row

    rows = [Row("", "Self-consistent ground truth", kind="section"),
            Row("self_dfil", "DFIL"), Row("", "", kind="rule"),
            Row("", r"\textit{QuRe-based} ground truth", kind="section"),
            Row("qure_d", r"$\Delta$ vs FT+Compose$^\ddagger$"), Row("bare", "")]
    assert row_names(rows) == {"self_dfil": "DFIL [Self-consistent ground truth]",
                               "qure_d": "Δ vs FT+Compose [QuRe-based ground truth]",
                               "bare": "bare [QuRe-based ground truth]"}
    assert row_names([Row("b", r"Qwen2.5-32B$^\P$, zero-shot$^\#$ $x^2$")]) == \
        {"b": "Qwen2.5-32B, zero-shot x2"}
    assert row_names([Row("c", r"Compositional (Tab.~\ref{tab:c})")], {"tab:c": 3}) == \
        {"c": "Compositional (Tab. 3)"}
