"""Evaluation: the paper's protocols as pure maths (:mod:`.protocols`), a trained run's
predictions on any texts (:mod:`.scorer`), and the run evaluator writing ``metrics.json``
(:mod:`.run`). Never imports :mod:`dfil.train`."""
