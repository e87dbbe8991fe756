"""The languages whisper knows: codes, names, and what a language setting means for the models.

The language setting is a whisper code ("en", "fr", ...) or "auto" (found per utterance).
English keeps the English-only default model (tiny.en: faster and better at English); any other
setting needs a multilingual model, `MULTILINGUAL_WHISPER` unless the user picked one.
Pure data and functions; no model is loaded here.
"""

from __future__ import annotations

import logging
from pathlib import Path

from app.catalog.catalog import default_model_path, find_entry, models_dir

log = logging.getLogger(__name__)
AUTO = "auto"
MULTILINGUAL_WHISPER = "base-q5_1"  # the catalog's multilingual model for a non-English setting

# whisper.cpp's language table (whisper_lang_str order), with English names.
LANGUAGES: dict[str, str] = {
    "en": "English", "zh": "Chinese", "de": "German", "es": "Spanish", "ru": "Russian",
    "ko": "Korean", "fr": "French", "ja": "Japanese", "pt": "Portuguese", "tr": "Turkish",
    "pl": "Polish", "ca": "Catalan", "nl": "Dutch", "ar": "Arabic", "sv": "Swedish",
    "it": "Italian", "id": "Indonesian", "hi": "Hindi", "fi": "Finnish", "vi": "Vietnamese",
    "he": "Hebrew", "uk": "Ukrainian", "el": "Greek", "ms": "Malay", "cs": "Czech",
    "ro": "Romanian", "da": "Danish", "hu": "Hungarian", "ta": "Tamil", "no": "Norwegian",
    "th": "Thai", "ur": "Urdu", "hr": "Croatian", "bg": "Bulgarian", "lt": "Lithuanian",
    "la": "Latin", "mi": "Maori", "ml": "Malayalam", "cy": "Welsh", "sk": "Slovak",
    "te": "Telugu", "fa": "Persian", "lv": "Latvian", "bn": "Bengali", "sr": "Serbian",
    "az": "Azerbaijani", "sl": "Slovenian", "kn": "Kannada", "et": "Estonian", "mk": "Macedonian",
    "br": "Breton", "eu": "Basque", "is": "Icelandic", "hy": "Armenian", "ne": "Nepali",
    "mn": "Mongolian", "bs": "Bosnian", "kk": "Kazakh", "sq": "Albanian", "sw": "Swahili",
    "gl": "Galician", "mr": "Marathi", "pa": "Punjabi", "si": "Sinhala", "km": "Khmer",
    "sn": "Shona", "yo": "Yoruba", "so": "Somali", "af": "Afrikaans", "oc": "Occitan",
    "ka": "Georgian", "be": "Belarusian", "tg": "Tajik", "sd": "Sindhi", "gu": "Gujarati",
    "am": "Amharic", "yi": "Yiddish", "lo": "Lao", "uz": "Uzbek", "fo": "Faroese",
    "ht": "Haitian Creole", "ps": "Pashto", "tk": "Turkmen", "nn": "Nynorsk", "mt": "Maltese",
    "sa": "Sanskrit", "lb": "Luxembourgish", "my": "Myanmar", "bo": "Tibetan", "tl": "Tagalog",
    "mg": "Malagasy", "as": "Assamese", "tt": "Tatar", "haw": "Hawaiian", "ln": "Lingala",
    "ha": "Hausa", "ba": "Bashkir", "jw": "Javanese", "su": "Sundanese", "yue": "Cantonese",
}  # fmt: skip


def normalize(setting: str) -> str:
    """A language setting as a whisper code or AUTO: "FR", "fr-FR", "fr_CA" and "French" give
    "fr"; "" and "auto" give AUTO. Raises ValueError for a language whisper does not know."""
    s = setting.strip()
    if s.lower() in ("", AUTO, "automatic"):
        return AUTO
    code = primary(s)
    if code in LANGUAGES:
        return code
    for c, name in LANGUAGES.items():
        if name.lower() == s.lower():
            return c
    raise ValueError(f"unknown language {setting!r}: use a code such as en, fr or ja, or auto")


def setting_language(setting: str) -> str:
    """`normalize`, but an unknown language (a hand-edited settings file) means AUTO: whisper
    finds the language, and the log says why."""
    try:
        return normalize(setting)
    except ValueError:
        log.warning("unknown language setting %r: automatic", setting)
        return AUTO


def primary(code: str) -> str:
    """The language of a code or locale ("fr-CA", "fr_FR" -> "fr"), lower case."""
    return code.lower().replace("_", "-").split("-")[0]


def base_language(setting: str) -> str:
    """The language replies and the voice take when no turn says otherwise: the setting's, or
    English when it is AUTO."""
    return "en" if setting == AUTO else setting


def language_name(code: str) -> str:
    """English name of a whisper code ("French"); the code itself when unknown."""
    return LANGUAGES.get(code, code)


def english_only(model: Path) -> bool:
    """A whisper model file that knows English only (its catalog and hub names end in .en)."""
    return ".en" in model.name


def needs_multilingual(setting: str) -> bool:
    """Whether this language setting needs a multilingual whisper model."""
    return normalize(setting) != "en"


def whisper_model_for(setting: str, chosen: str | Path | None = None, directory: Path | None = None) -> Path:
    """The whisper model file for a language setting (`whisper_choice`, without its sentence)."""
    return whisper_choice(setting, chosen, directory)[0]


def whisper_choice(
    setting: str, chosen: str | Path | None = None, directory: Path | None = None
) -> tuple[Path, str]:
    """The whisper model file for a language setting, and a sentence for the user when the
    chosen model cannot hear that language ("" otherwise). The same everywhere (window, chat,
    transcribe): the user's model; else the catalog's English default for English, else its
    multilingual model. An English-only model chosen for another language (Automatic included)
    gives way to the multilingual model when it is there, and the sentence says so; when it is
    not, the chosen model stays and the sentence says how to get the other."""
    multilingual = (directory or models_dir()) / find_entry(MULTILINGUAL_WHISPER).file
    if not chosen:
        model = multilingual if needs_multilingual(setting) else default_model_path("whisper", directory)
        return model, ""
    model = Path(chosen).expanduser()
    if not (english_only(model) and needs_multilingual(setting)):
        return model, ""
    wanted = "every language (Automatic)" if setting_language(setting) == AUTO else language_name(setting)
    if multilingual.is_file():
        return multilingual, f"{model.name} hears English only: {wanted} is heard with {multilingual.name}."
    fetch = f"talk-llama models fetch {MULTILINGUAL_WHISPER}"
    return model, f"{model.name} hears English only, so {wanted} is heard as English; `{fetch}` hears it."
