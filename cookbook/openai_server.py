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
import contextlib
import itertools
import json
import re
import time
import uuid

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


REFUSED = (("n", 1), ("best_of", 1), ("logprobs", False), ("top_logprobs", 0), ("echo", False), ("logit_bias", {}),
           ("frequency_penalty", 0), ("presence_penalty", 0), ("response_format", {"type": "text"}), ("suffix", ""))
KNOWN = {"model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop",
         "stop_token_ids", "ignore_eos", "stream", "stream_options", "user", *(k for k, _ in REFUSED)}  # user: an id
CHAT, COMPLETION = {"messages", "tools", "tool_choice", "reasoning_effort"}, {"prompt"}  # what each endpoint reads


def sampling(body, max_tokens, fields):
    """OpenAI request fields (and vLLM's top_k, min_p, stop_token_ids, ignore_eos) -> SamplingParams (ValueError
    names a bad field). null means the default; max_tokens: the default output length; fields: the endpoint's own."""
    get = lambda k, default=None: default if body.get(k) is None else body[k]
    if unknown := sorted(body.keys() - KNOWN - fields):  # refused, not ignored: a 200 would not have applied them
        also = f" (nor {', '.join(unknown[1:])})" if unknown[1:] else ""  # the first leads: it is the param
        raise ValueError(f"{unknown[0]}: not supported by this server{also}")
    for k, ok in REFUSED:  # a bool only where the default is one: completions' logprobs 0 asks for logprobs
        if get(k, ok) != ok or isinstance(get(k, ok), bool) != isinstance(ok, bool):
            raise ValueError(f"{k}: not supported by this server (only {ok!r})")
    if not isinstance(get("stream", False), bool):  # "false" would stream
        raise ValueError(f"stream: must be true or false, got {body['stream']!r}")
    return SamplingParams(max_tokens=get("max_completion_tokens", get("max_tokens", max_tokens)),
                          temperature=get("temperature", 1.0), top_p=get("top_p", 1.0), top_k=get("top_k", 0),
                          min_p=get("min_p", 0.0), seed=get("seed"), stop=get("stop"),
                          stop_token_ids=get("stop_token_ids"), ignore_eos=get("ignore_eos", False))


def error(message, status=400, param=None, kind="invalid_request_error"):  # OpenAI's shape: clients show it
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": None}}, status)


def bad_request(e):  # the engine's ValueErrors start with the field they name ("top_p: must be ...")
    if isinstance(e, KeyError):
        return error(f"missing field {e}", param=e.args[0])
    return error(str(e), param=(m := re.match(r"(\w+): ", str(e))) and m.group(1))


def usage(out):
    n_in, n_out = len(out.prompt_token_ids), len(out.token_ids)
    return {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}


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


def chat_response(out, model, rid):
    msg = {"role": "assistant", "content": out.text or (None if out.tool_calls else ""),
           "reasoning_content": out.reasoning}
    if out.tool_calls:
        msg["tool_calls"] = tool_calls(out.tool_calls)
    return {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "usage": usage(out.output),
            "choices": [{"index": 0, "message": msg, "finish_reason": FINISH[out.finish_reason]}]}


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
            fut = await run_in_threadpool(engine.chat, messages_of(body), params, effort, tools)  # renders
            out = await result(fut, request)
        except (ValueError, KeyError, TypeError) as e:  # bad fields deep in messages, tools
            return bad_request(e)
        return chat_response(out, model_name, rid)

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
            outs = await result(await run_in_threadpool(engine.generate, body["prompt"], params), request)
        except (ValueError, KeyError, TypeError) as e:
            return bad_request(e)
        outs = outs if isinstance(outs, list) else [outs]  # a list of prompts: a choice each, in order
        total = {k: sum(usage(o)[k] for o in outs) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        choices = [{"index": i, "text": o.text, "finish_reason": FINISH[o.finish_reason]} for i, o in enumerate(outs)]
        return {**base, "usage": total, "choices": choices}

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
