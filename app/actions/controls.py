"""The controls a voice can work: opening an app or a page once the user says yes to the
question asked (launch.py), and the voice's own volume ("louder", "quieter", "set the volume to
60 percent").

Threads: the llm thread (`Actions.pick`/`do`); `volume(level)` is the assistant's (it sets the
Speaker's config, read at each sentence's synthesis).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from app.actions import calc, launch
from app.actions.intents import Refused, Request

CONTROLS = frozenset({"TalkOpen", "TalkConfirm", "TalkDeny", "TalkVolume"})
CONFIRM_S = 30.0  # a yes opens what was asked about this long ago at most
VOLUME_STEP = 0.2  # "louder", "quieter": a fifth of the whole range


class Controls:
    def __init__(self, volume: Callable[[float | None], float | None] | None = None) -> None:
        """`volume(level)`: set the voice's volume (0-1; None: leave it) and return it (None:
        there is no voice whose volume can change)."""
        self._volume = volume
        self._asked: tuple[launch.Target, float] | None = None  # asked about; opened on a yes

    def asked(self) -> bool:
        """A question is waiting for its yes or no (asked less than CONFIRM_S ago)."""
        return self._asked is not None and time.monotonic() - self._asked[1] < CONFIRM_S

    def forget_question(self) -> None:
        self._asked = None

    def handle(self, request: Request) -> tuple[dict[str, Any], bool]:
        """The answer's slots and whether anything changed; raises Refused when it cannot."""
        if request.intent == "TalkVolume":
            return self._volume_to(request)
        return self._open(request)

    def _open(self, request: Request) -> tuple[dict[str, Any], bool]:
        """An app or a page is opened only once the user says yes to the question."""
        if request.intent == "TalkOpen":
            target = launch.find(request.said.get("anything", ""))
            if target is None:
                raise Refused("not_found", request.intent)
            self._asked = (target, time.monotonic())
            return {"name": target.name}, False
        asked, self._asked = self._asked, None
        assert asked is not None  # _takes checked it
        if request.intent == "TalkDeny":
            return {"name": asked[0].name}, False
        opened = launch.start(asked[0])
        return {"name": asked[0].name, "opened": opened}, opened

    def _volume_to(self, request: Request) -> tuple[dict[str, Any], bool]:
        """The voice louder or quieter by a fifth, or to a level said in percent (10-100)."""
        now = self._volume(None) if self._volume is not None else None
        if self._volume is None or now is None:
            raise Refused("no_voice", request.intent)
        if request.response == "set":
            numbers = re.findall(r"\d+", calc.digits(request.said.get("anything", ""), request.language))
            if not numbers or not 10 <= int(numbers[0]) <= 100:
                raise Refused("no_level", request.intent)
            wanted = int(numbers[0]) / 100
        else:
            wanted = now + (VOLUME_STEP if request.response == "up" else -VOLUME_STEP)
        level = min(1.0, max(0.1, wanted))
        self._volume(level)
        return {"percent": round(level * 100), "limit": abs(level - now) < 1e-6}, level != now
