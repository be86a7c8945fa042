"""The LLM engine end to end on the tiny checkpoint: greedy tokens against the fp32 reference,
batching invariance, slots and pages, failures. CPU (interpreter, no graphs) and GPU alike."""
import pytest
import torch

from helpers import TIKTOKEN, needs_data
from llm import LLM, SamplingParams

pytestmark = needs_data

PROMPTS = [[200006], [1, 2, 3, 4, 5, 6, 7], list(range(1000, 1150)), list(range(5000, 5040))]  # 150 > window


@pytest.fixture(scope="module")
def engine(tiny_dir):
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=4)
    yield eng
    eng.stop()


def test_greedy_float32_matches_reference(engine, reference_model):
    outs = engine.generate(PROMPTS, max_tokens=32, ignore_eos=True).result()
    for p, o in zip(PROMPTS, outs):
        assert o.token_ids == reference_model.greedy(p, 32)
        assert o.finish_reason == "length" and o.prompt_token_ids == p
        assert o.text == engine.tokenizer.decode(o.token_ids)
