"""An OpenAI-compatible HTTP server over the engine (FastAPI + uvicorn): /v1/chat/completions and
/v1/completions, streaming over SSE, tool calls in OpenAI's shape.

    python cookbook/openai_server.py [MODEL_DIR] [--host 127.0.0.1] [--port 8000] [--max-tokens 4096]
    # then: OpenAI(base_url="http://localhost:8000/v1", api_key="none").chat.completions.create(...)

--max-tokens is the default output length of a request that gives none. The engine reserves KV pages for
prompt + max_tokens when it admits a request, so the default is not vLLM's (what the context leaves): at 131k
tokens a request, few would run at once. A field this server does not know is refused (400), not ignored: vLLM's
repetition_penalty, min_tokens or guided_json would otherwise come back as a 200 that did not apply them.
"""
import argparse
import asyncio
import codecs
import contextlib
import itertools
import json
import re
import time
import uuid
from dataclasses import replace

import anyio
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from common import model_dir, tiktoken_file
from llm import LLM, SamplingParams
from model import harmony

MAX_TOKENS = 4096  # the default output length (--max-tokens): see above
FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "malformed": "stop", "abort": "stop"}


REFUSED = (("best_of", 1), ("logit_bias", {}), ("frequency_penalty", 0), ("presence_penalty", 0),
           ("response_format", {"type": "text"}), ("suffix", ""))
CHAT_REFUSED = (("logprobs", False), ("top_logprobs", 0))  # per-token logprobs: /v1/completions only (below)
KNOWN = {"model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop",
         "stop_token_ids", "ignore_eos", "stream", "stream_options", "user", "n", "logprobs",
         *(k for k, _ in REFUSED)}  # user: an id
CHAT = {"messages", "tools", "tool_choice", "reasoning_effort", "top_logprobs"}  # what each endpoint reads
COMPLETION = {"prompt", "echo"}
MAX_N = 64  # choices a prompt: each is a request of its own, with its own KV pages


def sampling(body, max_tokens, fields):
    """OpenAI request fields (and vLLM's top_k, min_p, stop_token_ids, ignore_eos) -> SamplingParams (ValueError
    names a bad field). null means the default; max_tokens: the default output length; fields: the endpoint's own."""
    get = lambda k, default=None: default if body.get(k) is None else body[k]
    if unknown := sorted(body.keys() - KNOWN - fields):  # refused, not ignored: a 200 would not have applied them
        also = f" (nor {', '.join(unknown[1:])})" if unknown[1:] else ""  # the first leads: it is the param
        raise ValueError(f"{unknown[0]}: not supported by this server{also}")
    for k, ok in REFUSED + (CHAT_REFUSED if fields is CHAT else ()):  # a bool only where the default is one
        if get(k, ok) != ok or isinstance(get(k, ok), bool) != isinstance(ok, bool):
            raise ValueError(f"{k}: not supported by this server (only {ok!r})" + (
                " on /v1/chat/completions; /v1/completions takes logprobs" if k in dict(CHAT_REFUSED) else ""))
    for k in ("stream", "echo"):  # "false" would stream
        if not isinstance(get(k, False), bool):
            raise ValueError(f"{k}: must be true or false, got {body[k]!r}")
    n, logprobs = get("n", 1), None if fields is CHAT else get("logprobs")
    if type(n) is not int or not 1 <= n <= MAX_N or n > 1 and get("stream", False):
        raise ValueError(f"n: must be an int in [1, {MAX_N}], and 1 in a stream, got {n!r}")
    if get("stream", False) and (logprobs is not None or get("echo", False)):
        raise ValueError(f"{'logprobs' if logprobs is not None else 'echo'}: not supported in a stream")
    length = 1 if scores_only(body) else get("max_completion_tokens", get("max_tokens", max_tokens))
    return SamplingParams(max_tokens=length,
                          temperature=get("temperature", 1.0), top_p=get("top_p", 1.0), top_k=get("top_k", 0),
                          min_p=get("min_p", 0.0), seed=get("seed"), stop=get("stop"),
                          stop_token_ids=get("stop_token_ids"), ignore_eos=get("ignore_eos", False),
                          logprobs=logprobs, prompt_logprobs=logprobs if get("echo", False) else None)


