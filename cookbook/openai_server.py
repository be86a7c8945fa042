"""An OpenAI-compatible HTTP server over the engine (FastAPI + uvicorn): /v1/chat/completions and
/v1/completions, streaming over SSE, tool calls in OpenAI's shape.

    python cookbook/openai_server.py [MODEL_DIR] [--port 8000]
    # then: OpenAI(base_url="http://localhost:8000/v1", api_key="none").chat.completions.create(...)
"""
import itertools
import json
import re
import sys
import time
import uuid

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from common import model_dir, tiktoken_file
from llm import LLM, SamplingParams
from model import harmony

FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "malformed": "stop", "abort": "stop"}


def sampling(body):
    """OpenAI request fields -> SamplingParams (ValueError names a bad field). null means the default."""
    get = lambda k, default=None: default if body.get(k) is None else body[k]
    for k, ok in (("n", 1), ("best_of", 1), ("logprobs", False), ("top_logprobs", 0), ("echo", False)):
        if get(k, ok) != ok:  # refused, not ignored: the caller would read a result it did not ask for
            raise ValueError(f"{k}: not supported by this server (only {ok!r})")
    return SamplingParams(max_tokens=get("max_completion_tokens", get("max_tokens", 256)),
                          temperature=get("temperature", 1.0), top_p=get("top_p", 1.0), seed=get("seed"),
                          stop=get("stop"))


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
    for c in chunks:
        yield f"data: {json.dumps(c)}\n\n"
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
    when stream_options.include_usage asks for it."""
    base = {"id": rid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    calls = 0
    for item in items:
        if not hasattr(item, "kind"):  # the final ChatOutput
            yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": FINISH[item.finish_reason]}]}
            yield from [{**base, "choices": [], "usage": usage(item.output)}] if include_usage else []
            return
        if item.kind == "tool_call_name":
            calls += 1
            delta = {"tool_calls": [{"index": calls - 1, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                                     "function": {"name": item.text, "arguments": ""}}]}
        elif item.kind == "tool_call_args":
            delta = {"tool_calls": [{"index": calls - 1, "function": {"arguments": item.text}}]}
        else:
            delta = {"reasoning_content" if item.kind == "reasoning" else "content": item.text}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def completion_chunks(deltas, base, include_usage=False):
    for d in deltas:
        yield {**base, "choices": [{"index": 0, "text": d.text, "finish_reason": d.output and d.output.finish_reason}]}
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


def build_app(engine, model_name="gpt-oss"):
    app = FastAPI()

    @app.exception_handler(RequestValidationError)
    def invalid_json(request, e):  # FastAPI's 422 for a body that is not a JSON object
        return error(f"the request body must be a JSON object: {e.errors()[0].get('msg')}")

    def check(body):  # an unknown model is a 404, as vLLM's
        if body.get("model") not in (None, model_name):
            return error(f"The model `{body['model']}` does not exist.", 404, "model", "NotFoundError")
        return None

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "local"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        rid, effort = f"chatcmpl-{uuid.uuid4().hex}", body.get("reasoning_effort") or "medium"
        try:
            params, tools = sampling(body), tools_for(body)
            if (refused := check(body)) is not None:
                return refused
            if body.get("stream"):
                items = primed(engine.chat_stream(messages_of(body), effort, tools, params))
                return StreamingResponse(sse(chat_chunks(items, model_name, rid, wants_usage(body))),
                                         media_type="text/event-stream")
            out = engine.chat(messages_of(body), effort, tools, params).result()
        except (ValueError, KeyError, TypeError) as e:  # bad fields deep in messages, tools
            return bad_request(e)
        return chat_response(out, model_name, rid)

    @app.post("/v1/completions")
    def completions(body: dict):
        rid, created = f"cmpl-{uuid.uuid4().hex}", int(time.time())
        base = {"id": rid, "object": "text_completion", "created": created, "model": model_name}
        try:
            params = sampling(body)
            if (refused := check(body)) is not None:
                return refused
            if body.get("stream"):
                if not isinstance(body["prompt"], str) and body["prompt"] and not isinstance(body["prompt"][0], int):
                    raise ValueError("prompt: a stream takes one prompt (a string or a list of token ids)")
                deltas = primed(engine.stream(body["prompt"], params))
                return StreamingResponse(sse(completion_chunks(deltas, base, wants_usage(body))),
                                         media_type="text/event-stream")
            outs = engine.generate(body["prompt"], params).result()
        except (ValueError, KeyError, TypeError) as e:
            return bad_request(e)
        outs = outs if isinstance(outs, list) else [outs]  # a list of prompts: a choice each, in order
        total = {k: sum(usage(o)[k] for o in outs) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        return {**base, "usage": total,
                "choices": [{"index": i, "text": o.text, "finish_reason": o.finish_reason} for i, o in enumerate(outs)]}

    return app


if __name__ == "__main__":
    import uvicorn
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 8000
    path, _ = model_dir([a for a in sys.argv if not a.startswith("--") and not a.isdigit()])
    engine = LLM(path, tokenizer=tiktoken_file())
    uvicorn.run(build_app(engine), host="127.0.0.1", port=port)
    engine.stop()
