"""The echo path, measured while the assistant speaks, for the echo guard (echo.py).

Every half second of playback `EchoPath` cross-correlates the microphone with what was played
(the reference) over the echo window's lags: the best normalized correlation says whether the
microphone hears the speaker at all (`ncc`: a headset reads ~0, a speaker in a room well above
`NO_PATH_NCC`), after how long (`lag`), and, since the correlation squared is the share of the
microphone's power that is echo, how loud the echo is against the reference (`couplings`). The
same measure on the canceller's output is the echo it leaves (`left`). Levels from windows
with the user's voice in them are left out: over half a second a loud voice correlates with
the reference by chance enough to look like an echo (~0.3 measured).

It also holds the echo's delay, as the canceller sees it, where the canceller learned it
(`shift`, see `_track`). The guard reads the reference `shift` samples earlier.

Threads: the microphone's callback thread only (the guard's frame step). No Qt, no devices.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from app.ears.vad import FRAME, RATE, frame_rms_db, rms_db

NO_PATH_NCC = 0.08  # below this correlation the microphone does not hear the speaker
TRACK_NCC = 0.5  # a delay measured with at least this correlation is trusted (see _track)
TRACK_MIN = RATE // 1000  # the reference is moved when the delay moved by 1 ms or more
TRACK_MAX = RATE // 5  # ... by at most 200 ms later
TRACK_WAIT = RATE // 50  # ... and 20 ms earlier: the guard waits that long for the reference
MEASURE_FRAMES = RATE // 2 // FRAME  # one measurement per half second of playback
# A device that ran dry without the guard's timeline restarting plays on later by at most its
# restart gap (50 ms) plus what was queued ahead of it (0-53 ms measured): the echo is this much
# later at most (per gap) until measured again.
LATER_MAX = RATE // 10


class EchoPath:
    def __init__(self, echo_window_s: float, cancelling: bool) -> None:
        """`echo_window_s`: the echo arrives within this time of its reference; `cancelling`:
        there is a canceller whose output to measure (`left`)."""
        self._n_lags = int(echo_window_s * RATE)
        self._cancelling = cancelling
        self.ncc: float | None = None  # the last measurement's correlation (None: none yet)
        self.lag = 0  # samples between a played sample and its echo, as the canceller sees it
        self.couplings: deque[float] = deque(maxlen=6)  # echo vs reference (dB), the last 3 s
        self.left: deque[float] = deque(maxlen=6)  # ... in the canceller's output, the last 3 s
        self.shift = 0  # the reference is read this many samples earlier (see _track)
        self.target_lag: int | None = None  # the delay the canceller learned
        self.settled = False  # the delay was measured clearly since playback last moved
        self._later = 0  # unsettled after gaps: the echo may be up to this much later (samples)
        self._restarted = True  # unsettled after a restart: the echo may be anywhere
        self._mic: list[np.ndarray] = []
        self._far: list[np.ndarray] = []
        self._clean: list[np.ndarray] = []
        self._heard_voice = False

    @property
    def absent(self) -> bool:
        """Measured, and the microphone does not hear the speaker (a headset)."""
        return self.ncc is not None and self.ncc < NO_PATH_NCC

    def add(self, mic: np.ndarray, cleaned: np.ndarray, far: np.ndarray, voice: bool) -> None:
        """One frame while something plays: the microphone, the canceller's output, the reference
        frame at the microphone's place, and whether the guard judged it the user's voice."""
        self._mic.append(mic)
        self._far.append(far)
        self._clean.append(cleaned)
        self._heard_voice |= voice
        if len(self._mic) >= MEASURE_FRAMES:
            self._measure()

    def moved(self, restarted: bool) -> None:
        """The echo's delay may have moved: playback `restarted` after a gap (a new reply, or
        the device ran dry for longer than the guard's timeline bridges), or the device ran dry
        briefly (the echo comes later). Until the next clear measurement, which starts now (a
        window across the move would mix two delays), it is not `settled`. A restart starts
        playback afresh on the timeline, so the shift taken for earlier gaps is dropped (kept,
        the reference would be read later than the echo, out of the guard's window)."""
        self.settled = False
        self._restarted |= restarted
        self._later += LATER_MAX
        if restarted:
            self.shift = 0
        self._mic.clear()
        self._far.clear()
        self._clean.clear()
        self._heard_voice = False

    def _measure(self) -> None:
        m, f, c = np.concatenate(self._mic), np.concatenate(self._far), np.concatenate(self._clean)
        self._mic.clear()
        self._far.clear()
        self._clean.clear()
        heard_voice, self._heard_voice = self._heard_voice, False
        size = 1 << int(np.ceil(np.log2(2 * len(m))))
        far_spectrum = np.conj(np.fft.rfft(f, size))

        def coupling(x: np.ndarray) -> tuple[int, float, float]:
            lags = np.fft.irfft(np.fft.rfft(x, size) * far_spectrum, size)[: self._n_lags]
            best = int(np.argmax(np.abs(lags)))
            ncc = float(abs(lags[best]) / (np.linalg.norm(x) * np.linalg.norm(f) + 1e-9))
            return best, ncc, rms_db(x) - rms_db(f) + 20 * np.log10(max(ncc, 1e-3))

        lag, ncc, raw = coupling(m)
        if heard_voice:
            # Not a level to trust, but a clear delay still is (a voice correlates with the
            # reference by chance up to ~0.3): right after a reply moved the delay, echo the
            # canceller misses is judged voice, and waiting for a window without it could
            # leave the whole reply misaligned.
            if ncc >= TRACK_NCC:
                self.lag, self.ncc = lag, ncc
                self._track()
            return
        self.lag, self.ncc = lag, ncc
        self.couplings.append(raw)
        if self._cancelling:
            self.left.append(coupling(c)[2])
        self._track()

    def _track(self) -> None:
        """Hold the echo's delay where the canceller learned it. Within a reply the delay is
        steady (the guard's timeline runs on the microphone's count), but each reply reopens the
        output stream, and where its first sample lands against that count varies with the
        stream's start-up: 3–58 ms apart between replies on the virtual devices. The canceller
        keeps its filter between replies, so a moved delay means re-learning for seconds. When
        a measurement is clear (`TRACK_NCC`) and the delay moved from the first one measured,
        the reference is read that much earlier (or up to `TRACK_WAIT` later: frames wait for
        their reference) from then on; beyond that the canceller re-learns the new delay."""
        if self.ncc is None or self.ncc < TRACK_NCC:
            return
        self.settled, self._restarted, self._later = True, False, 0
        if self.target_lag is None:
            self.target_lag = self.lag
            return
        moved = self.lag - self.target_lag
        if abs(moved) < TRACK_MIN:
            return
        if -TRACK_WAIT <= self.shift + moved <= TRACK_MAX:
            self.shift += moved
            self.lag = self.target_lag  # where it is from now on
        else:  # reading the reference later would hold every frame back: re-learn there
            self.target_lag = self.lag

    def expected_db(self, far_window: np.ndarray) -> float | None:
        """The echo a frame should hold, given its reference window (the frame's own reference
        last): the loudest played frame around the measured delay plus the loudest coupling of
        the last 3 s. Until the delay is `settled` again: after a restart, the loudest of the
        whole window (the echo could be anywhere in it); after gaps, also up to `LATER_MAX` per
        gap later. None without a measured path (a headset, the first half second)."""
        if not self.couplings or self.absent:
            return None
        end = len(far_window) - self.lag
        if self.settled:
            around = far_window[max(0, end - 2 * FRAME) : min(len(far_window), end + FRAME)]
        elif self._restarted:
            around = far_window
        else:
            around = far_window[max(0, end - 2 * FRAME - self._later) : min(len(far_window), end + FRAME)]
        if len(around) < FRAME:
            return None
        level = float(frame_rms_db(around[: len(around) // FRAME * FRAME].reshape(-1, FRAME)).max())
        return level + max(self.couplings)

    def cap_db(self, coupling_slack_db: float, left_slack_db: float) -> float | None:
        """The most echo there can be, against the reference's peak: the loudest measured over
        the last 3 s plus a slack (one measurement can be off: a window of mostly silence, a
        path that just changed), or, once 3 s of them exist, the loudest the canceller left
        plus its slack, when lower. None before the first measurement."""
        if not self.couplings:
            return None
        cap = max(self.couplings) + coupling_slack_db
        if len(self.left) == self.left.maxlen:
            cap = min(cap, max(self.left) + left_slack_db)
        return cap
