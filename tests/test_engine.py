"""The LLM engine end to end on the tiny checkpoint: greedy tokens against the fp32 reference,
batching invariance, slots and pages, failures. CPU (interpreter, no graphs) and GPU alike."""
import random
import time
from concurrent.futures import Future

import numpy as np
import pytest
import torch

from helpers import TIKTOKEN, needs_data
import llm
from llm import LLM, RequestOutput, SamplingParams

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


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the start-up prefill runs where CUDA graphs are captured")
def test_start_up_prefill_compiles_every_size_and_leaves_the_pools_full(tiny_dir):
    """Start-up prefills a prompt of each size in llm.WARM_UP (capped at min(chunk, KV / 2, max_model_len - 1)), so
    that Triton compiles the prefill kernels before a user's first request (on a fresh machine a first 2-token prompt
    took 3.4 s and a first 4,096-token one 5.9 s, s46). Then no prompt size compiles anything
    (cookbook/compile_variants.py counts it offline at the real shapes), and the pools are full."""
    import triton
    import kernels
    kinds = [f for f in vars(kernels).values() if isinstance(f, triton.runtime.jit.JITFunction)]
    compiled = lambda: sum(len(c[0]) for f in kinds for c in f.device_caches.values())  # specializations loaded
    eng = LLM(tiny_dir, tokenizer=TIKTOKEN, page_size=16, max_slots=4, num_pages=64)
    try:
        assert next(eng.ids) == 21 and not eng.running and not eng.waiting  # 1-16, 32, 64, 128, 256, 504: KV / 2
        assert len(eng.free_slots) == 4 and sorted(eng.free_pages) == list(range(1, 64))
        before = compiled()
        for n in (1, 5, 7, 17, 33, 47, 100, 129, 300, 503):
            assert len(eng.generate(list(range(1, n + 1)), max_tokens=1).result().token_ids) == 1
        assert len(eng.generate([1, 2, 3], max_tokens=5, ignore_eos=True).result().token_ids) == 5
        assert compiled() == before, "a prompt size compiled a kernel after start-up"
    finally:
        eng.stop()


def test_batch_invariance_and_more_requests_than_slots(engine):
    """A request gives the same greedy tokens alone, in a batch of 8 mixed prompts (twice the slots),
    and when it arrives while others are mid-generation."""
    target = list(range(3000, 3023))
    alone = engine.generate(target, max_tokens=4, ignore_eos=True).result().token_ids
    others = [list(range(100 * i, 100 * i + 1 + 5 * i)) for i in range(1, 8)]
    batch = engine.generate([target] + others, max_tokens=4, ignore_eos=True).result()
    assert batch[0].token_ids == alone and all(len(o.token_ids) == 4 for o in batch)
    running = engine.generate(others[:2], max_tokens=8, ignore_eos=True)
    stream = engine.stream(others[4], max_tokens=8, ignore_eos=True)
    next(stream)  # the others are now decoding
    late = engine.generate(target, max_tokens=4, ignore_eos=True).result()
    assert late.token_ids == alone
    assert all(len(o.token_ids) == 8 for o in running.result()) and len(list(stream)) == 8


def test_decode_steps_go_on_while_a_long_prompt_prefills(engine, reference_model):
    """Prefill chunks and decode steps take turns: a short request finishes while a long prompt is still being
    cached (prefill-first scheduling would hold its tokens until then), and both get the tokens they get alone."""
    short, long = list(range(700, 710)), list(range(2000, 2150))  # 150 tokens: 10 chunks of 16
    chunk, engine.prefill_chunk = engine.prefill_chunk, 16
    try:
        a, b = engine.generate([short, long], max_tokens=4, ignore_eos=True).result()
    finally:
        engine.prefill_chunk = chunk
    assert a.token_ids == reference_model.greedy(short, 4) and b.token_ids == reference_model.greedy(long, 4)
    assert a.metrics["ttft"] + a.metrics["decode_time"] < b.metrics["ttft"]  # a's last token came before b's first


def _hash(tokens):  # the next token after a context, below 997
    h = 0
    for t in tokens:
        h = (h * 31 + t + 1) % 1000003
    return h % 997


