"""A server connection test for the front ends (Settings' server chooser, `doctor`): connect as
the app would and say what the server offers. Blocks for up to the timeouts below.
"""

from __future__ import annotations

from app.brain.records import RemoteConfig
from app.brain.remote import RemoteConversation


def describe_server(url: str, model: str = "") -> str:
    """Connect to a server as the app would and say what it offers ("model M, context N tokens
    (where that came from)"); raises BrainError. For connection tests (Settings, doctor)."""
    config = RemoteConfig(url, model, connect_timeout_s=3, stall_timeout_s=10)
    brain = RemoteConversation(config)
    brain.close()
    return f"model {brain.model}, context {brain.n_ctx} tokens ({brain.ctx_source})"
