"""Every file the app reads, fuzzed (#36 point 2): structure-aware mutations of valid files
(tests/support/fuzz.py, tests/support/mutations.py) through the app's own readers. The app
never raises out of a reader, says what is wrong in a sentence, and never writes over the
user's file. Audio goes through `talk-llama transcribe`'s per-file path with the real whisper;
settings, conversation metadata and the catalog through their loaders. Model files and saved
model state: tests/test_fuzz_models.py.

Each test counts its cases into tests/artifacts/fuzz-counts.json (the numbers in the notes).
"""

from __future__ import annotations

import dataclasses
import io
import json
import typing
from collections import Counter

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given
from hypothesis import strategies as st

from app.catalog import catalog
from app.catalog.catalog import ModelError
from app.cli.transcribe import transcribe_one
from app.ears.transcriber import SttConfig, Transcriber
from app.loop.conversation_store import ConversationStore
from app.loop.settings import AppSettings, sampling_config
from app.system.typed_json import accepts
from tests.conftest import ARTIFACTS, espeak
from tests.support.fuzz import fuzz_settings, mutated_json
from tests.support.mutations import Mutation, values_for, wav_fields

COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    """The cases tried, by file and outcome: tests/artifacts/fuzz-files.json."""
    yield
    (ARTIFACTS / "fuzz-files.json").write_text(json.dumps(dict(sorted(COUNTS.items())), indent=1))


def count(name: str) -> None:
    COUNTS[name] += 1


# ----- audio ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def audio_seeds(speech_dir) -> dict[str, bytes]:
    """Valid files of each format the app reads: a spoken question as WAV (PCM), stereo FLAC,
    OGG Vorbis and float WAV."""
    speech_wav = espeak("What time is it?", speech_dir / "fuzz-seed.wav")
    audio, rate = sf.read(speech_wav, dtype="float32")
    seeds = {"wav": speech_wav.read_bytes()}
    for name, fmt, subtype in (
        ("flac", "FLAC", "PCM_16"),
        ("ogg", "OGG", "VORBIS"),
        ("float.wav", "WAV", "FLOAT"),
    ):
        buf = io.BytesIO()
        sf.write(buf, np.stack([audio, audio * 0.5], axis=1), rate, format=fmt, subtype=subtype)
        seeds[name] = buf.getvalue()
    return seeds


@st.composite
def mutated_audio(draw: st.DrawFn, seeds: dict[str, bytes]) -> tuple[str, bytes]:
    """A seed file with one to three edits: a WAV header field set to an extreme or nearby
    value, a byte of the first 256 (every format's header) or of anywhere overwritten, or
    the file cut short."""
    name = draw(st.sampled_from(sorted(seeds)))
    data = bytearray(seeds[name])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(
            st.sampled_from(
                ["field", "head", "byte", "cut"] if name.endswith("wav") else ["head", "byte", "cut"]
            )
        )
        if kind == "field":
            fld = draw(st.sampled_from(wav_fields(bytes(data)) or [None]))
            if fld is not None and fld.offset + fld.width <= len(data):
                original = int.from_bytes(data[fld.offset : fld.offset + fld.width], "little")
                value = draw(st.sampled_from(values_for(original, fld.width)))
                data[fld.offset : fld.offset + fld.width] = Mutation(
                    fld.offset, fld.width, value, fld.what
                ).pack()
        elif kind in ("head", "byte") and data:
            at = draw(
                st.integers(min_value=0, max_value=min(len(data), 256 if kind == "head" else len(data)) - 1)
            )
            data[at] = draw(st.integers(min_value=0, max_value=255))
        elif kind == "cut":
            data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    return name, bytes(data)


@pytest.fixture(scope="module")
def transcriber(whisper_model) -> Transcriber:
    return Transcriber(SttConfig(whisper_model, n_threads=1))


@fuzz_settings(60, 1000)
@given(draw=st.data())
def test_damaged_audio_files_are_transcribed_or_refused_in_a_sentence(
    transcriber, audio_seeds, tmp_path, draw
):
    name, data = draw.draw(mutated_audio(audio_seeds))
    path = tmp_path / f"fuzzed.{name}"
    path.write_bytes(data)
    record = transcribe_one(transcriber, str(path))  # raises nothing: the CLI prints this record
    outcome = "refused" if "error" in record else "rejected" if record["rejected"] else "transcribed"
    count(f"audio files: {outcome}")
    assert path.read_bytes() == data
    if "error" in record:
        assert (
            record["error"].startswith(f"cannot read {path}: ") and len(record["error"]) > len(str(path)) + 16
        )
    else:
        assert isinstance(record["text"], str) and (record["text"] or record["rejected"])
        assert record["duration_s"] < 10 * 60  # a damaged header never makes hours of audio


# ----- settings.json -------------------------------------------------------------------------
VALID_SETTINGS = {**dataclasses.asdict(AppSettings()), "sampling": {"temperature": 0.7}, "bot": "Max"}


