"""The serving engine: request queue, slots, paged KV + 128-row rings, continuous batching, CUDA graphs
and one background thread that owns the GPU. The request path:

    LLM.generate -> (queue) -> LLM._loop -> LLM.step -> GptOss.forward -> kernels.*

Legend: B sequences in the step, T tokens in the step, W block-table width (pages per sequence),
S max_slots, P page rows, V vocab, Ls layers of one kind (sliding or full), NKV KV heads, D head dim."""
import codecs
import itertools
import os
import queue
import random
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from tqdm import tqdm

if not torch.cuda.is_available():  # no GPU: the kernels run on the CPU under Triton's interpreter
    os.environ.setdefault("TRITON_INTERPRET", "1")
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # @triton.jit reads it once: as kernels.py is imported below

from model.config import GptOssConfig
from model import harmony, ops
from model.gpt_oss import GptOss, KVCache, StepInputs
from model.tokenizer import Tokenizer
from model.weights import load_weights

RING = 128  # rows per slot in a sliding layer's ring: exactly the window
TOP_K_CAP = 1024  # top-k / top-p are resolved among the 1,024 largest logits (ops.sampling_floor)
WARM_UP = (*range(1, 17), *(2 ** i for i in range(5, 14)))  # prefilled at start-up: every compile (compile_variants.py)


@dataclass
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 0.0  # 0 = greedy, and so is anything below 1e-5 (z / t would overflow fp32)
    top_p: float = 1.0
    top_k: int = 0  # 0 (or -1) = off; at most TOP_K_CAP
    min_p: float = 0.0
    seed: int = None  # None = the next draw of the engine's generator, seeded by LLM(seed=...)
    stop: list = None  # strings: the text ends before the first one, matched across token boundaries
    stop_token_ids: list = None  # default: <|return|> 200002, <|call|> 200012, <|endoftext|> 199999
    ignore_eos: bool = False  # benchmarking: run to max_tokens
    logprobs: int = None  # per generated token: its log-probability and the top-N (N <= 20)
    prompt_logprobs: int = None  # per prompt token after the first: the same (scoring, perplexity)

    def __post_init__(self):
        def need(ok, field, what):
            if not ok:
                raise ValueError(f"{field}: {what}, got {getattr(self, field)!r}")
        num = lambda v, kinds=(int, float): isinstance(v, kinds) and not isinstance(v, bool)  # before any comparison
        need(num(self.max_tokens, int) and self.max_tokens >= 1, "max_tokens", "must be an integer >= 1")
        need(num(self.temperature) and 0 <= self.temperature <= 3.4e38, "temperature", "must be in [0, 3.4e38]")
        need(num(self.top_p) and 0 < self.top_p <= 1, "top_p", "must be a number in (0, 1]")
        need(num(self.top_k, int) and -1 <= self.top_k <= TOP_K_CAP, "top_k", f"must be an int in [-1, {TOP_K_CAP}]")
        need(num(self.min_p) and 0 <= self.min_p <= 1, "min_p", "must be a number in [0, 1]")
        need(self.seed is None or num(self.seed, int) and abs(self.seed) < 2**63, "seed", "must be an int64")
        need(self.stop_token_ids is None or isinstance(self.stop_token_ids, (list, tuple)) and all(
            num(t, int) for t in self.stop_token_ids), "stop_token_ids", "must be None or a list of ints")
        need(isinstance(self.ignore_eos, bool), "ignore_eos", "must be True or False")  # "no" would be truthy
        for f, v in (("logprobs", self.logprobs), ("prompt_logprobs", self.prompt_logprobs)):
            need(v is None or (num(v, int) and 0 <= v <= 20), f, "must be None or an int in [0, 20]")
        self.stop = [self.stop] if isinstance(self.stop, str) else self.stop
        need(self.stop is None or isinstance(self.stop, (list, tuple)) and all(
            isinstance(x, str) and x for x in self.stop), "stop", "must be a string or a list of non-empty strings")
        self.stop, self.stop_token_ids = (v if v is None else tuple(v) for v in (self.stop, self.stop_token_ids))
        self.temperature, self.top_k = 0.0 if self.temperature < 1e-5 else self.temperature, max(self.top_k, 0)


@dataclass
class RequestOutput:
    request_id: int
    prompt_token_ids: list
    token_ids: list
    text: str
    finish_reason: str  # "stop", "length" or "abort"
    metrics: dict = field(default_factory=dict)  # queue_time, ttft, decode_time (seconds)
    logprobs: list = None  # per generated token {token_id: logprob}: the chosen one and the top-N
    prompt_logprobs: list = None  # per prompt token, None for the first


