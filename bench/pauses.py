"""Long pauses inside an utterance and whisper (issue #15): is the end of the sentence heard?

The 12 PAUSED utterances (head, tail) with 0.6, 0.9 and 1.2 s of silence between the halves,
transcribed whole as whisper got them before (a) and with every inner pause cut to 300 ms
(vad.squeeze_pauses: pauses over 500 ms; what the Transcriber does now) (b): how often the tail's last word is
missing from the transcript, and whisper's time. Default whisper model, same run.
Run: .venv/bin/python -m bench.pauses
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np

from bench.common import emit
from tests.support.phrases import PAUSED
from tests.support.speech import speak_16k, until_quiet

GAPS_S = (0.6, 0.9, 1.2)


def main() -> None:
    from app.catalog.catalog import default_model_path
    from app.ears.transcriber import SttConfig, Transcriber

    stt = Transcriber(SttConfig(default_model_path("whisper")))
    lost = {"whole": 0, "squeezed": 0}
    ms: dict[str, list[float]] = {"whole": [], "squeezed": []}
    samples = []
    for head, tail in PAUSED:
        a = until_quiet(speak_16k(head))
        last = tail.split()[-1].strip("?.!").lower()
        for gap in GAPS_S:
            audio = np.concatenate([a, np.zeros(int(16000 * gap), np.float32), speak_16k(tail)])
            row = {"gap_s": gap}
            for name in lost:
                stt.config.max_pause_ms = 300 if name == "squeezed" else 0
                t0 = time.perf_counter()
                text = stt.transcribe(audio).text
                ms[name].append((time.perf_counter() - t0) * 1000)
                lost[name] += last not in text.lower()
                row[name] = text
            samples.append(row)
    n = len(PAUSED) * len(GAPS_S)
    emit(
        "pauses",
        {
            "utterances": n,
            "tail_lost": lost,
            "whisper_ms_p50": {k: round(float(np.median(v))) for k, v in ms.items()},
            "samples": samples,
        },
    )


if __name__ == "__main__":
    main()
