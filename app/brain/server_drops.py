"""What a reply stream that ends before its first piece means, and what to send next.

llama-cpp-python's server answers a prompt over its context this way (no status, no size): the
context is then taken to be below that request's size, the oldest whole exchanges are left out
(`RemoteConversation._fit`, forced) and the request goes once more. The same server also ends a
stream when another request arrives, and a connection can fail under a request: a drop of a
request no larger than one the server already answered is first sent once more as it was, and
nothing is learned unless that drops too (a context learned from a passing failure would be too
small for the rest of the conversation; sizes are estimates, so a second drop is believed).

Sizes are the conversation's own counts (the server's usage where it reports it, else the
estimate) on both sides of the comparison. Runs on the conversation's owner thread.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol

from app.brain.records import BrainError, Exchange
from app.brain.server_replies import DroppedStream, connection_reset

log = logging.getLogger(__name__)
Refit = Literal["", "resent", "trimmed"]  # nothing to send; sent as it was; sent trimmed


class RemoteConversation(Protocol):
    """What a refit reads and changes of `remote.RemoteConversation` (a protocol: this module
    does not import the brain that imports it)."""

    kept: list[Exchange]
    held: int
    n_ctx: int
    ctx_source: str
    note: str
    shifts: int
    discarded: int
    dropped_turns: int

    @property
    def head_tokens(self) -> int: ...
    def estimate(self, text: str) -> int: ...
    def _fit(self, user_tokens: int, force: bool = False) -> None: ...
    def _open(self, text: str) -> Any: ...


def refit(conv: RemoteConversation, text: str, exc: Exception, resent: bool) -> tuple[Any | None, Refit]:
    """After the turn `text` failed with `exc` before its first piece: the response of the
    request sent instead, and how it was made. `resent`: this turn was already sent once more
    as it was (it is not again: the drop is taken for the context). (None, "") changes nothing:
    not a drop (a timeout is a slow server, not a small one), nothing older to leave out, or
    sending failed."""
    if not (isinstance(exc, DroppedStream) or connection_reset(exc)):
        return None, ""
    sent = conv.head_tokens + sum(ex.tokens for ex in conv.kept) + conv.estimate(text)
    if sent <= conv.held and not resent:
        log.info("stream dropped at ~%d prompt tokens, not over the %d answered: sent again", sent, conv.held)
        return send_again(conv, text), "resent"
    if not conv.kept:
        return None, ""
    before = snapshot(conv)
    conv.n_ctx, conv.ctx_source = min(conv.n_ctx, sent), "learned from a dropped reply"
    log.info("stream dropped before its first piece at ~%d prompt tokens: context taken below it", sent)
    conv._fit(conv.estimate(text), force=True)
    response = send_again(conv, text)
    if response is None:
        restore(conv, before)
        return None, ""
    return response, "trimmed"


def send_again(conv: RemoteConversation, text: str) -> Any | None:
    """The turn's request once more (twice when the server closed the kept-alive connection
    under it); None when it fails."""
    for attempt in range(2):
        try:
            return conv._open(text)
        except BrainError as exc:
            if not attempt and connection_reset(exc.__cause__):
                continue
            log.info("sending again failed too (%s): the conversation is left as it was", exc)
    return None


def snapshot(conv: RemoteConversation) -> tuple[Any, ...]:
    """What a refit changes, to put back when its guess was wrong."""
    counters = (conv.shifts, conv.discarded, conv.dropped_turns)
    return list(conv.kept), conv.n_ctx, conv.ctx_source, counters, conv.note


def restore(conv: RemoteConversation, before: tuple[Any, ...]) -> None:
    kept, conv.n_ctx, conv.ctx_source, counters, conv.note = before
    conv.kept = list(kept)
    conv.shifts, conv.discarded, conv.dropped_turns = counters
