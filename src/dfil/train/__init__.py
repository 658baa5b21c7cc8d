"""Training: one cell's attempts (:mod:`.driver`), the loop (:mod:`.loop`), a diverged
loss (:mod:`.finite`), preemption and resume (:mod:`.resume`). Never imports
:mod:`dfil.evaluate`."""
