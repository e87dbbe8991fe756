"""Fast speakers are heard: a request said at up to ~7 syllables a second (people's fast speech)
is never dropped as "more words than the speech holds", in the natural voice at 1.3 times its
pace and in MBROLA's and espeak-ng's voices at fast rates, in a quiet room and in a hissing one
(where the frames called speech lose the quiet consonants; ears/hallucinations.py states how the
bound follows from those rates). Whisper's decoding loops, at 18 or more a second, still are
(test_hallucinations.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.sounds import noise
from tests.support.voices import MBROLA, PIPER, available, speak

REQUESTS = (
    "Can you tell me what the weather will be like in Paris tomorrow afternoon, please?",
    "I would like you to remind me to call my sister about the party on Saturday evening.",
    "What is the difference between a crocodile and an alligator, and where do they live?",
    "Please explain how a rainbow forms after the rain, in a few simple sentences for a child.",
)
# (voice, espeak-ng/MBROLA words per minute, the natural voice's): each reads 6-7 syllables a
# second of talking at most on these requests
FAST = (("en-us", 240, None), ("en-gb", 240, None), (f"mb-{MBROLA['en']}", 175, None), (PIPER, 150, 228))


@pytest.mark.parametrize("room_db", [None, -40], ids=["quiet", "hiss at -40 dBFS"])
@pytest.mark.parametrize(("voice", "wpm", "natural_wpm"), FAST, ids=[v for v, _w, _n in FAST])
def test_a_fast_request_is_heard_whole(transcriber, voice, wpm, natural_wpm, room_db) -> None:
    if voice not in available():
        pytest.skip(f"{voice} is not installed here")
    rng = np.random.default_rng(1)
    for request in REQUESTS:
        audio = speak(request, voice, wpm, natural_wpm)
        audio = np.concatenate([np.zeros(8000, np.float32), audio, np.zeros(8000, np.float32)])
        if room_db is not None:  # noise() is at -30 dBFS
            audio = audio + noise("white", len(audio) / 16000, rng)[: len(audio)].astype(np.float32) * 10 ** (
                (room_db + 30) / 20
            )
        heard = transcriber.transcribe(audio)
        assert not heard.rejected, (voice, request, heard.reason, heard.text)
        assert len(heard.text.split()) >= len(request.split()) - 3, (voice, heard.text)
