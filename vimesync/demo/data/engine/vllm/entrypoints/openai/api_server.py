"""An OpenAI-compatible HTTP front end (demo subset: the routes, not the server)."""

import json
import logging

from vllm.engine.llm_engine import LLMEngine
from vllm.sampling_params import SamplingParams

logger = logging.getLogger(__name__)

ROUTES: dict = {}


def route(path: str):
    def register(fn):
        ROUTES[path] = fn
        return fn

    return register


@route("/health")
def health(engine: LLMEngine, body: dict) -> dict:
    return {"status": "ok"}


@route("/v1/completions")
def completions(engine: LLMEngine, body: dict) -> dict:
    params = SamplingParams(
        temperature=body.get("temperature", 1.0),
        top_p=body.get("top_p", 1.0),
        max_tokens=body.get("max_tokens", 16),
    )
    engine.add_request(body["id"], body["prompt"], params)
    outputs = []
    while engine.has_unfinished_requests():
        outputs.extend(engine.step())
    return {"id": body["id"], "choices": outputs}


@route("/metrics")
def metrics(engine: LLMEngine, body: dict) -> dict:
    return engine.get_stats()


def handle(engine: LLMEngine, path: str, raw: bytes) -> bytes:
    """Dispatch one request body to its route and encode the answer."""
    if path not in ROUTES:
        return json.dumps({"error": f"no route {path}"}).encode()
    body = json.loads(raw or b"{}")
    logger.info("%s %s", path, body.get("id", "-"))
    return json.dumps(ROUTES[path](engine, body)).encode()