class _CacheModel:
    """Stands in for GptOss in scheduler tests. It keeps its own K/V: each step stores (token, position) at the rows
    the scheduler gives (prefill: full_rows and ring_rows; decode: through the tables, as RoPE does), and a row's next
    token is a hash of its whole context read back through the block table, with the positions still in the window
    checked in the ring as the step found it (996 if any row is missing or stale). So a wrong id, position, logit
    row, page, slot or ring row anywhere in the scheduler changes an output."""

    def __init__(self, page):
        self.page, self.full, self.ring = page, {}, {}

    def forward(self, inp, kv, out=None):  # out: the engine's logits buffer at decode, as GptOss.forward takes it
        ids, pos, cu, start = (x.tolist() for x in (inp.ids, inp.pos, inp.cu_seqlens, inp.start))
        table, slot = inp.block_table.tolist(), inp.ring_table[:, 0].tolist()
        seq, before = [b for b in range(len(cu) - 1) for _ in range(cu[b], cu[b + 1])], dict(self.ring)  # [T]
        at = lambda b, q: table[b][q // self.page] * self.page + q % self.page  # a position's row, by the table
        if inp.full_rows is None:  # decode: RoPE finds the rows through the tables
            full = [at(b, p) for b, p in zip(seq, pos)]
            rows = [slot[b] * llm.RING + p % llm.RING for b, p in zip(seq, pos)]
        else:
            full, rows = inp.full_rows.tolist(), inp.ring_rows.tolist()
        for tok, p, f, row in zip(ids, pos, full, rows):
            self.full[f] = (tok, p)
            self.ring.update({row: (tok, p)} if row >= 0 else {})
        nxt = []
        for b, p in zip(seq, pos):
            ctx = [self.full.get(at(b, q)) for q in range(p + 1)]
            ok = all(c is not None and c[1] == q for q, c in enumerate(ctx)) and all(
                before.get(slot[b] * llm.RING + q % llm.RING) == ctx[q] for q in range(max(p - 127, 0), start[b]))
            nxt.append(_hash([c[0] for c in ctx]) if ok else 996)
        nxt = torch.tensor(nxt)[inp.logit_rows.cpu() if torch.is_tensor(inp.logit_rows) else inp.logit_rows]  # [R]
        logits = torch.full((nxt.shape[0], 201088), -30.0)  # [R, V]
        logits[torch.arange(nxt.shape[0]), nxt] = 0.0
        return logits.to(inp.ids.device) if out is None else out.copy_(logits)


@pytest.mark.parametrize("seed", range(4))
def test_scheduler_random_mixes_give_each_request_its_own_tokens(tiny_dir, seed):
    """Random prompt lengths, chunk sizes, arrivals, stop ids, logprobs and aborts, with too few slots and pages
    for all at once: each request gets _CacheModel's tokens from its own prompt (a prefix of them if aborted)."""
    rng = random.Random(seed)
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=3, num_pages=24,
              prefill_chunk=[4, 16, 64, 200][seed % 4], cuda_graphs=False)  # graphs would hold the real model
    eng.model = _CacheModel(16)
    try:
        reqs = []
        for _ in range(14):
            p, n = [rng.randrange(997) for _ in range(rng.randint(1, 150))], rng.randint(1, 12)
            want = []
            for _ in range(n):
                want.append(_hash(p + want))
            kw = dict(max_tokens=n, ignore_eos=True, logprobs=rng.choice([None, None, 1]),
                      prompt_logprobs=rng.choice([None, None, None, 0]))
            if rng.random() < 0.3:
                kw["stop_token_ids"] = [rng.choice(want)]
                want = want[:want.index(kw["stop_token_ids"][0]) + 1]
            reqs.append((p, want, kw, eng.generate(p, **kw)))
            if rng.random() < 0.15:
                eng.abort(reqs[rng.randrange(len(reqs))][3].request_ids[0])
            time.sleep(rng.random() * 0.05)  # arrivals while others prefill or decode
        for p, want, kw, fut in reqs:
            o = fut.result(timeout=300)
            got = want[:len(o.token_ids)] if o.finish_reason == "abort" else want
            assert o.token_ids == got, (seed, len(p), kw, o.finish_reason)
            assert kw["logprobs"] is None or len(o.logprobs or []) == len(o.token_ids)
            assert kw["prompt_logprobs"] is None or o.finish_reason == "abort" or len(o.prompt_logprobs) == len(p)
        assert _pool_full(eng) and len(eng.free_pages) == 23
    finally:
        eng.stop()


def test_sampling_seeded_and_per_request(engine):
    p = list(range(7000, 7010))
    a = SamplingParams(max_tokens=4, temperature=1.0, seed=11, ignore_eos=True)
    alone = engine.generate(p, a).result().token_ids
    mixed = engine.generate([p, p, p], [a, SamplingParams(max_tokens=4, ignore_eos=True),
                                        SamplingParams(max_tokens=4, temperature=1.0, seed=12, ignore_eos=True)]).result()
    assert mixed[0].token_ids == alone  # the same seed, whatever else the batch holds
    assert mixed[1].token_ids == engine.generate(p, max_tokens=4, ignore_eos=True).result().token_ids  # greedy
    assert mixed[2].token_ids != alone


def test_stream_abort_and_pool_back_to_full(engine):
    pages = len(engine.free_pages)
    stream = engine.stream(list(range(50)), max_tokens=500, ignore_eos=True)
    first = next(stream)
    engine.abort(engine.running[0].id if engine.running else -1)
    rest = list(stream)
    assert first.token_id is not None and rest[-1].output.finish_reason == "abort"
    assert len(rest[-1].output.token_ids) < 500
    engine.generate([1], max_tokens=1).result()  # one more step: the abort has been applied
    assert len(engine.free_pages) == pages and len(engine.free_slots) == engine.max_slots


def test_stop_tokens_and_text_deltas(engine):
    out = engine.generate([5, 6, 7], max_tokens=8, ignore_eos=True).result()
    stop_at = out.token_ids[3]
    cut = engine.generate([5, 6, 7], max_tokens=8, stop_token_ids=[stop_at]).result()
    assert cut.finish_reason == "stop" and cut.token_ids == out.token_ids[:out.token_ids.index(stop_at) + 1]
    assert cut.text == engine.tokenizer.decode(cut.token_ids[:-1])  # the stop token's text is left out (as vLLM)
    deltas = list(engine.stream([5, 6, 7], max_tokens=4, ignore_eos=True))
    assert "".join(d.text for d in deltas) == deltas[-1].output.text
    # ignore_eos drops only the default stop ids: a request's own still stop it, and streams leave them out too
    deltas = list(engine.stream([5, 6, 7], max_tokens=8, ignore_eos=True, stop_token_ids=[stop_at]))
    assert deltas[-1].output.token_ids == cut.token_ids and "".join(d.text for d in deltas) == cut.text


