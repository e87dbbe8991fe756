"""sounddevice helpers shared by the ears (microphone) and the voice (speaker).

Below every stage: imports nothing from the app. Safe to call from any thread.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def close_stream(stream, what: str) -> None:
    """Abort and close a sounddevice stream, logging (not raising) if it is already gone."""
    if stream is None:
        return
    try:
        stream.abort()
        stream.close()
    except Exception as exc:  # PortAudio errors when the device vanished
        log.debug("closing %s stream: %s", what, exc)
