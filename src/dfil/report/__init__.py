"""The reproduction report: one entry page (``index.html``) answering "did the paper
reproduce?", every table as paper | reproduced side by side, a page per run, and
``numbers.csv`` (pure but for writing files; reads the render stage's tables)."""
