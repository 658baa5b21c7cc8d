"""The files passed between stages and their contracts: the run directory's file names
(:mod:`.rundir`) and the schema of ``metrics.json`` (:mod:`.metrics`). Pure Python; the
writers and the readers of a file import its contract from here."""
