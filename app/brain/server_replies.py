"""What OpenAI-compatible servers send back, read for `RemoteConversation`: the reply stream
(read on its own thread, its pieces and why it stopped), failures put in words (`BrainError`),
the context size a server names when a request is too long, and the prompt tokens it served
from its cache. No state of its own.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import openai

from app.brain.records import BrainError, RemoteConfig, TurnStats


class DroppedStream(BrainError):
    """The server ended a reply's stream without saying why (no finish reason)."""


@dataclass
class Reading:
    """What one turn's reply stream said so far: why it stopped, its usage, its cached tokens;
    `t0`: when the turn was sent (perf_counter), for the time to its first piece."""

    t0: float
    reason: str = ""
    usage: Any = None
    cached: int | None = None


def read_reply(
    response: Any,
    cancel: threading.Event | None,
    stats: TurnStats,
    pieces: list[str],
    read: Reading,
    url: str,
) -> Generator[str, None, None]:
    """Yield one response's reply pieces (also appended to `pieces`), noting in `read` why it
    stopped, its usage and cached tokens, and the first piece's time in `stats`. Stops at once
    when `cancel` is set (the stream is closed: the server stops generating). Raises what the
    stream raised, or `DroppedStream` when it ended without a reason."""
    chunks = StreamReader(response)  # a silent server must not hold up a barge-in
    try:
        for chunk in chunks.until(cancel):
            read.usage = chunk.usage or read.usage
            read.cached = cached_tokens(chunk, read.cached)
            choice = chunk.choices[0] if chunk.choices else None
            if choice is not None and choice.finish_reason:
                reason = choice.finish_reason
                read.reason = {"stop": "eog", "length": "max_tokens"}.get(reason, reason)
            piece = choice.delta.content if choice is not None and choice.delta else None
            if piece:
                if not stats.t_first_token_ms:
                    stats.t_first_token_ms = (time.perf_counter() - read.t0) * 1000
                pieces.append(piece)
                yield piece
        if cancel is not None and cancel.is_set() and read.reason != "eog":
            read.reason = "cancelled"
        elif not read.reason:  # the stream ended without saying why: the connection was dropped
            raise DroppedStream(f"The language model server at {url} stopped in the middle of the reply.")
    finally:
        chunks.stop()  # the reader closes the stream: the server stops generating


def explain(exc: Exception, url: str, model: str, config: RemoteConfig) -> BrainError:
    """A failure in words for people."""
    where = f"The language model server at {url}"
    if isinstance(exc, BrainError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return BrainError(f"{where} did not answer for {config.stall_timeout_s:.0f} s; it may be overloaded.")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        if cause is None or "Connect" in type(cause).__name__:
            why = cause or exc
            return BrainError(f"{where} cannot be reached ({why}). Is it running, and is the address right?")
        return BrainError(f"{where} closed the connection without an answer ({cause}); see its log.")
    if isinstance(exc, openai.APIStatusError):
        detail = error_text(exc)
        reasons = {
            400: f"rejected the request: {detail}",
            401: f"refused the API key; set {config.api_key_env}.",
            403: f"refused access: {detail}",
            404: f"has no model {model!r} or no OpenAI API at this URL: {detail}",
            429: "is busy (too many requests); try again in a moment.",
        }
        text = reasons.get(exc.status_code, f"failed (HTTP {exc.status_code}): {detail}")
        return BrainError(f"{where} {text}")
    return BrainError(f"{where} sent something that is not a chat stream ({type(exc).__name__}: {exc}).")


class StreamReader:
    """Reads a response stream on its own thread, so the owner can stop waiting the moment
    `cancel` is set even when the server sends nothing (a blocked socket read cannot be
    interrupted from outside). The reader closes the stream when it stops: a server that is
    generating notices at its next piece and stops."""

    _END = object()

    def __init__(self, response: Any) -> None:
        self._response = response
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stopped = threading.Event()
        threading.Thread(target=self._read, daemon=True, name="remote-reader").start()

    def _read(self) -> None:
        try:
            for chunk in self._response:
                self._queue.put(chunk)
                if self._stopped.is_set():
                    break
            self._queue.put(self._END)
        except Exception as exc:
            self._queue.put(exc)
        finally:
            self._response.close()

    def until(self, cancel: threading.Event | None) -> Iterator[Any]:
        """The chunks, until the stream ends or `cancel` is set (checked every 50 ms)."""
        while cancel is None or not cancel.is_set():
            try:
                item = self._queue.get(timeout=0.05)
            except queue.Empty:
                continue
            if item is self._END:
                return
            if isinstance(item, Exception):
                raise item
            yield item

    def stop(self) -> None:
        self._stopped.set()


def connection_reset(exc: BaseException | None) -> bool:
    """A connection that failed under the request (reset, closed), not a timeout."""
    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def smaller_context_notice(n_ctx: int) -> str:
    """The turn's notice when a server turned out to hold fewer tokens than assumed."""
    return (
        f"The language model server holds fewer tokens than assumed (under {n_ctx}): "
        "the oldest turns are left out from now on so the conversation goes on."
    )


def error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        return str(inner.get("message", inner) if isinstance(inner, dict) else inner)[:300]
    return str(exc.message)[:300]


def context_size_in(exc: openai.APIStatusError) -> int | None:
    """The context size a server names when a request is too long: llama-server's
    `exceed_context_size_error` carries `n_ctx`; others say it in words ("context window of N",
    vLLM's "maximum context length is N")."""
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    if isinstance(inner, dict) and isinstance(inner.get("n_ctx"), int):
        return int(inner["n_ctx"])
    found = re.search(r"(?:context window of|context length is|context size of)\s*(\d+)", error_text(exc))
    return int(found.group(1)) if found else None


def cached_tokens(chunk: Any, known: int | None) -> int | None:
    """Prompt tokens served from the server's cache, as far as this chunk tells."""
    extra = getattr(chunk, "model_extra", None) or {}
    timings = extra.get("timings")
    if isinstance(timings, dict) and "cache_n" in timings:  # llama-server
        return int(timings["cache_n"])
    details = getattr(chunk.usage, "prompt_tokens_details", None) if chunk.usage else None
    if details is not None and getattr(details, "cached_tokens", None) is not None:  # vLLM, OpenAI
        return int(details.cached_tokens)
    return known
