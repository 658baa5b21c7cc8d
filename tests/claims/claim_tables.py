"""Hand-built resolved tables for the claims' tests."""

from dfil.render.entries import Entry, Row, Table

DFIL = "frog/smollm2-135m/dfil/lam0.5/nfull/qure"
FT = "frog/smollm2-135m/finetune/lamna/nfull/na"


def stat(*values, cell=None, seeds=None, published=None, metric="test.main.acc"):
    """A stat entry of ``values``, read from ``cell`` on ``seeds`` (default 1, 2, ...)."""
    seeds = tuple(seeds or range(1, len(values) + 1))
    reads = frozenset((f"{cell}/seed{s}", metric) for s in seeds) if cell else frozenset()
    return Entry("stat", values=tuple(values), seeds=tuple(map(str, seeds)),
                 published=published, reads=reads)


def two_rows(a: Entry, b: Entry, paper_a: float, paper_b: float, number: int = 5,
             tol: float | None = None) -> Table:
    """A table of two rows and one declared effect, a minus b."""
    effect = {"label": "DFIL vs fine-tune", "a": "dfil/acc", "b": "ft/acc"}
    if tol is not None:
        effect["tol"] = tol
    rows = [Row("dfil", "DFIL", entries={"acc": a}), Row("ft", "Fine-tune", entries={"acc": b})]
    return Table(f"t{number}", number, f"tab:t{number}", "Scaling", ["acc"], rows,
                 effects=[effect], published={("dfil", "acc"): paper_a, ("ft", "acc"): paper_b})