@dataclass
class Request:
    id: int
    prompt: list
    params: SamplingParams
    future: Future
    seed: int = 0
    stream: queue.Queue = None  # gets each new token id, then the RequestOutput
    text: str = None  # set when a stop string cut the text
    logprobs: list = None
    prompt_logprobs: list = None
    out: list = field(default_factory=list)
    slot: int = -1
    pages: list = field(default_factory=list)
    cached: int = 0  # tokens of this sequence already in the KV cache
    t_arrive: float = field(default_factory=time.perf_counter)
    t_admit: float = 0.0
    t_first: float = 0.0


@dataclass
class ChatOutput:
    request_id: int
    reasoning: str  # the analysis channel
    text: str  # the final channel (and commentary preambles); malformed output lands here too
    tool_calls: list  # [{"name": ..., "arguments": JSON string}]
    finish_reason: str  # "stop", "tool_calls", "length", "malformed" or "abort"
    output: RequestOutput  # the raw tokens and timings


@dataclass
class StreamDelta:
    token_id: int  # None on the last delta
    text: str
    output: RequestOutput = None  # set on the last delta
    held: bool = False  # text is held back: it may begin a stop string


def _cut(text, stops, hold=False):
    """text before the first stop string; hold: less a tail that the next token may complete into one too."""
    text = text[:min([i for i in (text.find(s) for s in stops) if i >= 0], default=len(text))]
    return text[:len(text) - max([k for s in stops for k in range(1, len(s)) if hold and text.endswith(s[:k])] or [0])]


def _field(out, kind):  # what a chat_stream kind's deltas add up to in the ChatOutput (a call: the last one)
    return getattr(out, kind) if kind != "tool_call_args" else (out.tool_calls or [{"arguments": ""}])[-1]["arguments"]


def _logprobs(logits, chosen, n):
    """logits [R, V] fp32; chosen: R token ids. Per row {chosen: logprob, then the top-n: logprob}."""
    lse = torch.cat([torch.logsumexp(b, -1, keepdim=True) for b in logits.split(64)])  # [R, 1]; 51 MB blocks
    picked = (logits.gather(1, torch.tensor(chosen, device=logits.device)[:, None]) - lse)[:, 0].tolist()
    top = logits.topk(n, dim=-1) if n else None
    tops = zip(top.indices.tolist(), (top.values - lse).tolist()) if n else [((), ())] * len(chosen)
    return [{c: p, **dict(zip(i, v))} for c, p, (i, v) in zip(chosen, picked, tops)]


def _params(sampling_params, kw):  # SamplingParams (or a list) or its fields as keywords; with both, kw went unseen
    if sampling_params is not None and kw:
        raise ValueError(f"sampling_params: given with {', '.join(kw)}; pass those fields in it, or no sampling_params")
    return SamplingParams(**kw) if sampling_params is None else sampling_params


def _gather_futures(futures):
    """One future resolving to the list of results, in order, once all have resolved."""
    parent, left, lock = Future(), [len(futures)], threading.Lock()

    def done(_):
        with lock:
            left[0] -= 1
            if left[0] or not parent.set_running_or_notify_cancel():  # running: a late cancel() can't race set_result
                return
        errs = [f.exception() for f in futures if f.exception() is not None]
        parent.set_exception(errs[0]) if errs else parent.set_result([f.result() for f in futures])

    for f in futures:
        f.add_done_callback(done)
    parent.add_done_callback(lambda p: p.cancelled() and [f.cancel() for f in futures])  # the queued ones
    return parent


