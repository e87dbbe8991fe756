"""What a server is, asked before the first request: the model it offers and its context size
(configured; llama-server's `/props`; Ollama's `/api/show`; else a default).

Blocking HTTP with the connection timeout; called by RemoteConversation at creation (the llm
thread, or a connection test's worker).
"""

from __future__ import annotations

import json
import logging
import re
import urllib.request
from typing import Any

import openai

from app.brain.records import BrainError, RemoteConfig

log = logging.getLogger(__name__)
DEFAULT_N_CTX = 4096  # when the server cannot say and none is configured


def first_model(client: openai.OpenAI, url: str) -> str:
    """The first model the server lists; BrainError when it lists none. The client's own
    errors pass through (the caller explains them)."""
    models = [m.id for m in client.models.list()]
    if not models:
        raise BrainError(f"The server at {url} offers no model; load one there or pass --llm-model.")
    return models[0]


def server_context(config: RemoteConfig, url: str, model: str) -> tuple[int, str]:
    """The server's context size and where it came from (configured, /props, /api/show)."""
    if config.n_ctx:
        return config.n_ctx, "configured"
    root = re.sub(r"/v1$", "", url)
    props = get_json(f"{root}/props", config.connect_timeout_s)
    if props:  # llama-server
        n = props.get("default_generation_settings", {}).get("n_ctx") or props.get("n_ctx")
        if n:
            return int(n), "llama-server /props"
    show = get_json(f"{root}/api/show", config.connect_timeout_s, {"model": model})
    if show:  # Ollama: its /v1 uses num_ctx, not the model's maximum context
        found = re.search(r"num_ctx\s+(\d+)", str(show.get("parameters", "")))
        return (int(found.group(1)), "ollama num_ctx") if found else (2048, "ollama default")
    return DEFAULT_N_CTX, "default"


def get_json(url: str, timeout_s: float, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """GET (or POST `body`) a JSON object from the server; {} when it has no such endpoint."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            found = json.loads(response.read())
    except (OSError, ValueError) as exc:  # urllib's HTTPError/URLError are OSErrors
        log.debug("%s: %s", url, exc)
        return {}
    return found if isinstance(found, dict) else {}
