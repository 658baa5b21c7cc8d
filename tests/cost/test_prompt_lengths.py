"""The prompt lengths dfil.cost.rates quotes are what benchmarks/prompt_lengths.py measures
(with SmolLM2's tokenizer, where it is fetched, on ../shared/data)."""

import pytest

from dfil.cost.rates import PROMPTS


@pytest.mark.slow
def test_quoted_prompt_lengths_match_a_fresh_measurement(shared_data):
    from dfil.model.embedded import embedded_path

    if not (embedded_path("smollm2-135m") / "tokenizer.json").is_file():
        pytest.skip("SmolLM2's tokenizer is not fetched (dfil fetch-backbone smollm2-135m)")
    from prompt_lengths import measure

    measured = measure(shared_data)
    for name, got in measured.items():
        assert (PROMPTS[name].mean, PROMPTS[name].longest) == (got["mean"], got["max"]), name
