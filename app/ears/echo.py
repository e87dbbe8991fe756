"""Echo guard for hands-free mode: the assistant never hears itself, and hears the user over it.

While the assistant speaks, the microphone also picks up its voice (speakers in a room, or a
loopback in tests). The guard knows exactly what was played (`note_output` receives every block
the speaker writes) and works in three steps on each 20 ms microphone frame during playback:

1. **Cancel.** The played audio, placed on a timeline by when it was written (the output stream
   is continuous, so a sample's place on the timeline plus a fixed device latency is when it is
   heard), is the far-end reference of an adaptive echo canceller (speexdsp's MDF filter,
   `speex_aec`). The timeline runs on the microphone's sample count (`echo_timeline.PlayedTimeline`), so the
   echo's delay stays fixed within a reply, which the canceller needs; between replies (each
   reopens the output stream) it moves, and the reference is moved back to where the canceller
   learned it (`echo_path`). It also moves when the device runs dry mid-reply (the playback
   thread was late, as on a busy desktop; PortAudio reports the underflow: `playback_gap`).
   After either, until the delay is measured again, a frame is judged against the loudest
   echo the delay could now bring (`EchoPath.settled`: up to 100 ms later per gap, anywhere
   in the window after a restart). The canceller learns the echo path from the signals
   themselves and keeps it between replies. The echo arrives 0–400 ms after its reference
   (the filter's length).
2. **Judge.** A frame is the user's voice when what is left is speech (WebRTC VAD) and clearly
   louder than three floors: an absolute one, the microphone's own noise (learned while nothing
   plays), and the echo that could still be left (`residual_db` below the loudest played frame of
   the last 400 ms; it starts at 0 dB, the pessimistic guess). A frame the canceller mostly
   removed is echo, never voice. The residual floor learns only from frames that cannot be the
   user, ones the canceller explains (it removed most of them), never during a speech run and
   its hangover, so the user's voice cannot teach the guard to ignore it; and a twice-a-second
   cross-correlation of microphone and reference measures the echo's level and caps the floor
   (`echo_path`; measured on the cleaned audio too: the echo the canceller leaves), which also
   covers the canceller's first seconds and a headset (no path). A digitally silent
   microphone leaves nothing to explain, so any voice counts. Once the path
   is measured, a frame must also hold more than the echo it should hold (the played frames
   at the measured delay times the measured coupling, +3 dB): the user's voice adds power to
   the echo, while echo the canceller failed to remove (it drifts when the delay moves) does
   not, however little it removed. When speexdsp
   resets itself (it does when its filter diverges) the floor starts again from 0 dB
   (`_watch_canceller`): until it re-learns, the echo passes whole.
3. **Decide over a window.** A barge-in is `barge_frames` voice frames among the last
   `window_frames` (a short pause or one quieter frame does not reset it). The cleaned audio
   from just before that run is then passed on (`Verdict.audio`), so the question that
   interrupted the assistant is heard from its first word; so is everything the user says until
   the gate opens again (`tail_ms` after playback ends). A user already talking when playback
   begins (`mic_block(..., speech_under_way=True)`) keeps the floor: that is a barge-in at
   once, and their words pass on as after one (the segmenter holds the utterance's start,
   heard before the gate closed; the guard would only find the voice again after the echo
   floor settled, up to seconds later, and drop what came before).

Outside playback and its tail the microphone passes unchanged. Without libspeexdsp the guard
works on levels alone (step 2 on the raw microphone), which needs louder speech over a loud echo.

Threads: `note_output` and `playback_stopped` run on the speaker's thread, `mic_block` on the
audio callback thread; the reference timeline is shared under a lock; everything else belongs to
the callback thread.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from app.ears import speex_aec
from app.ears.echo_path import EchoPath
from app.ears.echo_timeline import PlayedTimeline
from app.ears.vad import FRAME, RATE, FrameClassifier, VadConfig, frame_rms_db, rms_db

log = logging.getLogger(__name__)
FAR_SILENT_DB = -60.0  # quieter reference frames play nothing worth an echo
# Read the canceller's learned path every 4th frame (80 ms; reading it costs ~60 µs, 60% of a
# frame's cancellation): at most 4 frames are judged with a stale floor, fewer than a barge-in.
WATCH_EVERY = 4
LATER, RESTARTED = 1, 2  # how the echo's delay moved (EchoGuard._moved)


@dataclass
class EchoConfig:
    margin_db: float = 6.0  # the user's voice is this much above the echo that could be left
    snr_db: float = 9.0  # ... and above the microphone's noise
    min_db: float = -50.0  # ... and above this absolute level
    window_frames: int = 10  # judge over the last 200 ms
    barge_frames: int = 6  # this many voice frames in the window (120 ms) are a barge-in
    hangover_frames: int = 25  # no learning for 500 ms after a voice frame
    tail_ms: int = 350  # the gate stays closed this long after playback ends (reverberation)
    echo_window_s: float = 0.4  # the echo of a sample arrives within this time (filter length)
    preroll_frames: int = 50  # cleaned audio kept before a barge-in decision (1 s: a short
    # "Stop." that was not enough on its own is still heard with the question that followed)
    explained_db: float = 6.0  # the canceller removed this much: the frame was echo
    coupling_slack_db: float = 3.0  # the measured echo level caps the floor, plus this (reverb)
    left_slack_db: float = 6.0  # ... and the echo measured in the cleaned audio, plus this (what
    # the canceller leaves moves faster than the echo: it re-adapts)
    double_talk_db: float = 3.0  # with an echo path, the raw microphone must exceed the echo
    # expected there (the played frames at the measured delay, times the measured coupling)
    use_canceller: bool = True


@dataclass(frozen=True)
class Verdict:
    """What to do with one microphone block: `audio` for the segmenter (None: it is the
    assistant's echo, drop it and reset the segmenter); `barge` when the user just started
    talking over the assistant."""

    audio: np.ndarray | None
    barge: bool = False


class EchoGuard:
    """See the module docstring for the design and the threading contract."""

    def __init__(self, config: EchoConfig | None = None) -> None:
        self.config = c = config or EchoConfig()
        self._timeline = PlayedTimeline()
        self._playing_until = 0.0
        self._latency_s = 0.0  # the output stream's latency (what the device still holds)
        self._aec = None
        if c.use_canceller:
            if speex_aec.available():
                self._aec = speex_aec.SpeexEchoCanceller(FRAME, RATE, c.echo_window_s)
            else:
                log.warning("echo cancellation off: %s", speex_aec.speexdsp_problem())
        self._vad = FrameClassifier(VadConfig())
        self._pending = np.zeros(0, dtype=np.float32)
        self._mic_index: int | None = None  # timeline index of the next microphone sample
        self._levels: deque[float] = deque(maxlen=150)  # recent levels that were not the user
        self._noise_db: float | None = None  # their 10th percentile, computed when read
        self.residual_db = 0.0  # echo left after cancellation, relative to the far end's peak
        self._filter_peak = 0.0  # the largest echo-path energy the canceller has learned
        self._frames_since_watch = 0
        self.canceller_resets = 0  # how often speexdsp reset itself (see _watch_canceller)
        self.gaps = 0  # how often the speaker's device ran dry while playing (playback_gap)
        # The echo's delay moved since the microphone side last looked (speaker thread sets it:
        # LATER after a gap, RESTARTED when playback starts again; mic_block passes it on).
        self._moved = 0
        self.path = EchoPath(c.echo_window_s, cancelling=self._aec is not None)
        self._recent: deque[bool] = deque(maxlen=c.window_frames)
        self._cleaned: deque[np.ndarray] = deque(maxlen=c.preroll_frames)
        self._since_voice = 10**9
        self._user_talking = False  # a barge-in happened; pass the user's audio until ungated

    # ----- speaker side ---------------------------------------------------------------------
    def hear_speaker(self, speaker) -> None:
        """Take what `speaker` (app.voice.speaker.Speaker) writes and each underflow it reports:
        the two callbacks the guard needs, set together so neither is forgotten."""
        speaker.on_output = self.note_output
        speaker.on_gap = self.playback_gap

    def note_output(self, samples: np.ndarray, rate: int, latency_s: float = 0.0) -> None:
        """The speaker is about to write these samples (blocking write: they play next, and are
        heard `latency_s` later: the device's buffer). The gate stays closed until the last
        sample has been heard, plus `tail_ms`."""
        if self._timeline.append(samples, rate):
            self._delay_moved(RESTARTED)
        tl = self._timeline
        self._latency_s = max(0.0, min(latency_s, 1.0))
        ahead_s = max(0, tl.head - tl.now()) / RATE  # written, not played yet
        self._playing_until = time.monotonic() + ahead_s + self._latency_s + self.config.tail_ms / 1000

    def playback_gap(self) -> None:
        """The speaker's device ran dry before the block just written (`Speaker.on_gap`), so the
        echo of what follows comes later than the timeline says: by less than its restart gap,
        the reference is still read as if playback had run on, and the echo's delay moved
        mid-reply. Until the path is measured again, a frame must exceed the echo the delay
        could bring up to `echo_path.LATER_MAX` later (per gap)."""
        self._delay_moved(LATER)
        self.gaps += 1

    def _delay_moved(self, how: int) -> None:
        with self._timeline.lock:
            self._moved = max(self._moved, how)

    def playback_stopped(self) -> None:
        """The queue ran out (the device still plays its buffer) or playback was cut."""
        self._timeline.truncate()
        self._playing_until = time.monotonic() + self._latency_s + self.config.tail_ms / 1000

    @property
    def gated(self) -> bool:
        return time.monotonic() < self._playing_until

    # ----- microphone side ------------------------------------------------------------------
    def mic_block(self, block: np.ndarray, speech_under_way: bool = False) -> Verdict:
        """Judge one microphone block (any length; 20 ms frames inside). See `Verdict`.
        `speech_under_way`: the segmenter is inside an utterance (so it began before the gate
        closed, or after a barge-in): the user keeps the floor."""
        self._mic_index = self._timeline.heard(len(block))
        if self._moved:
            with self._timeline.lock:
                moved, self._moved = self._moved, 0
            self.path.moved(restarted=moved == RESTARTED)
        now = self._timeline.now()
        if not self.gated:
            self._ungated(block)
            return Verdict(block)
        # Talking when playback began: theirs is the floor (the pre-roll is empty: the gate
        # was open, or the segmenter was reset, until now).
        floor = speech_under_way and not self._user_talking
        self._user_talking |= floor
        self._pending = np.concatenate([self._pending, block]) if len(self._pending) else block
        # Frames wait until the speaker has written their reference (it writes in step with the
        # device, so at most a frame or two), or until it is clear nothing more will come.
        first = self._mic_index - len(self._pending)
        shift = self.path.shift  # the echo's delay held where the canceller learned it
        ready_to = max(self._timeline.head + shift, now - RATE // 10)
        n = max(0, min(len(self._pending), ready_to - first)) // FRAME * FRAME
        if n == 0:
            return self._nothing(floor)
        data, self._pending = self._pending[:n], self._pending[n:].copy()
        window = int(self.config.echo_window_s * RATE)
        far = self._timeline.read(first - shift - window, first - shift + n)
        out: list[np.ndarray] = []
        barge = floor
        for i in range(0, n, FRAME):
            barge |= self._judge(data[i : i + FRAME], far[i : window + i + FRAME], out)
        return Verdict(np.concatenate(out), barge) if out else self._nothing(barge)

    def _judge(self, mic: np.ndarray, far_window: np.ndarray, out: list[np.ndarray]) -> bool:
        """One frame during playback and the decision over the window: True on a barge-in.
        Audio to pass on is appended to `out` (the run's start and a little before it when
        the barge-in is decided, everything after it). `bench/echo_replay.py` drives this."""
        cleaned, voice = self._frame(mic, far_window)
        if self._user_talking:
            out.append(cleaned)
            return False
        self._cleaned.append(cleaned)
        self._recent.append(voice)
        if sum(self._recent) < self.config.barge_frames:
            return False
        self._user_talking = True
        out.extend(self._cleaned)
        self._cleaned.clear()
        self._recent.clear()
        return True

    def _nothing(self, barge: bool = False) -> Verdict:
        """No audio this time: echo to drop, unless the user is talking (then: more to come)."""
        return Verdict(np.zeros(0, np.float32), barge) if self._user_talking else Verdict(None)

    def _ungated(self, block: np.ndarray) -> None:
        """No playback: the microphone passes; learn its noise floor; forget the last run."""
        self._user_talking = False
        self._recent.clear()
        self._cleaned.clear()
        self._pending = np.zeros(0, dtype=np.float32)
        self._learn_noise(rms_db(block))

    def _learn_noise(self, level: float) -> None:
        """Noise floor: a low percentile of the last 3 s of levels that were not the user
        (computed when read: an idle microphone only appends, ~25 times a second)."""
        self._levels.append(level)
        self._noise_db = None

    @property
    def noise_db(self) -> float | None:
        """The microphone's noise (dB), None before its first block."""
        if self._noise_db is None and self._levels:
            self._noise_db = float(np.percentile(self._levels, 10))
        return self._noise_db

    def _frame(self, mic: np.ndarray, far_window: np.ndarray) -> tuple[np.ndarray, bool]:
        """One 20 ms frame during playback: (cleaned audio, is it the user's voice?)."""
        c = self.config
        cleaned = self._aec.process(mic, far_window[-FRAME:]) if self._aec is not None else mic
        self._watch_canceller()
        mic_db, level = rms_db(mic), rms_db(cleaned)
        if self.noise_db is None:
            self._learn_noise(mic_db)
        noise_db = self.noise_db
        assert noise_db is not None  # _learn_noise sets it
        far_db = float(frame_rms_db(far_window.reshape(-1, FRAME)).max())
        far_active = far_db > FAR_SILENT_DB  # the reference is digital: silence is (near) zero
        echo_floor = far_db + self.floor_db + c.margin_db if far_active else -120.0
        loud = level > max(c.min_db, noise_db + c.snr_db, echo_floor)
        # A frame the canceller mostly removed was mostly echo, whatever is left of it.
        removed = mic_db - level
        echo_like = far_active and removed > c.explained_db
        # Double talk: the user adds power to what the microphone would hold with the echo alone.
        # A frame that holds no more than the expected echo is echo the canceller failed to
        # remove (it drifts when the path's delay moves), however little it removed.
        expected = self.path.expected_db(far_window)
        unexplained_echo = expected is not None and mic_db < expected + c.double_talk_db
        voice = loud and not echo_like and not unexplained_echo and self._vad.model(cleaned)
        self._since_voice = 0 if voice else self._since_voice + 1
        if not far_active and not voice and level > -119:  # the canceller starts with zeros
            self._learn_noise(level)  # (while the far end plays, the level holds its echo)
        if far_active and self._since_voice > c.hangover_frames:
            # Frames that cannot be the user teach the floor: the canceller removed most of them.
            explained = removed > c.explained_db and (level < echo_floor or removed > 2 * c.explained_db)
            if explained:
                step = level - far_db - self.residual_db
                self.residual_db += (0.2 if step > 0 else 0.02) * step
        if far_active:
            self.path.add(mic, cleaned, far_window[-FRAME:], voice)
        # With no echo path the microphone itself is passed on (the filter could only add noise).
        return (mic if self.path.absent else cleaned), voice

    def _watch_canceller(self) -> None:
        """speexdsp resets its filter when it diverges: the echo then passes whole until it has
        learned the path again, while the residual floor still says "little echo is left", and
        the assistant's own voice would count as the user's. On a reset (the learned echo path's
        energy falls to a thousandth of its peak) the floor goes back to the pessimistic start."""
        self._frames_since_watch += 1
        if self._aec is None or self._frames_since_watch < WATCH_EVERY:
            return
        self._frames_since_watch = 0
        energy = self._aec.filter_energy()
        if self._filter_peak > 0 and energy < 1e-3 * self._filter_peak:
            log.info("echo canceller reset itself; assuming the worst echo until it re-learns")
            self.residual_db = 0.0
            self.path.left.clear()  # what it left before no longer says anything
            self._filter_peak = energy
            self.canceller_resets += 1
        self._filter_peak = max(self._filter_peak, energy)

    @property
    def floor_db(self) -> float:
        """The echo that could be left, relative to the far end's peak: what the canceller taught,
        capped by the loudest echo measured over the last 3 s (one measurement can be off: a
        window of mostly silence, a path that just changed), or, once 3 s of them exist, by the
        loudest echo measured in what the canceller left (the double-talk check in `_frame`
        still asks the raw microphone to exceed the raw echo)."""
        cap = self.path.cap_db(self.config.coupling_slack_db, self.config.left_slack_db)
        return self.residual_db if cap is None else min(self.residual_db, cap)