def test_stop_mid_batch_gets_no_extra_token(engine):
    """The host reads a step's tokens while the next step runs: a request that stops on a token mid-batch
    loses the look-ahead step's token, its neighbours' tokens do not change, and its slot serves the next."""
    alone = engine.generate([PROMPTS[2], [5, 6, 7]], max_tokens=12, ignore_eos=True).result()
    stop_at = alone[1].token_ids[4]
    cut = alone[1].token_ids[:alone[1].token_ids.index(stop_at) + 1]
    params = [SamplingParams(max_tokens=12, ignore_eos=True), SamplingParams(max_tokens=12, stop_token_ids=[stop_at])]
    both = engine.generate([PROMPTS[2], [5, 6, 7]], params).result()
    assert both[0].token_ids == alone[0].token_ids and both[0].finish_reason == "length"
    assert both[1].token_ids == cut and both[1].finish_reason == "stop"
    again = engine.generate([[5, 6, 7]] * 4, max_tokens=12, ignore_eos=True).result()
    assert all(o.token_ids == alone[1].token_ids for o in again)
    assert len(engine.free_slots) == engine.max_slots and engine._pending is None


def test_graph_warm_up_writes_only_the_scratch_slot(engine):
    """A graph captured on first use (sampling) is warmed up outside the graph on the static rows, which still
    hold the last batch's slots and positions: the warm-up must write K/V only to the scratch slot and page."""
    engine.generate(PROMPTS[1:3], max_tokens=4, ignore_eos=True).result()  # static rows: 2 real slots, pos > 0
    kv, S, page = engine.kv, engine.max_slots, engine.page
    before = [t.clone() for t in (kv.k_full, kv.v_full, kv.k_ring, kv.v_ring)]
    engine._warm_up(2, True)
    for b, a in zip(before[:2], (kv.k_full, kv.v_full)):
        assert torch.equal(b[:, page:], a[:, page:])  # page 0 is the scratch page
    for b, a in zip(before[2:], (kv.k_ring, kv.v_ring)):
        assert torch.equal(b[:, :S * 128], a[:, :S * 128])  # ring slot S is the scratch slot
    out = engine.generate(PROMPTS[1], max_tokens=4, ignore_eos=True).result()
    assert out.token_ids == engine.generate(PROMPTS[1], max_tokens=4, ignore_eos=True).result().token_ids


def test_every_decode_batch_writes_one_logits_buffer(engine):
    """Decode steps of any batch, greedy or sampling, write their logits into static["logits"] [S, V]. Logits that
    each graph allocated itself stayed alive per bucket: 12.7 GiB at 1,024 slots, start-up ran out of memory (s45)."""
    buf, V = engine.static["logits"], engine.cfg.vocab_size
    assert buf.shape == (engine.max_slots, V) and buf.dtype == torch.float32
    for B, sampling in ((1, False), (engine.max_slots, True)):
        engine._warm_up(B, sampling)  # static rows now on the scratch slot and page: the next body writes only there
        buf.fill_(float("nan"))
        ids, logits = engine._decode_body(B, sampling)
        assert logits.data_ptr() == buf.data_ptr() and logits.shape == (B, V)
        assert torch.isfinite(buf[:B]).all()
        if not sampling:
            assert torch.equal(ids[:B], logits.argmax(-1))
    out = engine.generate(PROMPTS[1], max_tokens=4, ignore_eos=True).result()
    assert out.token_ids == engine.generate(PROMPTS[1], max_tokens=4, ignore_eos=True).result().token_ids


@pytest.mark.parametrize("prompt,kw,match", [([], {}, "empty"), ([1, 2], dict(max_tokens=0), "max_tokens"),
                                             ([1], dict(temperature=-1.0), "temperature"),
                                             ([1], dict(temperature=10**400), "temperature"),  # not a float32
                                             ([1], dict(temperature=float("inf")), "temperature"),
                                             ([1], dict(top_p=0.0), "top_p"), ([1], dict(top_p=1.5), "top_p"),
                                             ([1], dict(top_k=-2), "top_k"), ([201088], {}, "vocab"),
                                             ([1] * 10, dict(max_tokens=131070), "context length"),
                                             ([1], dict(seed=2**64), "seed"),  # would fail the whole step
                                             ([1], dict(stop_token_ids=200002), "stop_token_ids"),
                                             ([1], dict(top_p=None), "top_p"), ([1], dict(min_p="0.1"), "min_p"),
                                             ([1], dict(stop=7), "stop"), ([1], dict(max_tokens=True), "max_tokens"),
                                             (7, {}, "prompt: must be a string or a list of token ids, got int"),
                                             (None, {}, "got NoneType"), (b"\x01", {}, "got bytes"),
                                             ([1], dict(ignore_eos="no"), "ignore_eos"),  # a truthy string
                                             ([1], dict(seed=True), "seed"),  # bools are not ints here
                                             ([1], dict(stop_token_ids=[True]), "stop_token_ids"),
                                             (np.array([1, 2]), {}, "got ndarray"),
                                             (torch.tensor([1]), {}, "got Tensor"),
                                             ([np.int64(1)], {}, "token ids must be ints")])  # docs/api.md: .tolist()
