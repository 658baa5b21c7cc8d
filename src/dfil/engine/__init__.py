"""The engine shared by training and evaluation: device and precision, batching, the
tokenizer and the frozen-feature cache, batched prediction, checkpoints.

Neither :mod:`dfil.train` nor :mod:`dfil.evaluate` imports the other; what both need lives
here. Import from the submodules.
"""
