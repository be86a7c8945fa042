"""Function calling with a real tool loop: python cookbook/function_calling.py [MODEL_DIR]"""
import json
import sys

from common import model_dir, tiktoken_file
from llm import LLM

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def get_weather(city):
    return {"city": city, "temperature_c": 21, "sky": "clear"}


path, tiny = model_dir(sys.argv)
engine = LLM(path, tokenizer=tiktoken_file())
messages = [{"role": "user", "content": "What's the weather in Paris?"}]
for _ in range(3):  # the model may call tools a few times before it answers
    out = engine.chat(messages, tools=TOOLS, max_tokens=4 if tiny else 128).result()
    if out.finish_reason != "tool_calls":
        break
    calls = [{"id": f"call_{i}", "type": "function", "function": c} for i, c in enumerate(out.tool_calls)]
    messages.append({"role": "assistant", "content": "", "reasoning": out.reasoning, "tool_calls": calls})
    for call in calls:
        try:
            result = get_weather(**json.loads(call["function"]["arguments"]))
        except (TypeError, ValueError) as e:  # bad arguments go back to the model as the tool's answer
            result = {"error": str(e)}
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
print(f"answer: {out.text!r} ({out.finish_reason}); {len(messages)} messages")
engine.stop()
