"""dfil.render.fmt: hand-computed strings."""

import math

import pytest

from dfil.render import fmt


def test_escape_every_special_character():
    assert fmt.escape("a_b & 50% $x$ #1 {y} ~ ^ \\") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} "
        r"\textbackslash{}")


def test_escape_spells_text_symbols_in_latex():
    """A row named as text (``Δ vs FT+Compose‡``) goes into a note pdflatex compiles."""
    assert fmt.escape("Δ vs FT+Compose‡, λ=0.1 ± 2") == (
        r"$\Delta$ vs FT+Compose$^\ddagger$, $\lambda$=0.1 $\pm$ 2")


def test_number_rounds_and_typesets_minus():
    assert fmt.number(50.44) == "50.4"
    assert fmt.number(-0.12) == "$-$0.1"
    assert fmt.number(-0.04) == "0.0"  # no negative zero
    assert fmt.number(None) == fmt.MISSING
    assert fmt.number(math.nan) == fmt.MISSING


def test_signed_always_shows_sign():
    assert fmt.signed(5.94) == "+5.9"
    assert fmt.signed(-0.1) == "$-$0.1"
    assert fmt.signed(0.01) == "0.0"


def test_mean_std_uses_pm_from_two_runs():
    assert fmt.mean_std(31.2, 9.2, 20) == r"31.2$\pm$9.2"
    assert fmt.mean_std(51.2, None, 1) == "51.2"
    assert fmt.mean_std(57.78, 1.333, 3, digits=2) == r"57.78$\pm$1.33"


def test_center_integer_pvalue_percent_bold():
    assert fmt.center(0.0201) == ".020"
    assert fmt.center(1.0) == "1.000"
    assert fmt.integer(1959395) == "1{,}959{,}395"
    assert fmt.pvalue(0.0109) == "0.011"
    assert fmt.pvalue(0.43) == "0.43"
    assert fmt.pvalue(3e-5) == "$<$0.0001"
    assert fmt.percent(0.1) == r"0.1\%"
    assert fmt.bold("1.0") == r"\textbf{1.0}"
    assert fmt.bold(fmt.MISSING) == fmt.MISSING


@pytest.mark.parametrize("text, expected", [
    ("50.4±1.8", (50.4, 1.8)), ("−0.1", (-0.1, None)), (23.2, (23.2, None)),
    ("—", (None, None)), (None, (None, None)), ("0.1%", (0.1, None))])
def test_parse_published(text, expected):
    assert fmt.parse_published(text) == expected