def test_bad_input_is_rejected_and_nothing_enqueued(engine, prompt, kw, match):
    before = engine.inbox.qsize()
    with pytest.raises(ValueError, match=match):
        engine.generate([[1, 2, 3], prompt], **kw)
    with pytest.raises(ValueError, match="no prompt"):
        engine.generate([])
    with pytest.raises(ValueError, match="prompt: must be a string"):  # one bad prompt, not a list to iterate
        engine.generate(None)
    with pytest.raises(ValueError, match="got int64"):  # NumPy ints are no Python ints: a list of prompts
        engine.generate(list(np.array([1, 2])))
    with pytest.raises(ValueError, match="sampling_params: must be SamplingParams or a list of them, got dict"):
        engine.generate([[1, 2], prompt], sampling_params=dict(max_tokens=2))
    assert engine.inbox.qsize() == before


def test_sampling_params_and_its_fields_as_keywords_are_refused_together(engine):  # the keywords went unseen
    before, sp, chat = engine.inbox.qsize(), SamplingParams(max_tokens=2), [{"role": "user", "content": "hi"}]
    kw = dict(temperature=0.5, top_p=0.9)
    for call in (lambda: engine.generate([1, 2], sp, **kw), lambda: next(engine.stream([1, 2], sp, **kw)),
                 lambda: engine.chat(chat, sampling_params=sp, **kw),
                 lambda: next(engine.chat_stream(chat, sampling_params=sp, **kw))):
        with pytest.raises(ValueError, match="sampling_params: given with temperature, top_p"):
            call()
    assert engine.inbox.qsize() == before
    assert engine.generate([1, 2], None, max_tokens=2).result().token_ids  # keywords alone still make the params


@pytest.mark.parametrize("kw", [dict(max_slots=0), dict(prefill_chunk=0), dict(page_size=0), dict(num_pages=1.5),
                                dict(max_model_len=-5), dict(max_slots=None), dict(gpu_memory_utilization=90),
                                dict(gpu_memory_utilization=0)])
def test_bad_engine_arguments_are_refused_by_name(tiny_dir, kw):  # max_slots=0 used to hang every request
    with pytest.raises(ValueError, match=next(iter(kw))):
        LLM(tiny_dir, tokenizer=TIKTOKEN, **kw)


def test_request_keeps_its_own_checked_params(engine):
    """A caller reusing its SamplingParams can't change a request already made: a larger max_tokens mid-run wrote
    K/V past the request's pages into another request's (audit, s61), and a bad value failed the whole step."""
    stop, ids = ["a"], [5]
    sp = SamplingParams(max_tokens=3, stop=stop, stop_token_ids=ids)  # both kept as tuples: copies
    r = engine._make_request([1, 2, 3], sp)
    sp.max_tokens, sp.seed = 50, 2**64
    stop.append(7)
    ids.append("x")
    assert (r.params.max_tokens, r.params.seed, r.params.stop, r.params.stop_token_ids) == (3, None, ("a",), (5,))
    fut = engine.generate([1, 2, 3], sp := SamplingParams(max_tokens=3, ignore_eos=True))
    sp.max_tokens = 40
    assert len(fut.result().token_ids) == 3
    sp.max_tokens = -1
    with pytest.raises(ValueError, match="max_tokens"):  # checked again when used
        engine.generate([1, 2, 3], sp)


def test_cpu_without_the_interpreter_is_refused(tiny_dir, monkeypatch):
    """kernels.py's @triton.jit reads TRITON_INTERPRET when imported: CPU tensors to compiled kernels would fail
    in the first launch with Triton's own error, so device='cpu' without it is refused before loading."""
    monkeypatch.setattr(llm, "INTERPRET", False)  # as if imported on a GPU machine without TRITON_INTERPRET=1
    with pytest.raises(RuntimeError, match="device='cpu' runs the kernels under TRITON_INTERPRET=1"):
        LLM(tiny_dir, tokenizer=TIKTOKEN, device="cpu")


def test_step_failure_fails_its_futures_and_engine_keeps_serving(engine):
    real = engine.model.forward
    calls = []

    def broken(inp, kv):
        calls.append(1)
        raise RuntimeError("injected fault")

    engine.model.forward = broken
    try:
        fut = engine.generate([9, 9, 9], max_tokens=3)
        with pytest.raises(RuntimeError, match="injected fault"):
            fut.result(timeout=60)
    finally:
        engine.model.forward = real
    assert calls and engine.generate([9, 9, 9], max_tokens=3).result(timeout=120).token_ids


def test_thousand_requests_leave_the_pool_full(tiny_dir):
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=256, num_pages=300)
    try:
        pages = len(eng.free_pages)
        outs = eng.generate([[i + 1] for i in range(1000)], max_tokens=1).result()
        assert len(outs) == 1000 and all(len(o.token_ids) == 1 for o in outs)
        assert len(eng.free_pages) == pages and len(eng.free_slots) == 256
    finally:
        eng.stop()
        eng.stop()  # a second stop is harmless


def test_stop_resolves_everything(tiny_dir):
    eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=2, num_pages=64)
    futs = [eng.generate(list(range(10 + i)), max_tokens=400, ignore_eos=True) for i in range(4)]
    eng.stop()
    assert all(f.done() and f.result().finish_reason in ("abort", "length") for f in futs)
    with pytest.raises(RuntimeError, match="stopped"):
        eng.generate([1], max_tokens=1)


