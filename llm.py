"""The serving engine: request queue, slots, paged KV + 128-row rings, continuous batching, CUDA graphs
and one background thread that owns the GPU. The request path:

    LLM.generate -> (queue) -> LLM._loop -> LLM.step -> GptOss.forward -> kernels.*

Legend: B sequences in the step, T tokens in the step, W block-table width (pages per sequence),
S max_slots, P page rows, V vocab.
"""
import itertools
import os
import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm import tqdm

if not torch.cuda.is_available():  # no GPU: the kernels run on the CPU under Triton's interpreter
    os.environ.setdefault("TRITON_INTERPRET", "1")

from model.config import GptOssConfig
from model.gpt_oss import GptOss, KVCache, StepInputs
from model.tokenizer import Tokenizer
from model.weights import load_weights

RING = 128  # rows per slot in a sliding layer's ring: exactly the window


@dataclass
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 0.0  # 0 = greedy
    stop_token_ids: list = None  # default: <|return|> 200002 and <|call|> 200012
    ignore_eos: bool = False

    def __post_init__(self):
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.temperature != 0.0:
            raise ValueError("temperature: only greedy decoding (0.0) is implemented so far")


@dataclass
class RequestOutput:
    request_id: int
    prompt_token_ids: list
    token_ids: list
    text: str
    finish_reason: str  # "stop", "length" or "abort"
    metrics: dict = field(default_factory=dict)  # queue_time, ttft, decode_time (seconds)


@dataclass
class Request:
    id: int
    prompt: list
    params: SamplingParams
    future: Future
    out: list = field(default_factory=list)
    slot: int = -1
    pages: list = field(default_factory=list)
    cached: int = 0  # tokens of this sequence already in the KV cache
    t_arrive: float = field(default_factory=time.perf_counter)
    t_admit: float = 0.0
    t_first: float = 0.0


def _gather_futures(futures):
    """One future resolving to the list of results, in order, once all have resolved."""
    parent, left, lock = Future(), [len(futures)], threading.Lock()

    def done(_):
        with lock:
            left[0] -= 1
            if left[0] or parent.done():
                return
        errs = [f.exception() for f in futures if f.exception() is not None]
        parent.set_exception(errs[0]) if errs else parent.set_result([f.result() for f in futures])

    for f in futures:
        f.add_done_callback(done)
    return parent


