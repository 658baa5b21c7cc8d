"""Figure layout: the suptitle (what a figure was computed on) stays on its canvas."""

import matplotlib.pyplot as plt

from dfil.render.figures import figure, wrap_title

LONG = ("config embedded (SmolLM2-135M-Instruct (frozen, heads only on standardised "
        "features) on synthetic FRoG-format data, compact prompts, every 4th probe item; "
        "stand-in for Qwen2.5-7B on FRoG)")


def _draw(source, ax, specs, fig):
    ax.plot([0, 1], [0, 1])
    ax.set(title="Learned MFs per seed", xlabel="proportion p")


def test_wrap_title_keeps_words_and_breaks_long_text():
    wrapped = wrap_title(LONG)
    assert wrapped.split() == LONG.split()
    assert len(wrapped.splitlines()) >= 2
    assert wrap_title("short") == "short"


def test_figure_suptitle_fits_canvas():
    fig, _ = figure(_draw, None, None, LONG)
    fig.canvas.draw()
    box = fig._suptitle.get_window_extent()
    w, h = fig.canvas.get_width_height()
    assert box.x0 >= 0 and box.x1 <= w and box.y1 <= h
    ax_box = fig.axes[0].get_tightbbox()
    assert ax_box.y1 <= box.y0 + 1  # the axes title sits below the suptitle
    plt.close(fig)
