"""The projected GPU cost of a grid, from its backbones' architectures.

FLOPs per token of each backbone (:mod:`dfil.cost.flops`, each term with its source) x the
tokens each cell trains and evaluates on (split sizes and measured prompt lengths,
:mod:`dfil.cost.rates`) / (MFU x peak bf16 FLOP/s), by size class and in total; each class's
training memory computed from the architecture (:mod:`dfil.cost.memory`); and the SLURM
resources that follow (:mod:`dfil.cost.table`). Pure Python: no torch.
"""

from dfil.cost.cells import cell_work
from dfil.cost.project import CellCost, CellWork, by_class, project
from dfil.cost.table import format_proposals, format_table, propose

__all__ = ["CellCost", "CellWork", "by_class", "cell_work", "format_proposals",
           "format_table", "project", "propose"]