class LLM:
    def __init__(self, model, *, dtype=None, load_format="auto", device=None, max_slots=256, max_model_len=None,
                 page_size=256, num_pages=None, gpu_memory_utilization=0.9, prefill_chunk=4096, cuda_graphs=None,
                 tokenizer=None, seed=0):
        """model: a checkpoint directory (config.json + safetensors; config.json alone with load_format="dummy").
        dtype: torch.bfloat16 (default on CUDA) or torch.float32 (verification; default on the CPU).
        tokenizer: a fallback o200k_base.tiktoken path when the directory has no tokenizer.json."""
        t0 = time.perf_counter()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dtype = dtype or (torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        if load_format not in ("auto", "dummy"):
            raise ValueError(f"load_format {load_format!r}: use 'auto' or 'dummy'")
        self.cfg = cfg = GptOssConfig.from_file(Path(model) / "config.json")
        self.max_model_len = min(max_model_len or cfg.max_position_embeddings, cfg.max_position_embeddings)
        self.tokenizer = Tokenizer.from_dir(model, tokenizer)
        bar = lambda it: tqdm(it, desc="loading weights", unit="layer", leave=False)
        glob, layers = load_weights(model, cfg, self.device, self.dtype, dummy=load_format == "dummy", seed=seed,
                                    progress=bar)
        self.model = GptOss(cfg, glob, layers, self.max_model_len, self.device)
        self.max_slots, self.page, self.prefill_chunk = max_slots, page_size, prefill_chunk
        self.kv = self._allocate_cache(num_pages, gpu_memory_utilization)
        self.free_slots = deque(range(max_slots))
        self.free_pages = deque(range(1, self.kv.k_full.shape[1] // page_size))
        self.stop_ids = [200002, 200012]  # <|return|>, <|call|>
        self.graphs = {}
        self._static_buffers()
        if cuda_graphs if cuda_graphs is not None else self.device.type == "cuda":
            self._capture_graphs()
        self.waiting, self.running, self.inbox = deque(), [], queue.Queue()
        self.ids = itertools.count()
        self.stopping, self.error = False, None
        self.thread = threading.Thread(target=self._loop, name="llm-loop", daemon=True)
        self.thread.start()
        self.startup_s = time.perf_counter() - t0

    # ------------------------------------------------------------------ public API
    def generate(self, prompts, sampling_params=None, **kw):
        """prompts: a string, a list of token ids, or a list of either. Returns a Future of one
        RequestOutput (single prompt) or of a list of them."""
        single = isinstance(prompts, str) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int))
        plist = [prompts] if single else list(prompts)
        params = sampling_params or SamplingParams(**kw)
        reqs = [self._make_request(p, params) for p in plist]  # validate all before enqueueing any
        for r in reqs:
            self.inbox.put(r)
        return reqs[0].future if single else _gather_futures([r.future for r in reqs])

    def stop(self):
        """Cancels what is in flight (finish reason 'abort'), resolves every future, joins the thread."""
        if not self.stopping:
            self.stopping = True
            self.inbox.put(None)
            self.thread.join()

    def _make_request(self, prompt, params):
        if self.stopping:
            raise RuntimeError("engine is stopped")
        ids = self.tokenizer.encode(prompt, allow_special=True) if isinstance(prompt, str) else list(prompt)
        if not ids:
            raise ValueError("prompt is empty")
        if any(not isinstance(i, int) or not 0 <= i < self.cfg.vocab_size for i in ids):
            raise ValueError(f"prompt token ids must be ints in [0, {self.cfg.vocab_size})")
        if len(ids) + params.max_tokens > self.max_model_len:
            raise ValueError(f"prompt ({len(ids)} tokens) + max_tokens ({params.max_tokens}) exceeds the "
                             f"context length {self.max_model_len}")
        if self._pages_for(len(ids) + params.max_tokens) * self.page > self.kv_tokens:
            raise ValueError("prompt + max_tokens needs more KV pages than the whole cache holds")
        return Request(next(self.ids), ids, params, Future())

    # ------------------------------------------------------------------ memory
    def _pages_for(self, tokens):
        return -(-tokens // self.page)

    def _allocate_cache(self, num_pages, util):
        """Rings: [Ls, (S + 1) * 128, NKV, D] (slot S is scratch for graph padding). Pages fill what
        `util` of GPU memory leaves after weights, rings and a 4 GiB activation/graph reserve."""
        cfg, dev = self.cfg, self.device
        n_slide = sum(cfg.sliding)
        n_full = cfg.num_hidden_layers - n_slide
        row = cfg.num_key_value_heads * cfg.head_dim  # elements per cache row
        ring = lambda: torch.zeros(n_slide, (self.max_slots + 1) * RING, cfg.num_key_value_heads, cfg.head_dim,
                                   device=dev, dtype=self.dtype)
        k_ring, v_ring = ring(), ring()
        if num_pages is None and dev.type == "cuda":
            free, total = torch.cuda.mem_get_info(dev)
            budget = free - (1 - util) * total - (4 << 30)
            num_pages = int(budget // (2 * n_full * self.page * row * k_ring.element_size()))
        elif num_pages is None:
            num_pages = self._pages_for(65536) + 1  # CPU: 64k tokens
        if num_pages < 2:
            raise RuntimeError(f"no room for the KV cache ({num_pages} pages); lower max_slots or free memory")
        full = lambda: torch.zeros(n_full, num_pages * self.page, cfg.num_key_value_heads, cfg.head_dim,
                                   device=dev, dtype=self.dtype)
        self.kv_tokens = (num_pages - 1) * self.page  # page 0 is scratch for graph padding
        print(f"KV cache: {self.kv_tokens:,} tokens in {num_pages - 1} pages of {self.page} "
              f"= {self.kv_tokens / 131072:.2f} sequences of 131k; rings for {self.max_slots} slots")
        width = self._pages_for(self.max_model_len)
        self.tables = torch.zeros(self.max_slots + 1, width, device=dev, dtype=torch.int32)  # [S + 1, W]
        return KVCache(full(), full(), k_ring, v_ring, self.page)

    # ------------------------------------------------------------------ the loop
    def _loop(self):
        while not self.stopping:
            self._take_inbox(block=not (self.running or self.waiting))
            if self.stopping:
                break
            try:
                self.step()
            except Exception as e:  # fail this step's requests, keep serving the rest
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
            else:
                self.waiting.append(r)

    def _fail(self, reqs, err):
        for r in reqs:
            self._release(r)
            r.future.set_exception(err)
        if self.device.type == "cuda":
            try:
                torch.cuda.synchronize(self.device)
            except Exception as fatal:  # the context is gone: nothing more can run
                for r in list(self.running) + list(self.waiting):
                    self._release(r)
                    r.future.set_exception(RuntimeError(f"engine cannot continue after: {fatal!r}"))
                self.stopping, self.error = True, fatal

    def step(self):
        """One forward pass: a prefill chunk if any admitted prompt is not yet cached, else one decode
        token for every running sequence."""
        self._admit()
        pending = [r for r in self.running if r.cached < len(r.prompt)]
        if pending:
            self._prefill(pending)
        elif self.running:
            self._decode(list(self.running))

    def _admit(self):
        """FIFO: slots and the pages for prompt + max_tokens are reserved at admission, so a running
        request never waits for memory."""
        while self.waiting and self.free_slots:
            r = self.waiting[0]
            need = self._pages_for(len(r.prompt) + r.params.max_tokens)
            if len(self.free_pages) < need:
                return
            self.waiting.popleft()
            r.slot = self.free_slots.popleft()
            r.pages = [self.free_pages.popleft() for _ in range(need)]
            self.tables[r.slot, :need] = torch.tensor(r.pages, dtype=torch.int32)
            r.t_admit = time.perf_counter()
            self.running.append(r)

    def _release(self, r):
        if r in self.running:
            self.running.remove(r)
        if r in self.waiting:
            self.waiting.remove(r)
        if r.slot >= 0:
            self.free_slots.append(r.slot)
            self.free_pages.extend(r.pages)
            r.slot, r.pages = -1, []

    def _finish(self, r, reason):
        self._release(r)
        now = time.perf_counter()
        m = dict(queue_time=r.t_admit - r.t_arrive if r.t_admit else now - r.t_arrive,
                 ttft=r.t_first - r.t_arrive if r.t_first else None,
                 decode_time=now - r.t_first if r.t_first else None)
        out = RequestOutput(r.id, r.prompt, list(r.out), self.tokenizer.decode(r.out), reason, m)
        if not r.future.done():
            r.future.set_result(out)

    def _append(self, r, token):
        r.out.append(token)
        if not r.params.ignore_eos and token in (r.params.stop_token_ids or self.stop_ids):
            self._finish(r, "stop")
        elif len(r.out) >= r.params.max_tokens:
            self._finish(r, "length")

    # ------------------------------------------------------------------ prefill and decode
    def _prefill(self, reqs):
        """Packs up to prefill_chunk prompt tokens of several sequences into one varlen step."""
        budget, chunk = self.prefill_chunk, []
        for r in reqs:
            n = min(len(r.prompt) - r.cached, budget)
            if n <= 0:
                break
            chunk.append((r, n))
            budget -= n
        ids, pos, cu, full_rows, ring_rows, logit_rows, done = [], [], [0], [], [], [], []
        for b, (r, n) in enumerate(chunk):
            p = list(range(r.cached, r.cached + n))
            ids += r.prompt[r.cached:r.cached + n]
            pos += p
            full_rows += [r.pages[i // self.page] * self.page + i % self.page for i in p]
            # only the chunk's last 128 tokens land in the ring; earlier ones would be overwritten anyway
            ring_rows += [r.slot * RING + i % RING if i >= p[-1] + 1 - RING else -1 for i in p]
            cu.append(cu[-1] + n)
            if r.cached + n == len(r.prompt):
                logit_rows.append(cu[-1] - 1)
                done.append(r)
        dev, i32 = self.device, torch.int32
        t = lambda x, dt=i32: torch.tensor(x, dtype=dt, device=dev)
        slots = t([r.slot for r, _ in chunk])
        inp = StepInputs(t(ids, torch.int64), t(pos), t(cu), t([r.cached for r, _ in chunk]), self.tables[slots.long()],
                         slots[:, None].expand(len(chunk), self.tables.shape[1]), t(full_rows), t(ring_rows),
                         t(logit_rows, torch.int64), max(n for _, n in chunk))
        logits = self.model.forward(inp, self.kv)  # [R, V]
        tokens = logits.argmax(-1).tolist() if done else []
        for r, n in chunk:
            r.cached += n
        now = time.perf_counter()
        for r, tok in zip(done, tokens):
            r.t_first = now
            self._append(r, tok)

    def _decode(self, reqs):
        B = len(reqs)
        Bp = next((b for b in sorted(self.graphs) if b >= B), B)  # padded to a captured bucket
        pad = Bp - B
        g = self.static
        g["ids"][:Bp] = torch.tensor([r.out[-1] for r in reqs] + [0] * pad, device=self.device)
        g["pos"][:Bp] = torch.tensor([r.cached for r in reqs] + [0] * pad, device=self.device, dtype=torch.int32)
        g["slots"][:Bp] = torch.tensor([r.slot for r in reqs] + [self.max_slots] * pad, device=self.device,
                                       dtype=torch.int32)
        if Bp in self.graphs:
            self.graphs[Bp].replay()
            tokens = g["next"][:B].tolist()
        else:
            tokens = self._decode_body(Bp)[:B].tolist()
        for r, tok in zip(reqs, tokens):
            r.cached += 1
            self._append(r, tok)

    def _decode_body(self, B):
        """Decode step on the static buffers: graph-capturable, no host sync. Writes the next ids
        and positions in place, so an unchanged batch could replay again without host input."""
        g, dev = self.static, self.device
        ids, pos, slots = g["ids"][:B], g["pos"][:B], g["slots"][:B]
        table = self.tables[slots.long()]  # [B, W]
        ar = torch.arange(B + 1, device=dev, dtype=torch.int32)
        full_rows = table.gather(1, (pos // self.page)[:, None].long())[:, 0] * self.page + pos % self.page
        inp = StepInputs(ids, pos, ar, pos, table, slots[:, None].expand(B, table.shape[1]), full_rows,
                         slots * RING + pos % RING, ar[:B].long(), 1, splits=self._splits(B))
        nxt = self.model.forward(inp, self.kv).argmax(-1)  # [B]
        g["next"][:B] = nxt
        return nxt

    def _splits(self, B):
        """KV splits for full-attention decode: enough programs to fill 132 SMs at small batch. The
        CPU interpreter pays per program, so it takes one split."""
        return 1 if self.device.type == "cpu" else max(1, min(16, 64 // B))

    def _static_buffers(self):
        S, dev = self.max_slots, self.device
        self.static = dict(ids=torch.zeros(S, dtype=torch.int64, device=dev),
                           pos=torch.zeros(S, dtype=torch.int32, device=dev),
                           slots=torch.full((S,), S, dtype=torch.int32, device=dev),
                           next=torch.zeros(S, dtype=torch.int64, device=dev))

    def _capture_graphs(self):
        """One decode graph per batch bucket; slots, positions and page tables are graph inputs, so any
        set of active slots replays without re-capture."""
        buckets = sorted({b for b in [1, 2, 4, 8, 16, 32, 48] + list(range(64, self.max_slots + 1, 32))
                          if b <= self.max_slots} | {self.max_slots})
        pool = None
        for B in tqdm(buckets[::-1], desc="capturing CUDA graphs", leave=False):  # largest first: one pool
            self._decode_body(B)  # compile and warm up outside the graph
            torch.cuda.synchronize(self.device)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):
                self._decode_body(B)
            pool = graph.pool()
            self.graphs[B] = graph
