"""Transcriber: whisper.cpp (pywhispercpp) speech-to-text that never invents a turn.

`transcribe(audio)` takes 16 kHz mono float32 and returns a `Transcript`. Before whisper runs,
a speech gate (vad.speech_stats) rejects silence, hum, clicks and noise; after it, bracketed
annotations are stripped ([BLANK_AUDIO], (music)), non-ASCII text is kept, low-probability
output is rejected, and text the audio cannot hold (hallucinations.py: less than a word of
speech, decoding loops, caption phrases, stock phrases on near-silent audio) is dropped. A decode
that went wrong (symbols and no word, a loop, more words than the speech holds) is decoded once
more with the other `suppress_symbols` setting (whisper's non-speech symbols - quote marks,
brackets, music signs - allowed or not): the same audio decoded the same way fails the same way,
and either setting alone loses some utterances (a 2.5 s
"Remind me to call my mother tomorrow." came back as `" " " " …`, a "How many days are there
in a week?" as "Home, and, and, …").
`audio_ctx` is sized to the clip (1 unit = 20 ms) with a margin, which cuts the encoder's cost
for short clips. Longer audio is cut at its quietest moments into
pieces of at most `chunk_s` (a word is never split by a blind 30 s cut; pieces without speech
are skipped, so silence inside a monologue cannot turn into a hallucination). Silences inside a
piece longer than `max_pause_ms` are cut short (vad.squeeze_pauses): given "What is the weather
like in … [600 ms] … Paris today?", whisper tiny stopped at "in?" (bench/pauses.py).

Threading: one Transcriber is used by one thread at a time (a lock enforces it); it blocks for
the transcription. Never call it on a GUI thread.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.catalog.catalog import check_file
from app.catalog.languages import AUTO, english_only, setting_language
from app.ears.hallucinations import MIN_WORD_MS, invented, syllables, unloop
from app.ears.second_pass import MORE_SYLLABLES, dropped_words, longest_pause, went_wrong
from app.ears.transcript_text import clean_text, collapse_repeats
from app.ears.vad import FRAME, SpeechStats, VadConfig, speech_frames, squeeze_pauses, stats_from
from app.system.cpu import FreeCores, threads_for
from app.system.logs import NATIVE_LOAD

log = logging.getLogger(__name__)
RATE = 16000
WINDOW_S = 30.0  # whisper's own window: no piece may be longer
FULL_AUDIO_CTX = 1500


def names_prompt(bot: str) -> str:
    """whisper's initial prompt for a conversation with `bot`: its name is then spelt as the
    user knows it ("Aria", not "Area")."""
    return f"A conversation with a person called {bot}."


@dataclass
class SttConfig:
    model_path: Path
    n_threads: int | None = None  # None: the cores other programs leave free (app.system.cpu), per clip
    language: str = "en"  # "auto" for multilingual models; .en models always use English
    initial_prompt: str = ""
    max_tokens: int = 0  # 0 = automatic (scaled to the clip); talk-llama's -mt
    audio_ctx: int = 0  # 0 = automatic (sized to the clip); talk-llama's -ac
    translate: bool = False
    min_prob: float = 0.30  # mean token probability below this rejects the transcript
    gate: bool = True  # reject clips without speech before running whisper
    chunk_s: float = 7.5  # longer audio is cut at pauses into pieces up to this long (<= 30)
    fallback: bool = True  # re-decode at higher temperatures when greedy output looks wrong (-nf: off)
    max_pause_ms: int = 300  # longer silences inside a clip are cut to this before whisper (0: off)
    suppress_symbols: bool = False  # whisper may not write quote marks, brackets, music signs

    def renamed(self, old_bot: str, bot: str) -> SttConfig:
        """These settings for a conversation with `bot` instead of `old_bot`: a prompt that
        named the old assistant (`names_prompt`) names the new one; any other stays."""
        if self.initial_prompt != names_prompt(old_bot):
            return self
        return dataclasses.replace(self, initial_prompt=names_prompt(bot))


@dataclass
class Transcript:
    text: str
    raw_text: str = ""
    prob: float = 0.0
    duration_s: float = 0.0
    transcribe_s: float = 0.0
    audio_ctx: int = 0
    rejected: bool = False
    reason: str = ""
    speech: SpeechStats | None = None
    language: str = ""  # the whisper code it was heard in (found per utterance when set to auto)

    def as_json(self) -> dict:
        return {
            "text": self.text,
            "duration_s": round(self.duration_s, 3),
            "transcribe_s": round(self.transcribe_s, 3),
            "prob": round(self.prob, 3),
            "rejected": self.rejected,
            "reason": self.reason,
            "language": self.language,
        }


def auto_audio_ctx(n_samples: int, margin: float = 1.15, extra: int = 64, floor: int = 512) -> int:
    """Encoder context for a clip: its length in 20 ms units plus a margin, at least `floor`
    (10 s; smaller contexts raised the error rate in bench/stt.py), in steps of 32."""
    units = max(floor, math.ceil(n_samples / RATE * 50 * margin) + extra)
    return min(FULL_AUDIO_CTX, int(math.ceil(units / 32) * 32))


def split_at_pauses(audio: np.ndarray, max_s: float) -> list[tuple[int, int]]:
    """(start, end) sample ranges of at most `max_s` covering `audio`, each cut in the middle of
    the quietest 300 ms in the second half of its span: a pause between phrases (short gaps
    between words average out with the speech around them), never inside a word."""
    limit = int(max_s * RATE)
    if len(audio) <= limit:
        return [(0, len(audio))]
    frame = RATE // 50
    n = len(audio) // frame
    energy = np.square(audio[: n * frame].reshape(n, frame), dtype=np.float64).mean(axis=1)
    smooth = np.convolve(energy, np.ones(15) / 15, mode="same")  # 300 ms
    out, start = [], 0
    while len(audio) - start > limit:
        lo, hi = (start + limit // 2) // frame, (start + limit) // frame
        cut = (lo + int(np.argmin(smooth[lo:hi]))) * frame
        out.append((start, cut))
        start = cut
    out.append((start, len(audio)))
    return out


@dataclass(frozen=True)
class _Call:
    """One `transcribe` call's settings, shared by its decodes (see `transcribe`)."""

    audio_ctx: int | None
    abort: Callable[[], bool] | None
    language: str | None

    def aborted(self) -> bool:
        return bool(self.abort and self.abort())