def test_chat_renders_harmony_and_parses_output(engine):
    conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    out = engine.chat(conv, reasoning_effort="low", max_tokens=3).result()  # random weights: any tokens
    assert out.finish_reason in ("stop", "tool_calls", "length", "malformed") and len(out.output.token_ids) <= 3
    prompt = out.output.prompt_token_ids
    assert prompt[-2:] == engine.tokenizer.encode("<|start|>assistant", allow_special=True)
    assert "Reasoning: low" in engine.tokenizer.decode(prompt)
    wellformed = engine.tokenizer.encode("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>"
                                         "final<|message|>Hello!<|return|>", allow_special=True)
    as_out = lambda ids: out.output.__class__(0, prompt, ids, engine.tokenizer.decode(ids), "stop")  # as finished
    parsed = engine._parse_chat(as_out(wellformed))
    assert (parsed.reasoning, parsed.text, parsed.finish_reason) == ("Think.", "Hello!", "stop")
    call = engine.tokenizer.encode('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
                                   '{"city": "Paris"}<|call|>', allow_special=True)
    parsed = engine._parse_chat(as_out(call))
    assert parsed.tool_calls == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
    assert parsed.finish_reason == "tool_calls"
    items = list(engine.chat_stream(conv, max_tokens=3))
    assert items[-1].output.token_ids and all(hasattr(d, "kind") for d in items[:-1])


def test_stop_strings_cut_the_text(engine):
    out = engine.generate([11, 12, 13], max_tokens=8, ignore_eos=True).result()
    text = out.text
    stop = text[3:6] if len(text) >= 6 else text[-1:]
    cut = engine.generate([11, 12, 13], max_tokens=8, stop=[stop]).result()
    assert cut.finish_reason == "stop" and cut.text == text[:text.find(stop)] and stop not in cut.text
    deltas = list(engine.stream([11, 12, 13], max_tokens=8, stop=[stop]))  # shows neither the stop string nor
    assert "".join(d.text for d in deltas) == cut.text == deltas[-1].output.text  # its start: text only grows


def test_closed_stream_aborts_its_request(engine):
    pages = len(engine.free_pages)
    stream = engine.stream(list(range(60)), max_tokens=500, ignore_eos=True)
    assert next(stream).token_id is not None
    stream.close()  # a client gone: the request ends now, not after 500 tokens
    engine.generate([1], max_tokens=1).result()  # one more step: the abort has been applied
    assert len(engine.free_pages) == pages and len(engine.free_slots) == engine.max_slots and not engine.running


def _pool_full(engine, seconds=300):
    end = time.monotonic() + seconds
    while (len(engine.free_slots) < engine.max_slots or engine.running) and time.monotonic() < end:
        time.sleep(0.05)
    return len(engine.free_slots) == engine.max_slots and not engine.running


def test_cancel_drops_a_queued_request_and_a_taken_one_says_no(engine):
    """future.cancel() before the loop takes a request drops it: never admitted, nothing leaked. Once taken its
    future is running: cancel() says False and the request ends normally (abort() is what ends it early), so the
    engine never resolves a future the caller cancelled under it (that raised in the step and failed its batch)."""
    pages = len(engine.free_pages)
    r = engine._make_request([1, 2, 3], SamplingParams(max_tokens=4, ignore_eos=True))
    assert r.future.cancel()  # nothing has taken it yet
    engine._submit([r])
    assert len(engine.generate([4, 5, 6], max_tokens=3, ignore_eos=True).result().token_ids) == 3  # FIFO: r first
    assert r.future.cancelled() and not r.out and r.slot == -1
    assert len(engine.free_pages) == pages and len(engine.free_slots) == engine.max_slots
    taken = engine.generate([7, 8], max_tokens=6, ignore_eos=True)
    while not (taken.running() or taken.done()):
        time.sleep(0.001)
    assert not taken.cancel() and len(taken.result().token_ids) == 6


def test_cancelled_batch_and_chat_futures_leave_the_engine_serving(engine, caplog):
    pages = len(engine.free_pages)
    reqs = [engine._make_request(p, SamplingParams(max_tokens=2)) for p in ([1], [2])]
    parent = llm._gather_futures([r.future for r in reqs])
    assert parent.cancel() and all(r.future.cancelled() for r in reqs)  # a batch's queued requests go with it
    engine._submit(reqs)
    chat = engine.chat([{"role": "user", "content": "Hi"}], max_tokens=5)
    assert chat.cancel() and chat.cancelled()  # its request: dropped if still queued, else it runs to its end
    assert len(engine.generate([9], max_tokens=2, ignore_eos=True).result().token_ids) == 2
    assert not any(r.out for r in reqs) and chat.cancelled() and _pool_full(engine)
    assert len(engine.free_pages) == pages
    assert not [x for x in caplog.records if x.name == "concurrent.futures"]  # no callback raised


def test_a_cancel_while_the_result_is_made_comes_too_late(engine, monkeypatch, caplog):
    """A batch's and a chat's future are running while their result is gathered or parsed: the caller's cancel() in
    that window returns False, where set_result used to raise InvalidStateError in the callback (audit, s62)."""
    class Racing(Future):  # the caller cancels the batch while its results are read
        def result(self, timeout=None):
            return parent.cancel() or super().result(timeout)
    parent = llm._gather_futures([f := Racing()])
    f.set_result(7)
    inner = Future()
    inner.request_ids = [0]
    monkeypatch.setattr(engine, "generate", lambda *a, **kw: inner)
    chat = engine.chat([{"role": "user", "content": "Hi"}])
    monkeypatch.setattr(engine, "_parse_chat", lambda out: chat.cancel() or "parsed")
    inner.set_result(["out"])
    assert parent.result(timeout=1) == [7] and chat.result(timeout=1) == "parsed"
    assert not [x for x in caplog.records if x.name == "concurrent.futures"]  # no callback raised


