"""Acoustic echo cancellation by speexdsp (the MDF canceller PulseAudio's echo-cancel uses).

Why this library: it is small, maintained, packaged by every distribution (`libspeexdsp1`,
already pulled in by PulseAudio/PipeWire) and has a stable C API; the WebRTC module on PyPI
(`aec-audio-processing`) is a source-only package that needs a C++ compiler. There is no
maintained Python binding, so this module is a thin ctypes binding: nothing of the algorithm is
written here.

`SpeexEchoCanceller.process(mic, far)` takes one frame (`frame` samples, 16 kHz float32) of the
microphone and of the far end (what was played, aligned so its echo arrives later, within
`filter_s`) and returns the same frame with the (linear) echo removed. The preprocessor's
residual echo suppression is not used: during double talk it also turns the user's voice down
by up to 15 dB, and the user's voice is what the barge-in judge must hear. Not thread-safe: one
caller thread. `available()` says whether the library loads; `speexdsp_problem()` says why not.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np

ECHO_SET_SAMPLING_RATE = 24
ECHO_GET_IMPULSE_RESPONSE_SIZE = 27
ECHO_GET_IMPULSE_RESPONSE = 29


@functools.cache
def _lib() -> ctypes.CDLL | str:
    """The loaded library, or a sentence saying why it is missing."""
    name = ctypes.util.find_library("speexdsp") or "libspeexdsp.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        return f"libspeexdsp is not installed ({exc}); install the libspeexdsp1 package"
    vp, i16p = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int16)
    lib.speex_echo_state_init.restype = vp
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_state_destroy.argtypes = [vp]
    lib.speex_echo_state_reset.argtypes = [vp]
    lib.speex_echo_ctl.argtypes = [vp, ctypes.c_int, vp]
    lib.speex_echo_cancellation.argtypes = [vp, i16p, i16p, i16p]
    return lib


def available() -> bool:
    return not isinstance(_lib(), str)


def speexdsp_problem() -> str:
    lib = _lib()
    return lib if isinstance(lib, str) else ""


def _int16(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.clip(x * 32768.0, -32768, 32767).astype(np.int16))


class SpeexEchoCanceller:
    """One echo canceller. See the module docstring."""

    def __init__(self, frame: int = 320, rate: int = 16000, filter_s: float = 0.4) -> None:
        lib = _lib()
        if isinstance(lib, str):
            raise RuntimeError(lib)
        self._lib, self.frame = lib, frame
        self._echo = lib.speex_echo_state_init(frame, int(filter_s * rate))
        rate_value = ctypes.c_int32(rate)
        lib.speex_echo_ctl(self._echo, ECHO_SET_SAMPLING_RATE, ctypes.byref(rate_value))
        self._out = np.zeros(frame, dtype=np.int16)
        self._i16p = ctypes.POINTER(ctypes.c_int16)
        size = ctypes.c_int32(0)
        lib.speex_echo_ctl(self._echo, ECHO_GET_IMPULSE_RESPONSE_SIZE, ctypes.byref(size))
        self._impulse = np.zeros(size.value, dtype=np.int32)

    def _ptr(self, a: np.ndarray):
        return a.ctypes.data_as(self._i16p)

    def process(self, mic: np.ndarray, far: np.ndarray) -> np.ndarray:
        """One frame each (float32, `frame` samples): the microphone without the echo."""
        rec, play = _int16(mic), _int16(far)
        self._lib.speex_echo_cancellation(self._echo, self._ptr(rec), self._ptr(play), self._ptr(self._out))
        return self._out.astype(np.float32) / 32768.0

    def filter_energy(self) -> float:
        """The energy of the echo path the canceller has learned (0 right after a reset: speexdsp
        resets itself when it diverges, "acting funny", and says so only on stderr)."""
        self._lib.speex_echo_ctl(
            self._echo, ECHO_GET_IMPULSE_RESPONSE, self._impulse.ctypes.data_as(ctypes.c_void_p)
        )
        return float(np.dot(self._impulse.astype(np.float64), self._impulse.astype(np.float64)))

    def close(self) -> None:
        if self._echo:
            self._lib.speex_echo_state_destroy(self._echo)
            self._echo = None

    def __del__(self) -> None:
        self.close()
