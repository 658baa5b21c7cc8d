"""Training: one cell's attempts (:mod:`.driver`), the loop (:mod:`.loop`), preemption and
resume (:mod:`.resume`). Never imports :mod:`dfil.evaluate`."""