def scores_only(body):  # echo and max_tokens 0: the prompt and its logprobs, nothing generated (as OpenAI's, vLLM's)
    return body.get("echo") is True and type(body.get("max_tokens")) is int and body["max_tokens"] == 0


def fan_out(prompts, params, n):
    """n choices a prompt (a string, token ids or a conversation; or a list of strings or of token-id lists), in
    OpenAI's order, choice index = prompt x n + j: a request each. With a seed, choice j samples with seed + j, so the
    choices differ and the request stays reproducible."""
    if not isinstance(prompts, (str, list)):  # [5] would read as token ids
        raise ValueError(f"prompt: must be a string or a list of token ids, got {type(prompts).__name__}")
    plist = prompts if isinstance(prompts, list) and prompts and isinstance(prompts[0], (str, list)) else [prompts]
    M = 2**63 - 1  # seed + j wraps within SamplingParams' seeds, |seed| <= M
    seeds = [None if params.seed is None else (params.seed + j + M) % (2 * M + 1) - M for j in range(n)]
    return [p for p in plist for _ in range(n)], [replace(params, seed=seed) for _ in plist for seed in seeds]


def usage_of(outs, n):  # the prompt counted once for its n choices, as OpenAI's usage does
    n_in, n_out = sum(len(o.prompt_token_ids) for o in outs[::n]), sum(len(o.token_ids) for o in outs)
    return {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}


def token_text(tok, t):  # "bytes:\\xe6\\x97" where a token's bytes are no whole UTF-8 text: distinct tokens, keys
    b = tok.decode_bytes([t])
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{c:02x}" for c in b)


def text_offsets(tok, ids, start=0):  # where each token's text begins in the decoded text, in whole characters
    dec, pos, out = codecs.getincrementaldecoder("utf-8")("replace"), start, []
    for t in ids:
        out.append(pos)
        pos += len(dec.decode(tok.decode_bytes([t])))
    return out


def completion_logprobs(tok, out, echo):
    """OpenAI's legacy logprobs object for a completion choice: each token's text, its logprob and the top ones
    (with the chosen token, as vLLM's), and its character offset in the choice's text. With echo the prompt's
    tokens come first; the first has no logprob. The tokens include a stop token, which the text leaves out."""
    ids = (out.prompt_token_ids if echo else []) + out.token_ids
    per = ((out.prompt_logprobs or [None]) if echo else []) + (out.logprobs or [])
    per += [None] * (len(ids) - len(per))  # a prompt aborted while it was scored
    start = len(tok.decode(out.prompt_token_ids)) if echo else 0
    return {"tokens": [token_text(tok, t) for t in ids], "token_logprobs": [d and d[t] for t, d in zip(ids, per)],
            "top_logprobs": [d and {token_text(tok, k): v for k, v in d.items()} for d in per],
            "text_offset": (text_offsets(tok, out.prompt_token_ids) if echo else []) + text_offsets(
                tok, out.token_ids, start)}


def error(message, status=400, param=None, kind="invalid_request_error"):  # OpenAI's shape: clients show it
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": None}}, status)


def bad_request(e):  # the engine's ValueErrors start with the field they name ("top_p: must be ...")
    if isinstance(e, KeyError):
        return error(f"missing field {e}", param=e.args[0])
    return error(str(e), param=(m := re.match(r"(\w+): ", str(e))) and m.group(1))


def usage(out):
    return usage_of([out], 1)


def wants_usage(body):  # stream_options.include_usage: a last chunk with the usage and no choices
    if not isinstance(options := body.get("stream_options") or {}, dict):
        raise ValueError(f"stream_options: must be an object, got {options!r}")
    return bool(options.get("include_usage"))


