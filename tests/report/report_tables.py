"""Hand-built resolved tables for the report's tests."""

from dfil.render.entries import Entry, Row, Table


def stat(*values, published=None, reads=(), bold=False):
    return Entry("stat", values=tuple(values), published=published, bold=bold,
                 reads=frozenset((k, "test.main.acc") for k in reads))


def scaling_table() -> Table:
    """Two methods, three seeds each; the paper prints DFIL 41.0, FT 40.0 and their
    difference as an effect."""
    dfil = stat(44.0, 45.0, 46.0, published=41.0,
                reads=[f"frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed{s}" for s in (1, 2, 3)])
    ft = stat(40.0, 40.5, 41.0, published=40.0,
              reads=[f"frog/smollm2-135m/finetune/lamna/nfull/na/seed{s}" for s in (1, 2, 3)])
    rows = [Row("dfil", r"\textbf{DFIL}", entries={"acc": dfil}),
            Row("ft", "Fine-tune", entries={"acc": ft})]
    return Table("scaling", 5, "tab:scaling", "Scaling", ["acc"], rows,
                 effects=[{"label": "DFIL vs fine-tune", "a": "dfil/acc", "b": "ft/acc"}],
                 published={("dfil", "acc"): 41.0, ("ft", "acc"): 40.0})
