"""The test hub's repo ids (tests/hub/conftest.py builds them)."""

TINY = "dfil-test/tiny-llama"
BIG = "dfil-test/tiny-llama-12mb"  # weights past huggingface_hub's 10 MiB write chunk
FROG = "dfil-test/frog-standin"