class Transcriber:
    """A loaded whisper model. See the module docstring for the contract."""

    def __init__(self, config: SttConfig, vad: VadConfig | None = None) -> None:
        from pywhispercpp.model import Model

        self.config = config
        self.vad = vad or VadConfig()
        path = Path(config.model_path)
        self._free = FreeCores()
        check_file(path, "whisper")
        self.english_only = english_only(path)
        self._lock = threading.Lock()
        with NATIVE_LOAD:  # whisper's load lines reach the log, never /dev/null
            self._model = Model(
                str(path),
                n_threads=config.n_threads or self._free.cores,
                print_progress=False,
                print_realtime=False,
                print_timestamps=False,
                redirect_whispercpp_logs_to=False,  # fd 2 is the app's log pipe (app.system.logs)
            )

    @property
    def automatic(self) -> bool:
        """Whisper finds the language of each utterance (a multilingual model set to AUTO)."""
        return self._language() == AUTO

    def _language(self, found: str | None = None) -> str:
        if self.english_only:
            return "en"
        if found and setting_language(self.config.language) == AUTO:
            return found
        return setting_language(self.config.language)

    def detect_language(self, audio: np.ndarray) -> tuple[str, float]:
        """The language whisper hears in `audio` and its probability, from one encoder pass and
        one decoder step (~0.8x a transcription here); ("", 0.0) from an English-only model. Blocks.
        The encoder runs at the context of the call before (whisper.cpp sets `audio_ctx` only
        in a transcription): the last utterance's, or the full window on a fresh model."""
        if self.english_only:
            return "", 0.0
        import _pywhispercpp as pw

        audio = np.ascontiguousarray(audio, dtype=np.float32)
        if len(audio) < RATE:
            audio = np.pad(audio, (0, RATE - len(audio)))
        probs = np.zeros(pw.whisper_lang_max_id() + 1, np.float32)
        threads = threads_for(self.config.n_threads, self._free)
        with self._lock:
            ctx = self._model._ctx  # type: ignore[attr-defined]  # pywhispercpp has no accessor
            if pw.whisper_pcm_to_mel(ctx, audio, len(audio), threads) != 0:
                return "", 0.0
            found = pw.whisper_lang_auto_detect(ctx, 0, threads, probs)
        if found < 0:
            return "", 0.0
        return pw.whisper_lang_str(found), float(probs[found])

    def _run(
        self,
        audio: np.ndarray,
        audio_ctx: int,
        abort: Callable[[], bool] | None,
        found: str | None,
        symbols_off: bool,
    ) -> tuple[str, float, str]:
        """whisper on one piece: (text, mean token probability, the language it was heard in)."""
        import _pywhispercpp as pw

        c = self.config
        # A token budget scaled to the clip stops the repetition loops whisper can fall into.
        budget = math.ceil(len(audio) / RATE * 7) + 12
        max_tokens = min(c.max_tokens, budget) if c.max_tokens else budget
        language = self._language(found)
        try:
            segments = self._transcribe(audio, audio_ctx, abort, language, max_tokens, symbols_off)
        finally:
            # pywhispercpp keeps the callback on the model's params (a C++ reference Python's
            # garbage collector cannot see): kept, it would hold whoever `abort` refers to, and
            # through them this model, alive for ever (every reloaded assistant leaked whole).
            pw.assign_abort_callback(self._model._params, None)  # type: ignore[attr-defined]
        texts = [s.text for s in segments]
        probs = [s.probability for s in segments if not math.isnan(s.probability)]
        text = collapse_repeats(" ".join(texts).strip(), len(audio) / RATE)
        if language == AUTO:  # whisper found it on this piece's own audio
            ctx = self._model._ctx  # type: ignore[attr-defined]  # pywhispercpp has no accessor
            language = pw.whisper_lang_str(pw.whisper_full_lang_id(ctx))
        return text, float(np.mean(probs)) if probs else 0.0, language

    def _transcribe(
        self,
        audio: np.ndarray,
        audio_ctx: int,
        abort: Callable[[], bool] | None,
        language: str,
        max_tokens: int,
        symbols_off: bool,
    ) -> list:
        """pywhispercpp's transcription of one piece with this config (blocks). `symbols_off`:
        whisper may not write quote marks, brackets or music signs (its non-speech tokens)."""
        c = self.config
        return self._model.transcribe(
            audio,
            abort_callback=abort,
            extract_probability=True,
            language=language,
            detect_language=False,  # (pywhispercpp keeps parameters from call to call)
            translate=c.translate,
            initial_prompt=c.initial_prompt,
            single_segment=True,
            no_context=True,
            # No timestamp tokens: two decoder steps fewer per clip (~11 ms of ~240 measured on
            # tiny.en-q4_0), same WER on 80 clips (3.5% vs 4.1%); a turn needs no timestamps.
            no_timestamps=True,
            max_tokens=max_tokens,
            audio_ctx=audio_ctx,
            suppress_blank=True,
            suppress_nst=symbols_off,
            temperature_inc=0.2 if c.fallback else 0.0,
            n_threads=threads_for(c.n_threads, self._free),
        )

    def transcribe(
        self,
        audio: np.ndarray,
        audio_ctx: int | None = None,
        abort: Callable[[], bool] | None = None,
        language: str | None = None,
    ) -> Transcript:
        """Blocking. `audio_ctx`: None = config (0 = automatic), or an explicit value.
        `abort`: polled by whisper.cpp during decoding; True stops it (e.g. at shutdown).
        `language`: on Automatic, the language already found in this utterance (whisper then
        transcribes in it instead of finding it again); ignored with a set language."""
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        result = Transcript(text="", duration_s=len(audio) / RATE)
        t0 = time.perf_counter()
        speech = speech_frames(audio, self.vad)
        stats = stats_from(audio, speech)
        result.speech = stats
        if len(audio) < RATE // 10:
            return self._reject(result, "too short", t0)
        if self.config.gate and stats.speech_ms < 100:
            return self._reject(result, "no speech detected", t0)
        if self.config.gate and stats.speech_ms < MIN_WORD_MS:
            return self._reject(result, "shorter than a word", t0)
        call = _Call(audio_ctx, abort, language)
        with self._lock:
            symbols_off = self.config.suppress_symbols
            self._decode(result, audio, speech, call, symbols_off)
            looped, why = self._judge(result, stats)
            wrong = went_wrong(result.raw_text, looped, result.text, max(stats.speech_ms, stats.span_ms))
            if wrong and not call.aborted():
                # whisper's own temperature fallback never sees these: its entropy test needs
                # more than 32 tokens and the clip's token budget is smaller
                log.info("whisper's decode went wrong (%s: %r); again", why or "a loop", result.raw_text)
                again = dataclasses.replace(result)
                self._decode(again, audio, speech, call, not symbols_off)
                looped_again, why_again = self._judge(again, stats)
                if not why_again and (why or not looped_again):  # heard, or heard without a loop
                    result, why = again, None
            if not why and dropped_words(result.text, stats.speech_ms) and not call.aborted():
                result = self._cut_at_pause(result, audio, speech, call)
        if why:
            return self._reject(result, why, t0)
        result.transcribe_s = time.perf_counter() - t0
        return result

    def _decode(
        self, result: Transcript, audio: np.ndarray, speech: np.ndarray, call: _Call, symbols_off: bool
    ) -> None:
        """Fill `result`'s raw text, probability, language and context from whisper's passes over
        `audio` cut into pieces (the caller holds the lock)."""
        texts, probs, languages, result.audio_ctx = [], [], [], 0
        pieces = split_at_pauses(audio, min(self.config.chunk_s, WINDOW_S))
        for start, end in pieces:
            chunk = audio[start:end]
            frames = speech if len(pieces) == 1 else speech_frames(chunk, self.vad)
            if len(pieces) > 1 and stats_from(chunk, frames).speech_ms < 100:
                continue  # a silent stretch of a long recording
            if self.config.max_pause_ms:  # a long pause reads as the end to whisper tiny
                chunk = squeeze_pauses(chunk, self.config.max_pause_ms, self.vad, speech=frames)
            ctx = call.audio_ctx if call.audio_ctx is not None else self.config.audio_ctx
            ctx = ctx or auto_audio_ctx(len(chunk))
            # whisper needs at least 1 s of input; pad short clips with silence
            if len(chunk) < RATE:
                chunk = np.pad(chunk, (0, RATE - len(chunk)))
            text, prob, heard_in = self._run(chunk, ctx, call.abort, call.language, symbols_off)
            result.audio_ctx = max(result.audio_ctx, ctx)
            texts.append(text)
            probs.append(prob)
            languages.append(heard_in)
        result.language = max(set(languages), key=languages.count) if languages else ""
        result.raw_text = " ".join(texts).strip()
        result.prob = float(np.mean(probs)) if probs else 0.0

    def _cut_at_pause(
        self, result: Transcript, audio: np.ndarray, speech: np.ndarray, call: _Call
    ) -> Transcript:
        """`result`, or the two sides of the utterance's longest pause decoded apart and joined
        when that holds `MORE_SYLLABLES` times its syllables (whisper left the words before the
        pause out). The caller holds the lock."""
        pause = longest_pause(speech)
        if pause is None:
            return result
        at = (pause[0] + pause[1]) // 2
        sides = []
        for piece, frames in ((audio[: at * FRAME], speech[:at]), (audio[at * FRAME :], speech[at:])):
            side = dataclasses.replace(result)
            self._decode(side, piece, frames, call, self.config.suppress_symbols)
            if self._judge(side, stats_from(piece, frames))[1]:
                return result  # a side without words: the pause held none of the lost ones
            sides.append(side)
        joined = f"{sides[0].text} {sides[1].text}"
        if (syllables(joined) or 0) < MORE_SYLLABLES * (syllables(result.text) or 0):
            return result
        log.info("whisper left words out (%r); heard apart: %r", result.text, joined)
        return dataclasses.replace(
            result,
            text=joined,
            raw_text=f"{sides[0].raw_text} {sides[1].raw_text}",
            prob=(sides[0].prob + sides[1].prob) / 2,
        )

    def _judge(self, result: Transcript, stats: SpeechStats) -> tuple[bool, str | None]:
        """Set `result.text` from its raw text; (whisper looped, why the text is rejected or None)."""
        result.text, looped = unloop(clean_text(result.raw_text))
        if not result.text or not re.search(r"\w", result.text):
            return looped, "nothing heard"
        if why := invented(result.text, stats.speech_ms, stats.near_silent, looped, stats.span_ms):
            return looped, why
        if result.prob < self.config.min_prob:
            return looped, f"low confidence ({result.prob:.2f})"
        return looped, None

    @staticmethod
    def _reject(result: Transcript, reason: str, t0: float) -> Transcript:
        result.rejected, result.reason = True, reason
        result.transcribe_s = time.perf_counter() - t0
        log.info("transcript rejected: %s (%r)", reason, result.raw_text)
        return result