class LLM:
    def __init__(self, model, *, dtype=None, load_format="auto", device=None, max_slots=256, max_model_len=None,
                 page_size=256, num_pages=None, gpu_memory_utilization=0.9, prefill_chunk=8192, cuda_graphs=None,
                 tokenizer=None, seed=0):
        """model: a checkpoint directory (config.json + safetensors; config.json alone with load_format="dummy").
        dtype: torch.bfloat16 (default on CUDA) or torch.float32 (verification; default on the CPU).
        tokenizer: a fallback o200k_base.tiktoken path when the directory has no tokenizer.json."""
        t0 = time.perf_counter()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        dtype = {"auto": None, "bfloat16": torch.bfloat16, "float32": torch.float32}.get(dtype, dtype)  # vLLM's names
        self.dtype = dtype or (torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        if self.dtype not in (torch.bfloat16, torch.float32):
            raise ValueError(f"dtype must be torch.bfloat16 or torch.float32 ('auto' is the default), got {dtype!r}")
        if load_format not in ("auto", "dummy"):
            raise ValueError(f"load_format {load_format!r}: use 'auto' or 'dummy'")
        for name, v in dict(max_slots=max_slots, page_size=page_size, prefill_chunk=prefill_chunk,
                            num_pages=num_pages, max_model_len=max_model_len).items():  # None: the default
            if not (type(v) is int and v >= 1 or v is None and name in ("num_pages", "max_model_len")):
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if not (type(gpu_memory_utilization) in (int, float) and 0 < gpu_memory_utilization <= 1):
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization!r}")
        if self.device.type == "cuda" and torch.cuda.get_device_capability(self.device) < (9, 0):
            raise RuntimeError(f"{torch.cuda.get_device_name(self.device)} is not a Hopper GPU: the kernels need sm_90")
        if self.device.type == "cpu" and not INTERPRET:  # CPU tensors would reach compiled kernels
            raise RuntimeError("device='cpu' runs the kernels under TRITON_INTERPRET=1: set it before importing llm")
        if self.device.type == "cuda":  # Triton launches on the thread's current device: this one's, then the loop's
            self.device = torch.device("cuda", self.device.index if self.device.index is not None else
                                       torch.cuda.current_device())  # "cuda": the caller's current GPU
            torch.cuda.set_device(self.device)
        self.cfg = cfg = GptOssConfig.from_file(Path(model) / "config.json")
        self.max_model_len = min(max_model_len or cfg.max_position_embeddings, cfg.max_position_embeddings)
        self.tokenizer = Tokenizer.from_dir(model, tokenizer)
        glob, layers = load_weights(model, cfg, self.device, self.dtype, dummy=load_format == "dummy", seed=seed,
                                    progress=lambda it: tqdm(it, desc="loading weights", unit="layer", leave=False))
        self.model = GptOss(cfg, glob, layers, self.max_model_len, self.device)
        self.max_slots, self.page, self.prefill_chunk = max_slots, page_size, prefill_chunk
        self.kv = self._allocate_cache(num_pages, gpu_memory_utilization)
        self.free_slots, self.free_pages = deque(range(max_slots)), deque(range(1, self.kv.k_full.size(1) // page_size))
        self.stop_ids = list(self.tokenizer.eos_ids)  # <|return|>, <|call|>, <|endoftext|> (generation_config.json)
        self.graphs, self.graph_pool = {}, None
        self._static_buffers()
        self.use_graphs = cuda_graphs if cuda_graphs is not None else self.device.type == "cuda"
        for B in tqdm(self.buckets[::-1] if self.use_graphs else [], "capturing CUDA graphs", leave=False):
            self.graphs[(B, False)] = self._capture(B, False)  # greedy ones, largest first: all share one pool
        self.waiting, self.running, self.inbox, self.ids = [], [], queue.Queue(), itertools.count()
        self.stopping, self.error, self.lock, self.rng = False, None, threading.Lock(), random.Random(seed)
        cap = min(prefill_chunk, self.kv_tokens // 2, self.max_model_len - 1) if self.use_graphs else 0
        for n in sorted({min(n, cap) for n in WARM_UP + (cap,)} - {0}):  # each prefill size class's kernels
            self.waiting.append(r := self._make_request([0] * n, SamplingParams(max_tokens=1)))
            while not r.future.done():  # compile now, not in users' requests, where every stream waits (s46, s47)
                self.step()
        self.thread = threading.Thread(target=self._loop, name="llm-loop", daemon=True)
        self.thread.start()
        self.startup_s = time.perf_counter() - t0

    # ------------------------------------------------------------------ public API
    def generate(self, prompts, sampling_params=None, **kw):
        """prompts: a string, a list of token ids, or a list of either. sampling_params: one SamplingParams,
        one per prompt, or its fields as keywords. Returns a Future of one RequestOutput (single prompt)
        or of a list of them; future.request_ids names the requests for abort()."""
        single = not isinstance(prompts, (list, tuple)) or prompts and isinstance(prompts[0], int)  # else a list
        plist = [prompts] if single else list(prompts)
        if not plist:
            raise ValueError("prompt: no prompt given")
        params = _params(sampling_params, kw)
        params = list(params) if isinstance(params, (list, tuple)) else [params] * len(plist)
        if len(params) != len(plist):
            raise ValueError(f"sampling_params: {len(params)} given for {len(plist)} prompts")
        reqs = self._submit([self._make_request(p, sp) for p, sp in zip(plist, params)])  # validate all, then enqueue
        fut = reqs[0].future if single else _gather_futures([r.future for r in reqs])
        fut.request_ids = [r.id for r in reqs]
        return fut

    def stream(self, prompt, sampling_params=None, **kw):
        """Yields StreamDelta(token_id, text, output) per generated token; text is the new complete UTF-8
        text (a stop token adds none), and output is the RequestOutput on the last delta (None before)."""
        r = self._make_request(prompt, _params(sampling_params, kw))
        r.stream, dec, text, shown = queue.Queue(), codecs.getincrementaldecoder("utf-8")("replace"), "", ""
        self._submit([r])
        try:
            while True:
                item = r.stream.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, RequestOutput):
                    yield StreamDelta(None, item.text[len(shown):], item)
                    return
                text += "" if item in self._stops(r.params) else dec.decode(self.tokenizer.decode_bytes([item]))
                now = _cut(text, r.params.stop or [], hold=True)  # no stop string, nor the start of one
                yield StreamDelta(item, now[len(shown):], None, len(now) < len(text))
                shown = now
        finally:  # closed early (a client gone): free the slot now, not at max_tokens
            if not r.future.done():
                self.abort(r.id)

    def chat(self, messages, sampling_params=None, reasoning_effort="medium", tools=None, **kw):
        """messages: one OpenAI-style conversation (list of dicts) or a list of them, rendered in harmony.
        Returns a Future of one ChatOutput (or a list): reasoning, text and tool_calls parsed from the output."""
        single = not isinstance(messages, (list, tuple)) or not messages or not isinstance(messages[0], (list, tuple))
        prompts = [harmony.render_ids(self.tokenizer, c, reasoning_effort, tools) for c in
                   ([messages] if single else messages)]
        inner = self.generate(prompts, sampling_params, **kw)
        fut = Future()
        fut.request_ids = inner.request_ids

        def done(f):  # fut cancelled by the caller: inner.cancel() below dropped what was still queued
            if not fut.set_running_or_notify_cancel() or f.exception() is not None:  # running: the parse can't race
                return fut.cancelled() or fut.set_exception(f.exception())
            outs = [self._parse_chat(o) for o in f.result()]
            fut.set_result(outs[0] if single else outs)

        inner.add_done_callback(done)
        fut.add_done_callback(lambda f: f.cancelled() and inner.cancel())
        return fut

    def chat_stream(self, messages, sampling_params=None, reasoning_effort="medium", tools=None, **kw):
        """Yields harmony.Delta(kind, text, name) as tokens arrive (kind: reasoning, text, tool_call_name,
        tool_call_args), then the ChatOutput. As in stream(), deltas wait while the text may begin a stop string."""
        parser, held, sent, params = harmony.HarmonyParser(self.tokenizer), [], Counter(), _params(sampling_params, kw)
        for d in self.stream(harmony.render_ids(self.tokenizer, messages, reasoning_effort, tools), params):
            held += parser.feed(d.token_id) if d.output is None else []  # the last delta brings no token
            if d.held or d.token_id in self._stops(params):  # the stop token's text: out leaves it out, so held
                continue
            out = d.output and self._parse_chat(d.output, parser)  # already fed: not parsed twice
            for x in held:  # at the end each kind stops where out's field does: before a stop string
                sent["tool_call_args"] *= x.kind != "tool_call_name"  # characters yielded per kind; per call for args
                n = len(_field(out, x.kind)) - sent[x.kind] if out and x.kind != "tool_call_name" else len(x.text)
                sent[x.kind] += max(0, min(n, len(x.text)))
                yield from [x._replace(text=x.text[:n])] if n > 0 else []
            held = []
        for k in ("reasoning", "text"):  # what the parser adds only at the end: a cut-off header, a split character
            yield from [harmony.Delta(k, getattr(out, k)[sent[k]:])] if getattr(out, k)[sent[k]:] else []
        yield out

    def _parse_chat(self, out: RequestOutput, parser=None):
        if parser is None:
            parser = harmony.HarmonyParser(self.tokenizer)
            for t in out.token_ids:
                parser.feed(t)
        p = parser.result(cut=len(self.tokenizer.decode(out.token_ids)) - len(out.text))  # > 0: a stop string's cut
        reason = out.finish_reason if out.finish_reason in ("abort", "length") or p.finish == "length" else p.finish
        return ChatOutput(out.request_id, p.reasoning, p.text, p.tool_calls, reason, out)

    def abort(self, request_id):
        """Ends a request now (finish reason 'abort'); its slot and pages are freed before the next step."""
        if type(request_id) is not int:  # abort(2.7) ended request 2; abort("x") raised in the loop
            raise ValueError(f"request_id: must be an int from future.request_ids, got {request_id!r}")
        self.inbox.put(request_id)

    def stop(self):
        """Cancels what is in flight (finish reason 'abort'), resolves every future, joins the thread."""
        with self.lock:
            self.stopping = True
            self.inbox.put(None)
        self.thread.join()

    def _submit(self, reqs):  # under the lock stop() takes: each request is refused or seen by the loop's last drain
        with self.lock:
            if self.stopping:
                raise RuntimeError("engine is stopped")
            for r in reqs:
                self.inbox.put(r)
        return reqs

    def _make_request(self, prompt, params):
        if not isinstance(prompt, (str, list, tuple)):  # bytes, arrays, None: not silently token ids or a TypeError
            raise ValueError(f"prompt: must be a string or a list of token ids, got {type(prompt).__name__}")
        if not isinstance(params, SamplingParams):  # not an AttributeError on its first field
            raise ValueError(f"sampling_params: must be SamplingParams or a list of them, got {type(params).__name__}")
        params = replace(params)  # checked again, and the caller's later edits can't outgrow r's pages mid-run
        ids = self.tokenizer.encode(prompt, allow_special=True) if isinstance(prompt, str) else list(prompt)
        if not ids:
            raise ValueError("prompt: empty")
        if any(type(i) is not int or not 0 <= i < self.cfg.vocab_size for i in ids):  # True is no token id
            raise ValueError(f"prompt: token ids must be ints in the vocabulary [0, {self.cfg.vocab_size})")
        if (n := len(ids) + params.max_tokens) > self.max_model_len:
            raise ValueError(f"max_tokens: prompt + max_tokens = {n} > context length {self.max_model_len}")
        if self._pages_for(n) * self.page > self.kv_tokens:
            raise ValueError("max_tokens: prompt + max_tokens needs more KV pages than the whole cache holds")
        seed = params.seed if params.seed is not None else self.rng.getrandbits(31)  # LLM(seed=...): reproducible
        return Request(next(self.ids), ids, params, Future(), seed)

    # ------------------------------------------------------------------ memory
    def _pages_for(self, tokens):
        return -(-tokens // self.page)

    def _allocate_cache(self, num_pages, util):
        """Rings: [Ls, (S + 1) * 128, NKV, D] (slot S: graph padding). Pages fill what `util` of GPU memory leaves after
        weights, rings, 128 KiB a prefill token (>= 8,192: 0.69 GiB peak; graphs 0.2 at 8 slots), 4 MiB a slot."""
        cfg, dev = self.cfg, self.device
        torch.cuda.empty_cache()  # before the rings: packing's freed blocks, else the rings pin ~2 GiB of them (s44)
        n_slide, nkv, D = sum(cfg.sliding), cfg.num_key_value_heads, cfg.head_dim
        n_full, row = cfg.num_hidden_layers - n_slide, nkv * D  # row: elements per cache row
        cache = lambda n, rows: torch.zeros(n, rows, nkv, D, device=dev, dtype=self.dtype)  # [Ls, rows, NKV, D]
        k_ring, v_ring = (cache(n_slide, (self.max_slots + 1) * RING) for _ in "kv")
        if num_pages is None and dev.type == "cuda":
            free, total = torch.cuda.mem_get_info(dev)
            reserve = max(self.prefill_chunk, 8192) * (128 << 10) + self.max_slots * (4 << 20)  # small chunks: s46
            num_pages = int(free - (1 - util) * total - reserve) // (2 * n_full * self.page * row * self.dtype.itemsize)
        elif num_pages is None:
            num_pages = self._pages_for(65536) + 1  # CPU: 64k tokens
        if num_pages < 2:
            raise RuntimeError(f"no room for the KV cache ({num_pages} pages); lower max_slots or free memory")
        self.kv_tokens = (num_pages - 1) * self.page  # page 0 is scratch for graph padding
        print(f"KV cache: {self.kv_tokens:,} tokens in {num_pages - 1} pages; rings for {self.max_slots} slots")
        width = self._pages_for(self.max_model_len)
        self.tables = torch.zeros(self.max_slots + 1, width, device=dev, dtype=torch.int32)  # [S + 1, W]
        return KVCache(*(cache(n_full, num_pages * self.page) for _ in "kv"), k_ring, v_ring, self.page)

    # ------------------------------------------------------------------ the loop
    def _loop(self):
        if self.device.type == "cuda":  # a new thread starts on cuda:0
            torch.cuda.set_device(self.device)
        while not self.stopping:
            self._take_inbox(block=not (self.running or self.waiting))
            if self.stopping:
                break
            try:
                self.step()
            except Exception as e:  # fail the running requests (their cache state is unknown), serve the queue on
                self._fail(list(self.running), e)
        self._take_inbox(block=False)
        for r in list(self.running) + list(self.waiting):
            self._finish(r, "abort")

    def _take_inbox(self, block):
        while True:
            try:
                r = self.inbox.get(block=block)
            except queue.Empty:
                return
            block = False
            if r is None:
                self.stopping = True
            elif isinstance(r, int):  # abort
                for req in [q for q in list(self.running) + list(self.waiting) if q.id == r]:
                    self._finish(req, "abort")
            elif r.future.set_running_or_notify_cancel():  # cancelled while queued: dropped. Once taken, a
                self.waiting.append(r)  # future is running: cancel() says False, and abort() ends it

    def _fail(self, reqs, err):
        self._pending = None
        for r in reqs:
            self._resolve(r, err)
        if self.device.type == "cuda":
            try:
                torch.cuda.synchronize(self.device)
            except Exception as fatal:  # the context is gone: nothing more can run
                for r in list(self.running) + list(self.waiting):
                    self._resolve(r, RuntimeError(f"engine cannot continue after: {fatal!r}"))
                with self.lock:
                    self.stopping, self.error = True, fatal

    def _resolve(self, r, item):  # a RequestOutput or an exception, to the request's future and its stream
        self._release(r)
        if not r.future.done():
            r.future.set_exception(item) if isinstance(item, BaseException) else r.future.set_result(item)
        if r.stream is not None:
            r.stream.put(item)

    def step(self):
        """One forward pass: a prefill chunk of the admitted prompts not yet cached, or one decode token for
        every sequence past its prompt. While both wait they take turns, so streams go on through a long prompt."""
        self._admit()
        pending = [r for r in self.running if r.cached < len(r.prompt)]
        ready = [r for r in self.running if r.cached >= len(r.prompt)]
        self._prefilled = bool(pending) and not (ready and self._prefilled)  # True: this step is a prefill chunk
        if self._prefilled:
            self._prefill(pending)
        elif ready:
            self._decode(ready)

    def _admit(self):
        """FIFO: slots and the pages for prompt + max_tokens are reserved at admission, so a running
        request never waits for memory."""
        while self.waiting and self.free_slots:
            r = self.waiting[0]
            need = self._pages_for(len(r.prompt) + r.params.max_tokens)
            if len(self.free_pages) < need:
                return
            self.waiting.pop(0)
            r.slot = self.free_slots.popleft()
            r.pages = [self.free_pages.popleft() for _ in range(need)]
            self.running.append(r)  # before the copy: a CUDA error there fails r with the step
            self.tables[r.slot, :need] = torch.tensor(r.pages, dtype=torch.int32)
            r.t_admit = time.perf_counter()

    def _release(self, r):
        self.running, self.waiting = ([q for q in Q if q is not r] for Q in (self.running, self.waiting))
        if r.slot >= 0:
            self.free_slots.append(r.slot)
            self.free_pages.extend(r.pages)
            r.slot, r.pages = -1, []

    def _finish(self, r, reason):
        now = time.perf_counter()
        m = dict(queue_time=r.t_admit - r.t_arrive if r.t_admit else now - r.t_arrive,
                 ttft=r.t_first - r.t_arrive if r.t_first else None, decode_time=now - r.t_first if r.t_first else None)
        text = r.text if r.text is not None else self.tokenizer.decode(r.out)
        self._resolve(r, RequestOutput(r.id, r.prompt, list(r.out), text, reason, m, r.logprobs, r.prompt_logprobs))

    def _stops(self, params):  # a request's own stop token ids, else the checkpoint's unless ignore_eos (as vLLM)
        return params.stop_token_ids or ([] if params.ignore_eos else self.stop_ids)

    def _append(self, r, token):
        r.out.append(token)
        if r.stream is not None:
            r.stream.put(token)
        if token in self._stops(r.params):
            r.text = self.tokenizer.decode(r.out[:-1])  # token_ids end in the stop token, the text does not (vLLM)
            self._finish(r, "stop")
        elif r.params.stop and len(cut := _cut(text := self.tokenizer.decode(r.out), r.params.stop)) < len(text):
            r.text = cut  # the text ends before the stop string
            self._finish(r, "stop")
        elif len(r.out) >= r.params.max_tokens:
            self._finish(r, "length")

    # ------------------------------------------------------------------ prefill and decode
    def _prefill(self, reqs):
        """Packs up to prefill_chunk prompt tokens of several sequences into one varlen step (512 when a
        request scores its prompt: its logits are [rows, 201,088] fp32, 0.38 GiB, inside the 1 GiB reserve)."""
        scoring = any(r.params.prompt_logprobs is not None for r in reqs)
        budget = min(self.prefill_chunk, 512) if scoring else self.prefill_chunk
        left = [len(r.prompt) - r.cached for r in reqs]  # in admission order until the budget is spent
        chunk = [(r, min(n, budget - (end - n))) for r, n, end in zip(reqs, left, itertools.accumulate(left))
                 if end - n < budget]  # end - n: the tokens of the requests before r
        inp, scored, done = self._prefill_inputs(chunk)
        logits = self.model.forward(inp, self.kv)  # [R, V]
        self._flush()  # the decode step before this chunk: its tokens go out while the chunk runs
        for r, row0, n in scored:  # each position's log-probability of the prompt token after it
            nxt = r.prompt[r.cached + 1:r.cached + n + 1]
            r.prompt_logprobs = (r.prompt_logprobs or [None]) + _logprobs(logits[row0:row0 + len(nxt)], nxt,
                                                                          r.params.prompt_logprobs)
        rows = logits[[row for _, row in done]]  # [len(done), V]
        tokens = self._sample(rows, [r for r, _ in done]).tolist() if done else []
        for r, n in chunk:
            r.cached += n
        self._emit([r for r, _ in done], tokens, rows)

    def _prefill_inputs(self, chunk):
        ids, pos, cu, full_rows, ring_rows, logit_rows, scored, done = [], [], [0], [], [], [], [], []
        for r, n in chunk:
            p = list(range(r.cached, r.cached + n))
            ids += r.prompt[r.cached:r.cached + n]
            pos += p
            full_rows += [r.pages[i // self.page] * self.page + i % self.page for i in p]
            # only the chunk's last 128 tokens land in the ring; earlier ones would be overwritten anyway
            ring_rows += [r.slot * RING + i % RING if i >= p[-1] + 1 - RING else -1 for i in p]
            cu.append(cu[-1] + n)
            if r.params.prompt_logprobs is not None:
                scored.append((r, len(logit_rows), n))
                logit_rows += list(range(cu[-2], cu[-1]))
            if r.cached + n == len(r.prompt):
                if r.params.prompt_logprobs is None:
                    logit_rows.append(cu[-1] - 1)
                done.append((r, len(logit_rows) - 1))
        t = lambda x, dt=torch.int32: torch.tensor(x, dtype=dt, device=self.device)
        slots = t([r.slot for r, _ in chunk])
        inp = StepInputs(t(ids, torch.int64), t(pos), t(cu), t([r.cached for r, _ in chunk]), self.tables[slots.long()],
                         slots[:, None].expand(len(chunk), self.tables.shape[1]), t(full_rows), t(ring_rows),
                         t(logit_rows, torch.int64), max(n for _, n in chunk))
        return inp, scored, done

    def _emit(self, reqs, tokens, logits):
        """Hands each request its new token, with its log-probabilities when asked for."""
        now = time.perf_counter()
        for i, (r, tok) in enumerate(zip(reqs, tokens)):
            if r.slot < 0:  # finished or aborted while its step ran
                continue
            r.t_first = r.t_first or now
            if r.params.logprobs is not None:
                r.logprobs = (r.logprobs or []) + _logprobs(logits[i:i + 1], [tok], r.params.logprobs)
            self._append(r, tok)

    def _sample(self, logits, reqs):
        """Eager sampling for the first token after a prompt (decode samples inside its graph)."""
        f = lambda vals, dt=torch.float32: torch.tensor(vals, dtype=dt, device=self.device)
        temp = f([r.params.temperature for r in reqs])
        floor = None if all(r.params.temperature == 0 for r in reqs) else ops.sampling_floor(
            logits, temp, f([r.params.top_k for r in reqs], torch.int32), f([r.params.top_p for r in reqs]),
            f([r.params.min_p for r in reqs]))
        return ops.sample(logits, temp, f([r.seed for r in reqs], torch.int64), f([len(r.out) for r in reqs],
                          torch.int64), floor)

    def _decode(self, reqs):
        """One decode step for reqs. Its tokens are read while the next step runs: the host's read, stop checks
        and streaming overlap the GPU, except after a step that ends a request by length or wants logits."""
        if self._pending is not None and [r.id for r in self._pending[0]] != [r.id for r in reqs]:
            self._flush()  # the batch changes: its new members need the host's view of every sequence
            reqs = [r for r in reqs if r.slot >= 0]
            if not reqs:
                return
        B = len(reqs)
        Bp = next((b for b in sorted(self.buckets) if b >= B), B)  # padded to a captured bucket
        sampling = any(r.params.temperature > 0 for r in reqs)
        graph = self.graphs.get((Bp, sampling))
        if graph is None and self.use_graphs:  # sampling graphs are captured on first use
            graph = self.graphs[(Bp, sampling)] = self._capture(Bp, sampling)
        key = (tuple(r.id for r in reqs), Bp)
        if key != self._last_batch:  # the graph advances ids, positions and steps itself otherwise
            self._upload(reqs, Bp)
            self._last_batch = key
        if graph is not None:
            graph.replay()
            nxt, logits = self.static["ids"], self.static["logits"][:Bp]
        else:
            nxt, logits = self._decode_body(Bp, sampling)
        (host, done), self._host = self._host[0], self._host[::-1]  # two pinned buffers: one filling, one read
        host[:B].copy_(nxt[:B], non_blocking=True)
        if done is not None:
            done.record()
        self._flush()  # the previous step's tokens
        self._pending = (reqs, host[:B], done, logits)
        if any(len(r.out) + 1 >= r.params.max_tokens or r.params.logprobs is not None for r in reqs):
            self._flush()  # no step past a length stop (its pages end there); logprobs read this step's logits

    def _flush(self):
        """Emits the pending decode step. A request that ended meanwhile (stop token, abort) loses the extra
        token; its extra step wrote only positions its pages and ring already hold."""
        if self._pending is None:
            return
        (reqs, host, done, logits), self._pending = self._pending, None
        if done is not None:
            done.synchronize()
        for r in reqs:
            r.cached += 1  # the step's input token is in the cache now
        self._emit(reqs, host.tolist(), logits)

    def _upload(self, reqs, Bp):
        pad, S, g = Bp - len(reqs), self.max_slots, self.static
        cols = dict(ids=[r.out[-1] for r in reqs] + [0] * pad, pos=[r.cached for r in reqs] + [0] * pad,
                    slots=[r.slot for r in reqs] + [S] * pad, temp=[r.params.temperature for r in reqs] + [0] * pad,
                    top_k=[r.params.top_k for r in reqs] + [0] * pad, top_p=[r.params.top_p for r in reqs] + [1] * pad,
                    min_p=[r.params.min_p for r in reqs] + [0] * pad, seed=[r.seed for r in reqs] + [0] * pad,
                    step=[len(r.out) for r in reqs] + [0] * pad)
        for name, vals in cols.items():
            g[name][:Bp] = torch.tensor(vals, dtype=g[name].dtype)
        g["table"][:Bp] = self.tables[g["slots"][:Bp].long()]  # a running sequence's pages never change

    def _decode_body(self, B, sampling):
        """Decode step on the static buffers: graph-capturable, no host sync. Samples, then writes the next
        ids, positions and steps in place, so an unchanged batch replays again without host input."""
        g, S = self.static, self.max_slots
        ids, pos, slots, temp = g["ids"][:B], g["pos"][:B], g["slots"][:B], g["temp"][:B]
        table = g["table"][:B]  # [B, W]; RoPE finds the new tokens' cache rows through the tables: no row inputs
        inp = StepInputs(ids, pos, g["ar"][:B + 1], pos, table, slots[:, None].expand(*table.shape), None, None,
                         slice(None), 1, splits=self._splits(B))  # every row's logits
        logits = self.model.forward(inp, self.kv, out=g["logits"][:B])  # [B, V]
        if not sampling and B < 64:  # torch's argmax splits a row over programs, ours reads it in one (same ties):
            torch.argmax(logits, dim=1, out=ids)  # H200 us: 12.7 -> 8.4 at b1, 21.9 -> 14.1 at b16, 23.2 -> 20.7 at b48
        else:  # the host reads the next tokens from ids either way; greedy graphs never read the steps
            knobs = [g[k][:B] for k in ("top_k", "top_p", "min_p")]
            floor = ops.sampling_floor(logits, temp, *knobs) if sampling else None
            ids.copy_(ops.sample(logits, temp, g["seed"][:B], g["step"][:B], floor))  # [B]
            g["step"][:B] += 1  # the noise's key
        pos += slots < S  # padding rows stay at position 0
        return ids, logits

    def _splits(self, B):
        """Full-attention decode's KV splits: enough programs for 132 SMs at small batch (CPU interpreter: 1)."""
        return 1 if self.device.type == "cpu" else max(1, min(16, 64 // B))

    def _static_buffers(self):
        S, dev = self.max_slots, self.device
        z = lambda dt, fill=0: torch.full((S,), fill, dtype=dt, device=dev)
        self.static = dict(ids=z(torch.int64), pos=z(torch.int32), slots=z(torch.int32, S),
                           temp=z(torch.float32), top_k=z(torch.int32), top_p=z(torch.float32, 1.0),
                           min_p=z(torch.float32), seed=z(torch.int64), step=z(torch.int64),
                           ar=torch.arange(S + 1, dtype=torch.int32, device=dev),  # decode's cu_seqlens
                           table=torch.zeros_like(self.tables[:S]),  # [S, W]; below, every graph's logits [S, V]
                           logits=torch.empty(S, self.cfg.vocab_size, device=dev, dtype=torch.float32))
        self.buckets = sorted({b for b in [1, 2, 4, 8, 16, 32, 48] + list(range(64, S + 1, 32)) if b <= S} | {S})
        self._last_batch, self._pending, self._prefilled = None, None, False
        cuda = dev.type == "cuda"  # each buffer with the event its copy records, reused every other step
        self._host = [(torch.empty(S, dtype=torch.int64, pin_memory=cuda), torch.cuda.Event() if cuda else None)
                      for _ in range(2)]

    def _capture(self, B, sampling):
        """A decode graph over self.static's rows (slots, positions, tables in; logits out): any batch replays it."""
        self._warm_up(B, sampling)
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.graph_pool):
            self._decode_body(B, sampling)
        self.graph_pool = graph.pool()
        return graph

    def _warm_up(self, B, sampling):
        """Compiles and runs the decode body once outside the graph, on the scratch slot S at position 0:
        rows left by earlier batches would write K/V into slots and pages that live requests now own."""
        self.static["slots"][:B], self.static["pos"][:B], self.static["table"][:B] = self.max_slots, 0, 0  # page 0
        self._decode_body(B, sampling)
        self._last_batch = None  # the static rows no longer hold any batch