def test_chat_ended_by_a_stop_string_says_stop_and_cuts_the_fields(engine):
    tok = engine.tokenizer
    head = [tok.special["<|channel|>"]] + tok.encode("analysis") + [tok.special["<|message|>"]] + tok.encode("Hm. So")
    ids = [tok.special["<|channel|>"]] + tok.encode("final") + [tok.special["<|message|>"]] + tok.encode("Hi. Bye")
    for reason in ("length", "abort"):  # the parser saw no end token: the engine's reason stands
        assert engine._parse_chat(RequestOutput(0, [1], ids, tok.decode(ids), reason)).finish_reason == reason
    done = ids + [tok.special["<|return|>"]]
    assert engine._parse_chat(RequestOutput(0, [1], done, tok.decode(done), "stop")).finish_reason == "stop"
    nxt = [tok.special["<|end|>"], tok.special["<|start|>"]] + tok.encode("assistant")
    for out, want in [(ids, ("", "Hi")), (head, ("Hm", "")), (head + nxt + ids, ("Hm. So", "Hi"))]:
        raw = tok.decode(out)  # stop=["."] in the last channel: out.text ends before it, and so do the fields
        chat = engine._parse_chat(RequestOutput(0, [1], out, raw[:raw.rfind(".")], "stop"))
        assert (chat.reasoning, chat.text, chat.finish_reason) == (*want, "stop")


def test_chat_cut_off_in_a_header_says_length_with_no_text(engine):  # max_tokens ended it: no header text
    tok = engine.tokenizer
    for out in ("<|channel|>analy", "<|channel|>analysis<|message|>Hm<|end|><|start|>assistant<|channel|>fin"):
        ids = tok.encode(out, allow_special=True)
        chat = engine._parse_chat(RequestOutput(0, [1], ids, tok.decode(ids), "length"))
        assert (chat.text, chat.finish_reason) == ("", "length")


def test_a_tuple_of_token_ids_is_one_prompt(engine):
    assert engine.generate((5, 6, 7), max_tokens=2, ignore_eos=True).result().token_ids == \
        engine.generate([5, 6, 7], max_tokens=2, ignore_eos=True).result().token_ids


@pytest.mark.parametrize("body, stop, want", [
    ("analysis<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Oh Hi!", "Hi!", ("Hi", "Oh ")),
    ("analysis<|message|>Hm<|end|><|start|>assistant<|channel|>final", "final", ("Hm", "")),  # in a header
    ("analysis<|message|>Hm<|end|><|start|>assistant<|channel|>final", "assistant", ("Hm", "")),
    ("analysis<|message|>Hm Hm", "m H", ("H", "")),
])
def test_chat_stop_string_cuts_only_the_open_message(engine, body, stop, want):
    """A stop string ends the output: it cuts the message still open (or a header: left out), never a closed
    one that happens to hold the same text, and the finish reason stays stop."""
    ids = engine.tokenizer.encode("<|channel|>" + body, allow_special=True)
    raw = engine.tokenizer.decode(ids)
    chat = engine._parse_chat(RequestOutput(0, [1], ids, raw[:raw.rfind(stop)], "stop"))
    assert (chat.reasoning, chat.text, chat.tool_calls, chat.finish_reason) == (*want, [], "stop")


def test_default_stop_ids_are_generation_configs(engine):  # as vLLM reads generation_config.json's eos_token_id
    assert sorted(engine.stop_ids) == [199999, 200002, 200012]  # <|endoftext|>, <|return|>, <|call|>


def _scripted_stream(tok, ids, stop, stop_ids=None):
    """What LLM.stream yields for `ids` under stop strings `stop` (the engine's own _cut) and stop token ids
    (default: the checkpoint's, whose text stream() leaves out), without a model."""
    stop_ids = tok.eos_ids if stop_ids is None else stop_ids

    def stream(prompt, sampling_params=None, **kw):
        shown = ""
        for i, t in enumerate(ids):
            text = tok.decode([x for x in ids[:i + 1] if x not in stop_ids])
            now = llm._cut(text, stop, hold=True)
            yield llm.StreamDelta(t, now[len(shown):], None, len(now) < len(text))
            shown = now
            if llm._cut(text, stop) != text or i == len(ids) - 1:
                out = RequestOutput(0, [1], ids[:i + 1], llm._cut(text, stop), "stop")
                yield llm.StreamDelta(None, out.text[len(shown):], out)
                return
    return stream


@pytest.mark.parametrize("stop, want", [(["Done"], ("Think. ", "")), (["Bye"], ("Think. Done", "Hello! ")),
                                        (["Thinking", "Hello!!"], ("Think. Done", "Hello! Bye")),
                                        (["k. D", "o! B"], ("Thin", ""))])
def test_chat_stream_holds_back_stop_strings(engine, monkeypatch, stop, want):
    """Deltas wait while the raw text may begin a stop string; they add up to the ChatOutput's fields."""
    tok = engine.tokenizer
    ids = tok.encode("<|channel|>analysis<|message|>Think. Done<|end|><|start|>assistant<|channel|>final"
                     "<|message|>Hello! Bye<|return|>", allow_special=True)
    monkeypatch.setattr(engine, "stream", _scripted_stream(tok, ids, stop))
    *deltas, out = list(engine.chat_stream([{"role": "user", "content": "Hi"}], stop=stop))
    got = tuple("".join(d.text for d in deltas if d.kind == k) for k in ("reasoning", "text"))
    assert got == (out.reasoning, out.text) == want and all(d.text for d in deltas)
    assert not any(s in f for s in stop for f in got)


