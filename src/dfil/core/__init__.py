"""The paper's definitions, pure numpy: the ordered quantifier labels and QuRe's reference
centers (:mod:`.quantifiers`), nearest-center inference, composition and entailment
(Thm 1, 2; :mod:`.inference`), pairwise monotonicity violations (App. F.4;
:mod:`.metrics`), and every method of the paper as a declarative head layout
(:mod:`.methods`). ``dfil.inference`` and ``dfil.metrics`` are the public names of the
second and third."""
