"""The small interfaces the stages are built from: how a stage reports to the front ends, and
the items on the queues between threads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.loop.continuation import Ended
from app.loop.events import Event, State


class SetState(Protocol):
    def __call__(self, state: State, only_from: State | None = None) -> None: ...


@dataclass(frozen=True)
class Report:
    """How a stage tells the front ends (callable from any thread): `emit` an event;
    `set_state(state, only_from=None)`: change the assistant's state (only if it is still
    `only_from`, when given); `error(message, source)`: something failed."""

    emit: Callable[[Event], None]
    set_state: SetState
    error: Callable[[str, str], None]


@dataclass(frozen=True)
class Utterance:
    """Audio for the stt thread. `final`: the end of an utterance (or the talk key released);
    else a pause, transcribed early. `t_speech_end`: perf_counter when speech stopped;
    `end_sample`: where the words end on the segmenter's clock (-1: not known); `ended`
    (hands-free, final): the continuation record of the turn this utterance ends."""

    audio: np.ndarray
    t_speech_end: float
    end_sample: int
    final: bool
    ended: Ended | None = None


@dataclass(frozen=True)
class LanguageSample:
    """The start of an utterance still being spoken, to find its language in (Automatic)."""

    audio: np.ndarray


SttItem = Utterance | LanguageSample | None  # None: the stt thread ends
