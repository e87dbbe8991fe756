"""talk-llama's `-s` option: speak with an external command instead of pyttsx3.

For each sentence the text is written to `speak_file` and `COMMAND VOICE_ID FILE` is run, as
talk-llama's speak scripts expect. Same interface as `Speaker` (say/stop/wait/busy/close and
events); `stop()` kills the running command. A command cannot say how far it got, so the
`sentence_cut` of a stopped sentence counts all of it as heard. One worker thread owned by this object.
"""

from __future__ import annotations

import logging
import queue
import shlex
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.voice.sentence_queue import SentenceQueue, SpeakerEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Sentence:
    """A sentence for the command's thread (`gen`: the stop() generation it belongs to)."""

    gen: int
    index: int
    text: str


class ExternalSpeaker(SentenceQueue):
    available = True
    problem = ""
    first_chunk_words = 0
    can_hold = False  # the command speaks what it is given: nothing can wait synthesized

    def __init__(
        self,
        command: str,
        speak_file: Path,
        voice_id: str = "2",
        on_event: Callable[[SpeakerEvent], None] | None = None,
    ) -> None:
        self.command = shlex.split(command)
        self.speak_file = speak_file
        self.voice_id = voice_id
        self.on_event = on_event or (lambda e: None)
        self._q: queue.Queue[_Sentence | None] = queue.Queue()
        self._gen = 0
        self._index = 0
        self._pending = 0
        self._proc: subprocess.Popen | None = None
        self._playing: _Sentence | None = None  # being spoken
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="speaker-external", daemon=True)
        self._thread.start()

    def say(self, sentence: str, held: bool = False, language: str = "", next_up: bool = False) -> int:
        """Queue one sentence (non-blocking); the user's command speaks every `language` alike,
        and in order (`next_up` is not kept: the command reads a file per sentence). `held`
        must be False (`can_hold`)."""
        assert not held, "an external command cannot hold sentences"
        with self._lock:
            self._pending += 1
            self._index += 1
            self._q.put(_Sentence(self._gen, self._index, sentence))
            return self._index

    def wait_synthesized(self, index: int, timeout: float) -> bool:
        """Nothing is synthesized ahead here: True at once."""
        return True

    def release_held(self) -> None:
        """Nothing is ever held (`can_hold`)."""

    def discard_held(self) -> None:
        """Nothing is ever held (`can_hold`)."""

    def stop(self) -> None:
        with self._lock:
            playing = self._playing if self._playing and self._playing.gen == self._gen else None
            self._gen += 1
            self._pending = 0
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        if playing is not None:
            index, text = playing.index, playing.text
            self.on_event(SpeakerEvent("sentence_cut", text, index, heard=text))

    def close(self) -> None:
        self.stop()
        self._q.put(None)
        self._thread.join(timeout=2)

    def _loop(self) -> None:
        while (item := self._q.get()) is not None:
            gen, index, text = item.gen, item.index, item.text
            if gen != self._gen:
                continue
            with self._lock:
                self._playing = item
            self.on_event(SpeakerEvent("sentence_started", text, index))
            try:
                self.speak_file.write_text(text, encoding="utf-8")
                with self._lock:
                    self._proc = subprocess.Popen([*self.command, self.voice_id, str(self.speak_file)])
                code = self._proc.wait()
                if code != 0 and gen == self._gen:
                    self.on_event(
                        SpeakerEvent("error", text, index, message=f"speak command exited with {code}")
                    )
            except OSError as exc:
                self.on_event(SpeakerEvent("error", text, index, message=f"speak command failed: {exc}"))
            with self._lock:
                self._playing = None
                finished = gen == self._gen
            if finished:
                self.on_event(SpeakerEvent("sentence_finished", text, index))
                with self._lock:
                    self._pending = max(0, self._pending - 1)
                    empty = self._pending == 0
                if empty:
                    self.on_event(SpeakerEvent("queue_empty"))
