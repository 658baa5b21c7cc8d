"""What every stage leans on and nothing here leans on a stage: the error classes that
``dfil`` reports as one line (:mod:`.errors`), the one atomic writer (:mod:`.atomic`), the
one lock (:mod:`.lock`), and why an input path cannot be read, in words an error ends
with (:mod:`.paths`)."""
