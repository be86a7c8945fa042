"""An OpenAI-compatible HTTP server over the engine (FastAPI + uvicorn): /v1/chat/completions and
/v1/completions, streaming over SSE, tool calls in OpenAI's shape.

    python cookbook/openai_server.py [MODEL_DIR] [--port 8000]
    # then: OpenAI(base_url="http://localhost:8000/v1", api_key="none").chat.completions.create(...)
"""
import json
import sys
import time
import uuid

from fastapi import FastAPI
from fastapi.responses import JSONResponse, StreamingResponse

from common import model_dir, tiktoken_file
from llm import LLM, SamplingParams
from model import harmony

FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "malformed": "stop", "abort": "stop"}


def sampling(body):
    """OpenAI request fields -> SamplingParams (ValueError names a bad field)."""
    stop = body.get("stop")
    return SamplingParams(max_tokens=body.get("max_completion_tokens") or body.get("max_tokens") or 256,
                          temperature=body.get("temperature", 1.0), top_p=body.get("top_p", 1.0),
                          seed=body.get("seed"), stop=[stop] if isinstance(stop, str) else stop)


def bad_request(e):  # OpenAI's error shape, so clients show the message
    return JSONResponse({"error": {"message": str(e), "type": "invalid_request_error"}}, status_code=400)


def sse(chunks):
    for c in chunks:
        yield f"data: {json.dumps(c)}\n\n"
    yield "data: [DONE]\n\n"


def tool_calls(calls):
    return [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function", "function": c} for c in calls]


def chat_response(out, model, rid):
    msg = {"role": "assistant", "content": out.text, "reasoning_content": out.reasoning}
    if out.tool_calls:
        msg["tool_calls"] = tool_calls(out.tool_calls)
    usage = {"prompt_tokens": len(out.output.prompt_token_ids), "completion_tokens": len(out.output.token_ids)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": model, "usage": usage,
            "choices": [{"index": 0, "message": msg, "finish_reason": FINISH[out.finish_reason]}]}


def chat_chunks(items, model, rid):
    """harmony deltas -> chat.completion.chunk objects."""
    base = {"id": rid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    calls = 0
    for item in items:
        if not hasattr(item, "kind"):  # the final ChatOutput
            yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": FINISH[item.finish_reason]}]}
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


def build_app(engine, model_name="gpt-oss"):
    app = FastAPI()

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "local"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        rid, effort = f"chatcmpl-{uuid.uuid4().hex}", body.get("reasoning_effort", "medium")
        try:
            params = sampling(body)
            if body.get("stream"):
                harmony.render(body["messages"], effort, body.get("tools"))  # bad messages: 400, not a broken stream
                items = engine.chat_stream(body["messages"], effort, body.get("tools"), params)
                return StreamingResponse(sse(chat_chunks(items, model_name, rid)), media_type="text/event-stream")
            out = engine.chat(body["messages"], effort, body.get("tools"), params).result()
        except (ValueError, KeyError) as e:
            return bad_request(e)
        return chat_response(out, model_name, rid)

    @app.post("/v1/completions")
    def completions(body: dict):
        rid, base = f"cmpl-{uuid.uuid4().hex}", {"object": "text_completion", "model": model_name}
        try:
            params = sampling(body)
            if body.get("stream"):
                deltas = engine.stream(body["prompt"], params)
                chunks = ({**base, "id": rid, "choices": [{"index": 0, "text": d.text, "finish_reason":
                                                           d.output and d.output.finish_reason}]} for d in deltas)
                return StreamingResponse(sse(chunks), media_type="text/event-stream")
            out = engine.generate(body["prompt"], params).result()
        except (ValueError, KeyError) as e:
            return bad_request(e)
        return {**base, "id": rid, "created": int(time.time()),
                "choices": [{"index": 0, "text": out.text, "finish_reason": out.finish_reason}]}

    return app


if __name__ == "__main__":
    import uvicorn
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 8000
    path, _ = model_dir([a for a in sys.argv if not a.startswith("--") and not a.isdigit()])
    engine = LLM(path, tokenizer=tiktoken_file())
    uvicorn.run(build_app(engine), host="127.0.0.1", port=port)
    engine.stop()
