"""Barge-in: the user stops the assistant mid-reply (the talk key, speech over the voice, a
typed message), and the conversation remembers the reply as far as it was heard.

How it stays correct across threads:
1. The voice stops first (`VoiceControl.silence`: sound ends within ~25 ms); the speaker's own
   `sentence_cut` event then says how far the sentence got (heard.py follows those events).
2. The turns in flight are read once, as one snapshot under the responder's lock
   (`Responder.in_flight`: the turn being generated and the turn being spoken); each gets its
   cancel flag (generation stops within one token) and a tentative one is withdrawn.
3. Settling what was heard is queued on the llm thread (`Responder.settle_heard`), which owns
   the conversation: it runs after the stopped generation has returned and before any next turn.
4. The state goes back to idle only after that settlement (a front end that writes a turn's
   record when the assistant is idle must have seen `Heard` first), and only if nothing else
   changed the state meanwhile (`only_from`: a press's LISTENING wins).

Every method here may be called from any thread and returns at once.
"""

from __future__ import annotations

from collections.abc import Callable

from app.loop.events import State
from app.loop.llm_worker import LlmWorker
from app.loop.ports import SetState
from app.loop.tentative_turns import TentativeTurns
from app.loop.voice_control import VoiceControl


class BargeIn:
    def __init__(
        self,
        *,
        voice: VoiceControl,
        tentative: TentativeTurns,
        llm: LlmWorker,
        state: Callable[[], State],
        set_state: SetState,
        listening: Callable[[], bool],
    ) -> None:
        self._voice = voice
        self._tentative = tentative
        self._llm = llm
        self._state = state
        self._set_state = set_state
        self._listening = listening

    def interrupt(self) -> None:
        """Stop the voice now and the generation within one token; the reply is then remembered
        as far as it was heard (queued on the llm thread, before any next turn)."""
        self._tentative.withdraw()
        r = self._llm.responder
        was = self._state()
        speaking = self._voice.silence()  # first: the speaker's sentence_cut says what was heard
        current, spoken = r.in_flight() if r is not None else (None, None)
        # The reply was written and only its voice was left: a stopped voice sends no
        # queue_empty, so nothing else would say that the assistant is idle again.
        idle = speaking and current is None and not self._listening()
        for turn in (current, spoken):
            if turn is not None:
                self._tentative.withdraw_turn(turn)
                turn.cancel.set()
        if r is not None and spoken is not None and (speaking or spoken is current) and not spoken.settled:

            def settle() -> None:
                try:
                    r.settle_heard(spoken)
                finally:
                    if idle:
                        self._set_state(State.IDLE, only_from=was)

            self._llm.put(settle)
        elif idle:
            self._set_state(State.IDLE)

    def voice_lost(self) -> bool:
        """The speaker device went away: the reply being spoken goes on as text only and stays
        whole in memory (it is on screen); the next reply speaks again. True if a reply was
        being generated or spoken."""
        r = self._llm.responder
        current, spoken = r.in_flight() if r is not None else (None, None)
        for turn in (current, spoken):
            if turn is not None:
                turn.voice_off = True
        speaking = self._voice.silence()
        return speaking or current is not None
