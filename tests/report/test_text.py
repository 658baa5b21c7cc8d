from dfil.report.text import plain, split_cells, template_heads


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
