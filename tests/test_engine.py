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
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=4, num_pages=256)
    yield eng
    eng.stop()


def test_greedy_float32_matches_reference(engine, reference_model):
    outs = engine.generate(PROMPTS, max_tokens=32, ignore_eos=True).result()
    for p, o in zip(PROMPTS, outs):
        assert o.token_ids == reference_model.greedy(p, 32)
        assert o.finish_reason == "length" and o.prompt_token_ids == p
        assert o.text == engine.tokenizer.decode(o.token_ids)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="full-size dummy weights need a GPU")
@pytest.mark.parametrize("size", ["20b", "120b"])
def test_dummy_full_size_generates(tmp_path, size):
    import json
    from model.config import GptOssConfig, gpt_oss_120b
    cfg = gpt_oss_120b() if size == "120b" else GptOssConfig()
    (tmp_path / "config.json").write_text(json.dumps(cfg.to_dict()))
    eng = LLM(tmp_path, load_format="dummy", tokenizer=TIKTOKEN, max_slots=8)
    try:
        outs = eng.generate(["Hello there", list(range(300))], max_tokens=24, ignore_eos=True).result()
        assert [len(o.token_ids) for o in outs] == [24, 24]
        assert all(0 <= t < cfg.vocab_size for o in outs for t in o.token_ids)
    finally:
        eng.stop()