@pytest.mark.parametrize("raw, own, want", [("<|channel|>final<|message|>Hi there.", True, ("", "Hi there")),
                                            ("<|channel|>analysis<|message|>Think.", True, ("Think", "")),
                                            ("Hello world<|endoftext|>", False, ("", "Hello world"))])  # malformed
def test_chat_stream_leaves_the_stop_token_out(engine, monkeypatch, raw, own, want):
    """A stop token's text is in no delta, as in stream(): a text token given as a stop id ("."), and the default
    <|endoftext|> after output that never became a message, which the parser reads as text (audit, s62)."""
    tok = engine.tokenizer
    ids = tok.encode(raw, allow_special=True)
    stop_ids = [ids[-1]] if own else engine.stop_ids
    monkeypatch.setattr(engine, "stream", _scripted_stream(tok, ids, [], stop_ids))
    *deltas, out = list(engine.chat_stream([{"role": "user", "content": "Hi"}], **(
        dict(stop_token_ids=stop_ids) if own else {})))
    got = tuple("".join(d.text for d in deltas if d.kind == k) for k in ("reasoning", "text"))
    assert got == (out.reasoning, out.text) == want


CALLS = ('<|channel|>commentary to=functions.a <|constrain|>json<|message|>{"x": 1}<|end|><|start|>assistant'
         '<|channel|>commentary to=functions.b <|constrain|>json<|message|>{"city": "Paris", "unit": "c"}<|call|>')


@pytest.mark.parametrize("stop, want", [(['"unit'], ['{"x": 1}', '{"city": "Paris", ']),
                                        (["Pa"], ['{"x": 1}', '{"city": "']),
                                        (["ris\", \"u"], ['{"x": 1}', '{"city": "Pa']),  # across tokens
                                        (["zzz"], ['{"x": 1}', '{"city": "Paris", "unit": "c"}'])])
def test_chat_stream_tool_call_args_hold_back_stop_strings(engine, monkeypatch, stop, want):
    """A stop string inside a call's arguments: each call's streamed arguments add up to its ChatOutput arguments
    and never show the stop string (until s66 they carried it). Two calls: the count restarts with each call."""
    tok = engine.tokenizer
    monkeypatch.setattr(engine, "stream", _scripted_stream(tok, tok.encode(CALLS, allow_special=True), stop))
    *deltas, out = list(engine.chat_stream([{"role": "user", "content": "Hi"}], stop=stop))
    args = {n: "".join(d.text for d in deltas if d.kind == "tool_call_args" and d.name == n) for n in "ab"}
    assert [args["a"], args["b"]] == [c["arguments"] for c in out.tool_calls] == want
    assert [d.text for d in deltas if d.kind == "tool_call_name"] == ["a", "b"] and all(d.text for d in deltas)
    assert not any(s in a for s in stop for a in args.values())


def test_chat_stream_with_a_stop_string_matches_chat(engine):
    """On the model's own (random, malformed) output: the streamed text is what chat() returns, stop string cut."""
    conv = [{"role": "user", "content": "Hi"}]
    text = engine.chat(conv, max_tokens=4, ignore_eos=True).result().text
    assert len(text) >= 8
    stop = [text[-5:-2]]  # in the last token or across the last two
    whole = engine.chat(conv, max_tokens=4, ignore_eos=True, stop=stop).result()
    *deltas, out = list(engine.chat_stream(conv, max_tokens=4, ignore_eos=True, stop=stop))
    streamed = "".join(d.text for d in deltas if d.kind == "text")
    assert whole.output.finish_reason == out.output.finish_reason == "stop" and out.text == whole.text == streamed
    assert stop[0] not in streamed


def test_logprobs_and_prompt_logprobs_match_reference(engine, reference_model):
    p = list(range(400, 550))  # 150 tokens, scored over 3 prefill chunks of 64
    chunk, engine.prefill_chunk = engine.prefill_chunk, 64
    try:
        out = engine.generate(p, max_tokens=3, ignore_eos=True, logprobs=2, prompt_logprobs=1).result()
    finally:
        engine.prefill_chunk = chunk
    ref = torch.log_softmax(reference_model.logits(p + out.token_ids), -1)  # [T, V]
    assert out.prompt_logprobs[0] is None and len(out.prompt_logprobs) == len(p)
    for i in range(1, len(p)):
        d = out.prompt_logprobs[i]
        assert abs(d[p[i]] - ref[i - 1, p[i]].item()) < 1e-3 and ref[i - 1].argmax().item() in d
    for k, tok in enumerate(out.token_ids):
        row = ref[len(p) - 1 + k]
        assert abs(out.logprobs[k][tok] - row[tok].item()) < 1e-3
        assert set(row.topk(2).indices.tolist()) <= set(out.logprobs[k])


def test_scored_prompts_prefill_at_most_512_rows(engine, monkeypatch):
    """A scored chunk's [rows, V] fp32 logits stay inside the 1 GiB reserve: 512 rows (0.38 GiB). At 1,024 rows, with
    log_softmax's [R, V] copy, a scored prompt peaked 1.575 GiB and ran out of memory at util 1.0 (s46, H100)."""
    rows, forward = [], engine.model.forward

    def recording(inp, kv, out=None):
        rows.append(len(logits := forward(inp, kv, out=out)))
        return logits
    monkeypatch.setattr(engine.model, "forward", recording)
    p = list(range(1000, 1600))
    out = engine.generate(p, max_tokens=2, ignore_eos=True, prompt_logprobs=0).result()
    assert len(out.prompt_logprobs) == len(p) and all(p[i] in out.prompt_logprobs[i] for i in range(1, len(p)))
    assert rows[:2] == [512, 88], rows  # the prompt in two chunks, one row per prompt token


