"""Whisper's inventions: text whisper writes for audio that does not hold those words.

Given silence, a piece of a word or a cut phrase, whisper tiny writes its stock phrases ("Thank
you.", "Thanks for watching.") or loops on a word ("Bandit, Bandit, Bandit, …" from 0.5 s of a
question). `invented(text, speech_ms, near_silent)` says why a transcript is one of those, or
None. The rules, measured by bench/fragments.py (espeak-ng voices and Piper's natural voice):
- less than `MIN_WORD_MS` of speech is shorter than a word: the shortest real answers measured
  ("Bye.", "Sure.", "No.") held 260-500 ms of speech; slices of 60-180 ms of a question, whose
  transcripts became turns 1 time in 5 ("Fight.", "That was", "Come here."), hold less;
- a unit of one to four words said `LOOP_REPEATS` times or more in a row is a decoding loop,
  cut to one saying ("Nope." came back as twenty "Nope"s); a loop of a stock phrase ("Okay,
  okay, okay, okay") is dropped;
- more syllables than `MAX_SYLLABLES_PER_S` of talking can hold (plus `SLACK_SYLLABLES`) were
  not said. Talking is the span from the first frame of speech to the last, not the frames
  called speech: in a hissing room those lose the quiet consonants and a real request at an
  ordinary pace read as too many words for them. The bound comes from people's rates, with
  whisper's decoding loops well above it: people talk at up to ~7 syllables a second, which the
  vowel-group count reads as up to ~8.2 a second of talking (1.17 times, on Piper's natural
  voice, MBROLA's and espeak-ng's at 175-320 wpm, clean and in noise to -35 dBFS); 12 leaves
  room for faster speakers; the loops measured came at 18-27;
- video-caption phrases ("Thanks for watching", "Please subscribe") are whisper's training data
  talking, never a user's turn; the everyday stock phrases ("Thank you.", "Okay.") are dropped
  only when the audio was near-silent (said, they are real answers). Both lists hold each
  language's own: whisper's multilingual models invent "Sous-titres réalisés par la communauté
  d'Amara.org", "Untertitel im Auftrag des ZDF", "Продолжение следует...", "ご視聴ありがとう
  ございました" from the captions they were trained on, as tiny.en invents "Thanks for watching".
Syllables are counted for Latin-script text only; other scripts skip that rule.
"""

from __future__ import annotations

import re

MIN_WORD_MS = 200
LOOP_REPEATS = 4
MAX_SYLLABLES_PER_S = 12.0
SLACK_SYLLABLES = 2