def primed(gen):  # runs a stream to its first item now: a bad request is a 400, not a 200 with a broken stream
    return itertools.chain([next(gen)], gen)


def sse(chunks):
    try:
        for c in chunks:
            yield f"data: {json.dumps(c)}\n\n"
    except Exception as e:  # the engine failed mid-stream, after the 200: an error event, as OpenAI's streams send
        err = {"message": f"the engine failed: {e}", "type": "server_error", "param": None, "code": None}
        yield f"data: {json.dumps({'error': err})}\n\n"
    yield "data: [DONE]\n\n"


def tool_calls(calls):
    return [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": c} for c in calls]


def chat_choice(out, index):
    msg = {"role": "assistant", "content": out.text or (None if out.tool_calls else ""),
           "reasoning_content": out.reasoning}
    if out.tool_calls:
        msg["tool_calls"] = tool_calls(out.tool_calls)
    return {"index": index, "message": msg, "finish_reason": FINISH[out.finish_reason]}


def chat_response(outs, model, rid):  # outs: a ChatOutput per choice, of one conversation
    choices = [chat_choice(o, i) for i, o in enumerate(outs)]
    return {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "usage": usage_of([o.output for o in outs], len(outs)), "choices": choices}


def chat_chunks(items, model, rid, include_usage=False):
    """harmony deltas -> chat.completion.chunk objects: the role first, the finish reason last, then the usage
    when stream_options.include_usage asks for it. Tool calls go out whole at the end, as the ChatOutput has them:
    arguments that are not JSON are no call (the parser gives them as text), which their deltas can't show."""
    base = {"id": rid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    chunk = lambda delta, finish=None: {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    yield chunk({"role": "assistant", "content": ""})
    for item in items:
        if not hasattr(item, "kind"):  # the final ChatOutput
            yield from [chunk({"tool_calls": [{"index": i, **c}]}) for i, c in enumerate(tool_calls(item.tool_calls))]
            yield chunk({}, FINISH[item.finish_reason])
            yield from [{**base, "choices": [], "usage": usage(item.output)}] if include_usage else []
            return
        if item.kind in ("reasoning", "text"):
            yield chunk({"reasoning_content" if item.kind == "reasoning" else "content": item.text})


def completion_chunks(deltas, base, include_usage=False):
    for d in deltas:
        finish = d.output and FINISH[d.output.finish_reason]  # "abort" (engine stopped) reads "stop", as in chat
        yield {**base, "choices": [{"index": 0, "text": d.text, "finish_reason": finish}]}
    yield from [{**base, "choices": [], "usage": usage(d.output)}] if include_usage else []


def messages_of(body):  # one conversation: the engine's chat also takes a list of them, which this API does not
    if not isinstance(body["messages"], list) or not all(isinstance(m, dict) for m in body["messages"]):
        raise ValueError("messages: must be a list of message objects")
    return body["messages"]


def tools_for(body):  # tool_choice: "auto" (the default) or "none" (the tools are not shown to the model)
    choice = body.get("tool_choice") or "auto"
    if choice not in ("auto", "none"):
        raise ValueError(f"tool_choice: only 'auto' and 'none' are supported, got {choice!r}")
    return body.get("tools") if choice == "auto" else None


def build_app(engine, model_name="gpt-oss", max_tokens=MAX_TOKENS):
    @contextlib.asynccontextmanager
    async def lifespan(app):  # a stream's iterator holds a worker thread while it waits for tokens: 40 by default
        anyio.to_thread.current_default_thread_limiter().total_tokens = engine.max_slots + 40
        yield

    app, created = FastAPI(lifespan=lifespan), int(time.time())

    @app.exception_handler(RequestValidationError)
    def invalid_json(request, e):  # FastAPI's 422 for a body that is not a JSON object
        return error(f"the request body must be a JSON object: {e.errors()[0].get('msg')}")

    def check(body):  # an unknown model is a 404, as vLLM's
        if body.get("model") not in (None, model_name):
            return error(f"The model `{body['model']}` does not exist.", 404, "model", "NotFoundError")
        return None

    async def result(fut, request):  # a client gone ends its requests now, not at max_tokens (as vLLM's)
        waiting = asyncio.wrap_future(fut)
        while not (await asyncio.wait([waiting], timeout=1.0))[0]:
            if await request.is_disconnected():
                for i in fut.request_ids:
                    engine.abort(i)
        return await waiting

    def stream(gen, chunks, *args):  # started in a worker thread: up to its first item, a bad request is a 400
        return StreamingResponse(sse(chunks(primed(gen), *args)), media_type="text/event-stream")

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "created": created,
                                            "owned_by": "local"}]}

    @app.post("/v1/chat/completions")
    async def chat(body: dict, request: Request):
        rid, effort = f"chatcmpl-{uuid.uuid4().hex}", body.get("reasoning_effort") or "medium"
        try:
            params, tools = sampling(body, max_tokens, CHAT), tools_for(body)
            if (refused := check(body)) is not None:
                return refused
            if body.get("stream"):
                gen = engine.chat_stream(messages_of(body), params, effort, tools)
                return await run_in_threadpool(stream, gen, chat_chunks, model_name, rid, wants_usage(body))
            convs, plist = fan_out(messages_of(body), params, body.get("n") or 1)  # n copies of the conversation
            outs = await result(await run_in_threadpool(engine.chat, convs, plist, effort, tools), request)  # renders
        except (ValueError, KeyError, TypeError) as e:  # bad fields deep in messages, tools
            return bad_request(e)
        return chat_response(outs, model_name, rid)

    @app.post("/v1/completions")
    async def completions(body: dict, request: Request):
        rid, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
        base = {"id": rid, "object": "text_completion", "created": created, "model": model_name}
        try:
            params = sampling(body, max_tokens, COMPLETION)
            if (refused := check(body)) is not None:
                return refused
            if body.get("stream"):
                if not isinstance(body["prompt"], str) and body["prompt"] and not isinstance(body["prompt"][0], int):
                    raise ValueError("prompt: a stream takes one prompt (a string or a list of token ids)")
                gen = engine.stream(body["prompt"], params)
                return await run_in_threadpool(stream, gen, completion_chunks, base, wants_usage(body))
            n, echo = body.get("n") or 1, bool(body.get("echo"))  # n choices a prompt, prompt-major
            outs = await result(await run_in_threadpool(engine.generate, *fan_out(body["prompt"], params, n)), request)
        except (ValueError, KeyError, TypeError) as e:
            return bad_request(e)
        if scores_only(body):  # the one token generated is dropped
            outs = [replace(o, token_ids=[], text="", logprobs=[], finish_reason="length") for o in outs]
        text = lambda o: (engine.tokenizer.decode(o.prompt_token_ids) if echo else "") + o.text
        logprobs = lambda o: None if params.logprobs is None else completion_logprobs(engine.tokenizer, o, echo)
        choices = [{"index": i, "text": text(o), "logprobs": logprobs(o), "finish_reason": FINISH[o.finish_reason]}
                   for i, o in enumerate(outs)]
        return {**base, "usage": usage_of(outs, n), "choices": choices}

    return app


if __name__ == "__main__":
    import uvicorn
    ap = argparse.ArgumentParser(description="An OpenAI-compatible server over the engine.")
    ap.add_argument("model_dir", nargs="?", help="a checkpoint directory (default: ./gpt-oss-20b, else a tiny one)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS, help="a request's default output length")
    a = ap.parse_args()  # an unknown flag is an error, not a model path
    path, _ = model_dir([None] + ([a.model_dir] if a.model_dir else []))
    engine = LLM(path, tokenizer=tiktoken_file())
    uvicorn.run(build_app(engine, max_tokens=a.max_tokens), host=a.host, port=a.port)
    engine.stop()