@pytest.mark.parametrize("messages,tools,match", [
    ([{"role": "wizard", "content": "x"}], None, "role"),
    ([{"role": "user", "content": "x"}], [{"type": "function", "function": {"description": "no name"}}], "name"),
    ([{"role": "user", "content": "x"}], [{"type": "function", "function": {"name": "f", "parameters": {1, 2}}}],
     "JSON"),
    (None, None, "messages: must be a non-empty list"), (5, None, "messages: must be a non-empty list"),  # TypeErrors
    ([], None, "messages: must be a non-empty list"),  # chat_stream([]) generated from a system prompt alone (s63)
])
def test_bad_chat_input_is_rejected_and_nothing_enqueued(engine, messages, tools, match):
    before = engine.inbox.qsize()
    with pytest.raises(ValueError, match=match):
        engine.chat(messages, tools=tools)
    with pytest.raises(ValueError, match=match):
        next(engine.chat_stream(messages, tools=tools))
    assert engine.inbox.qsize() == before


def test_vllm_spellings_mean_what_they_do_there(engine, tiny_dir):  # each was refused or misread (audit, s63)
    conv = [{"role": "user", "content": "Hi"}]
    sp = SamplingParams(max_tokens=2, ignore_eos=True)
    assert engine.chat(conv, sp).result().output.token_ids == engine.chat(conv, sampling_params=sp).result(
        ).output.token_ids  # vLLM's positional order: chat(messages, sampling_params)
    assert SamplingParams(top_k=-1).top_k == 0 and SamplingParams(temperature=1e-40).temperature == 0.0
    greedy = engine.generate([1, 2, 3], max_tokens=2, ignore_eos=True).result().token_ids
    assert engine.generate([1, 2, 3], max_tokens=2, ignore_eos=True, temperature=1e-40).result().token_ids == greedy
    for bad in ("abc", 2.7, [1]):  # abort(2.7) ended request 2
        with pytest.raises(ValueError, match="request_id: must be an int"):
            engine.abort(bad)
    with pytest.raises(ValueError, match="prompt: token ids must be ints"):
        engine.generate([True, False])
    with pytest.raises(ValueError, match="dtype must be torch.bfloat16 or torch.float32"):
        LLM(tiny_dir, tokenizer=TIKTOKEN, dtype="float16")


def test_the_engine_seed_makes_unseeded_sampling_reproducible(tiny_dir):  # two processes drew differently (s63)
    runs = []
    for _ in range(2):
        engine = LLM(tiny_dir, tokenizer=TIKTOKEN, dtype="float32", seed=5, max_slots=2, num_pages=8)
        runs.append([engine.generate([1, 2, 3], max_tokens=3, temperature=1.0, ignore_eos=True).result().token_ids
                     for _ in range(2)])
        engine.stop()
    assert runs[0] == runs[1] and runs[0][0] != runs[0][1]  # the same draws per engine, a fresh one per request


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_a_second_gpu_serves_as_the_first(tiny_dir):  # Triton launched on the thread's current device, cuda:0 (s63)
    outs = []
    for dev in ("cuda:0", "cuda:1"):
        eng = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, device=dev, page_size=16, num_pages=64)
        futs = [eng.generate(p, max_tokens=4, ignore_eos=True) for p in ([1, 2, 3], list(range(40)), [5] * 17)]
        outs.append([f.result().token_ids for f in futs])
        assert eng.model.embed.device == eng.kv.k_full.device == torch.device(dev) and eng.graphs
        eng.stop()
    assert outs[0] == outs[1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="full-size dummy weights need a GPU")
def test_dummy_20b_same_tokens_at_batch_1_and_64(tmp_path):
    """Issue 3: 64 greedy steps of one request alone and inside a batch of 64, float32 so that near-tied
    logits cannot flip (the kernels are row-independent; cuBLAS may sum differently per batch size).
    Written 2026-11-29 without a GPU run left in that session: the first H200 run checks it."""
    import json
    from model.config import GptOssConfig
    (tmp_path / "config.json").write_text(json.dumps(GptOssConfig().to_dict()))
    eng = LLM(tmp_path, load_format="dummy", dtype=torch.float32, tokenizer=TIKTOKEN, max_slots=64)
    try:
        prompts = [list(range(1000 + 37 * i, 1000 + 37 * i + 20 + i)) for i in range(64)]
        alone = eng.generate(prompts[5], max_tokens=64, ignore_eos=True).result().token_ids
        batch = eng.generate(prompts, max_tokens=64, ignore_eos=True).result()
        assert batch[5].token_ids == alone
    finally:
        eng.stop()


def test_pre_hopper_gpu_is_refused_by_name(tiny_dir, monkeypatch):
    """The kernels use sm_90 instructions (griddepcontrol): an older GPU gets a clear error before any loading,
    not a PTX compile failure at the first launch. The capability is faked, so this runs on the CPU too."""
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100-SXM4-80GB")
    with pytest.raises(RuntimeError, match="A100-SXM4-80GB is not a Hopper GPU"):
        LLM(tiny_dir, device="cuda", tokenizer=TIKTOKEN)