STOCK_PHRASES = frozenset(
    (
        "you",
        "thank you",
        "thank you very much",
        "bye",
        "okay",
        "so",
        "uh",
        "um",
        "hmm",
        "i'm sorry",
        # the same everyday words in the languages whisper hears most
        "merci", "merci beaucoup", "danke", "danke schön", "vielen dank", "gracias", "muchas gracias",
        "grazie", "grazie mille", "obrigado", "obrigada", "dank je", "dank u", "dziękuję", "спасибо",
        "большое спасибо", "谢谢", "謝謝", "ありがとう", "ありがとうございました", "감사합니다",
    )
)  # fmt: skip
REST = r"(?:[^.!?]|\.(?=org\b))*"  # the rest of a caption line ("… d'Amara.org" included)
_CAPTIONS = (
    r"\b(?:thanks? (?:you )?for watching|please subscribe|subscribe to (?:my|the|our) channel|"
    r"like and subscribe|see you in the next (?:video|one)|subtitles? by|captions? by)\b(?:,? everyone)?",
    r"\b(?:amara\.org|dimatorzok)\b",  # credits of the caption sites (any language)
    rf"\b(?:sous-titr(?:es|age)(?: réalisés| par| st'|:){REST}|merci d'avoir regardé(?: cette vidéo)?)",
    rf"\b(?:untertitel(?: im auftrag| von| der| by|:){REST}|vielen dank fürs zuschauen|bis zum nächsten mal)",
    rf"\b(?:subtítulos(?: realizados| por| hechos|:){REST}|gracias por ver(?: el video)?)",
    r"\b(?:suscríbete(?: al canal)?)",
    rf"\b(?:sottotitoli(?: creati| a cura| di|:){REST}|grazie per la visione)",
    rf"\b(?:legendas(?: pela| por| feitas|:){REST}|obrigad[oa] por assistir)",
    rf"\b(?:ondertiteld(?: door|:){REST}|bedankt voor het kijken)",
    rf"\b(?:napisy(?: stworzone| wykonane| by|:){REST})",
    rf"(?:субтитры(?: сделал| создавал| подготовил| by|:){REST}|редактор субтитров{REST})",
    r"(?:продолжение следует|спасибо за просмотр)",
    r"(?:ご視聴ありがとうございました|チャンネル登録(?:をお願いします|よろしくお願いします)?)",
    r"(?:字幕由[^。！？]*提供|谢谢观看|感谢观看|請不吝點贊[^。]*|请不吝点赞[^。]*)",
    rf"(?:시청해\s?주셔서 감사합니다|구독과 좋아요{REST})",
)
CAPTION = re.compile("|".join(f"(?:{c})" for c in _CAPTIONS), re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_VOWELS = re.compile(r"[aeiouyàáâäèéêëìíîïòóôöùúûü]+", re.IGNORECASE)
_LATIN = re.compile(r"^[A-Za-zÀ-ÿ\d]+$")


def _key(text: str) -> str:
    return re.sub(r"[^\w' ]+", " ", text.lower()).strip()


def stock_phrase(text: str) -> bool:
    """One of whisper's everyday stock phrases, alone ("Thank you.", "Okay.")."""
    return " ".join(_key(text).split()) in STOCK_PHRASES


def caption_phrase(text: str) -> bool:
    """The whole transcript is video-caption boilerplate ("Thanks for watching!")."""
    rest = CAPTION.sub(" ", text)
    return bool(CAPTION.search(text)) and not _WORD.search(rest)


def unloop(text: str) -> tuple[str, bool]:
    """`text` with every decoding loop (a unit of 1-4 words said `LOOP_REPEATS`+ times in a row:
    "F-F-F-F", "go to the best, go to the best, …") cut to one saying; True if there was one."""
    tokens = text.replace("-", " ").split()
    keys = [_key(t) for t in tokens]
    out: list[str] = []
    i, found = 0, False
    while i < len(tokens):
        for size in range(1, 5):
            unit = keys[i : i + size]
            n = 1
            while keys[i + n * size : i + (n + 1) * size] == unit:
                n += 1
            if n >= LOOP_REPEATS and all(unit):
                out += tokens[i : i + size]
                out[-1] = out[-1].rstrip(",;")
                i, found = i + n * size, True
                break
        else:
            out.append(tokens[i])
            i += 1
    return (" ".join(out), True) if found else (text, False)


def syllables(text: str) -> int | None:
    """Estimated syllables (vowel groups per word, a digit each); None for non-Latin text."""
    words = _WORD.findall(text)
    if not words or not all(_LATIN.match(w) for w in words):
        return None
    return sum(len(w) if w.isdigit() else max(1, len(_VOWELS.findall(w))) for w in words)


def invented(
    text: str, speech_ms: int, near_silent: bool, looped: bool = False, talk_ms: int | None = None
) -> str | None:
    """Why `text` cannot be what `speech_ms` of speech said, or None when it can. `looped`:
    whisper's output looped and `text` is what `unloop` kept of it. `talk_ms`: from the first
    sound of speech to the last (default `speech_ms`), what the syllables are counted against:
    in a noisy room the frames called speech lose the quiet consonants, not the talking's span."""
    if speech_ms < MIN_WORD_MS:
        return "shorter than a word"
    if looped and stock_phrase(text):
        return "whisper looped on a stock phrase"
    if caption_phrase(text):
        return "a caption phrase"
    if near_silent and stock_phrase(text):
        return "hallucination on near-silent audio"
    talk = speech_ms if talk_ms is None else max(talk_ms, speech_ms)
    if overlong(text, talk):
        return f"more words than {talk} ms of speech holds"
    return None


def overlong(text: str, speech_ms: int) -> bool:
    """More syllables than `speech_ms` of speech can hold (Latin script only)."""
    n = syllables(text)
    return n is not None and n > MAX_SYLLABLES_PER_S * speech_ms / 1000 + SLACK_SYLLABLES