@fuzz_settings(200, 5000)
@given(data=mutated_json(VALID_SETTINGS))
def test_damaged_settings_give_defaults_for_what_is_wrong_and_keep_the_file(config_dir, data):
    path = AppSettings.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    bad = path.with_suffix(".json.bad")
    bad.unlink(missing_ok=True)
    loaded = AppSettings.load()
    count("settings.json")
    for name, declared in typing.get_type_hints(AppSettings).items():
        assert accepts(declared, getattr(loaded, name)), (name, getattr(loaded, name))
    sampling_config(loaded.sampling)  # the sampler the settings describe can be built
    assert path.read_bytes() == data if path.exists() else bad.read_bytes() == data  # never rewritten
    if bad.exists():  # set aside: whole, as the user had it
        assert bad.read_bytes() == data


# ----- a conversation's about.json and history -----------------------------------------------
@fuzz_settings(150, 5000)
@given(about=mutated_json({"title": "Trip to Porto", "renamed": True, "created": 1764600000.5}))
def test_damaged_conversation_metadata_still_lists_the_conversation(tmp_path_factory, about):
    store = ConversationStore(tmp_path_factory.mktemp("conversations"))
    conv = store.create()
    (conv.path / "about.json").write_bytes(about)
    listed = store.get(conv.id)
    count("about.json")
    assert isinstance(listed.title, str) and listed.title
    assert isinstance(listed.updated, float)
    assert [c.id for c in store.list()] == [conv.id]


SESSION = {
    "history": [
        {"role": "user", "text": "My name is Robin.", "time": 1764600000.0, "name": "Sam"},
        {"role": "assistant", "text": "Nice to meet you, Robin.", "interrupted": True, "unspoken": " How"},
    ],
    "n_past": 120,
    "shifts": 1,
}


@fuzz_settings(150, 5000)
@given(meta=mutated_json(SESSION))
def test_damaged_saved_history_reads_as_messages_or_nothing(tmp_path_factory, meta):
    from app.brain import session_files

    folder = tmp_path_factory.mktemp("history")
    (folder / session_files.META).write_bytes(meta)
    history = session_files.read_history(folder)
    count("session.json (history)")
    for m in history:
        assert m.role in ("user", "assistant") and isinstance(m.text, str)
        assert isinstance(m.time, float) and isinstance(m.details, dict)
    assert (folder / session_files.META).read_bytes() == meta


# ----- the catalog ---------------------------------------------------------------------------
@fuzz_settings(150, 5000)
@given(data=mutated_json(json.loads(catalog.CATALOG_PATH.read_text(encoding="utf-8"))))
def test_a_damaged_catalog_is_refused_in_a_sentence(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("catalog") / "catalog.json"
    path.write_bytes(data)
    count("catalog.json")
    try:
        entries = catalog.load_catalog(path)
    except ModelError as exc:
        assert str(exc).startswith(f"The model catalog {path} is damaged")
        return
    for e in entries:
        assert isinstance(e.name, str) and isinstance(e.file, str) and isinstance(e.source, dict)
        e.source_label  # noqa: B018 (what Settings and `models list` show)


# ----- a remote conversation's remote-session.json -------------------------------------------
@pytest.fixture(scope="module")
def remote_brain():
    """A RemoteConversation on the scripted server (no model: loading a session sends nothing)."""
    from app.brain.records import RemoteConfig
    from app.brain.remote import RemoteConversation
    from tests.support.servers import FaultServer

    server = FaultServer()
    brain = RemoteConversation(RemoteConfig(server.url, n_ctx=4096))
    yield brain
    brain.close()
    server.stop()


SAVED_REMOTE = {
    "version": 1,
    "persona": "p",
    "system_prompt": "You are Max.",
    "system_tokens": 12,
    "kept": [{"user": "My name is Robin.", "reply": "Hello Robin.", "tokens": 20}],
    "history": SESSION["history"],
    "counters": [1, 0, 0, 0],
}


@fuzz_settings(150, 5000)
@given(data=mutated_json(SAVED_REMOTE))
def test_a_damaged_remote_session_resumes_whole_or_starts_again(remote_brain, tmp_path_factory, data):
    from app.brain.session_files import REMOTE

    folder = tmp_path_factory.mktemp("remote")
    (folder / REMOTE).write_bytes(data)
    remote_brain.reset()
    result = remote_brain.load_session(folder)
    count("remote-session.json")
    assert result.message == "" or result.message.endswith(".")
    assert all(isinstance(ex.user, str) and isinstance(ex.tokens, int) for ex in remote_brain.kept)
    assert all(isinstance(m.text, str) for m in remote_brain.history)
    assert isinstance(remote_brain.system_prompt, str) and isinstance(remote_brain.turn_count, int)
    remote_brain.messages("next")  # the next request can be built from what was loaded
    assert (folder / REMOTE).read_bytes() == data
