"""The language of a user turn, as the model reads it.

The system prompt is evaluated once per conversation and says which language to answer in
(`{language}` in the persona: the setting's language, or "the language {person} speaks" when
it is automatic). A turn heard in another language is told in the turn itself: its text
opens with "[Answer in French]". The tag rides with the turn's own tokens, so a language
change costs its few tokens and never re-evaluates the conversation, and replaying a saved
conversation reads every turn as it was read then (the message keeps its language).

The history and the window keep the user's own words; only the model reads the tag.
Pure functions; any thread.
"""

from __future__ import annotations

from app.brain.persona import Persona
from app.brain.records import Message
from app.catalog.languages import base_language, language_name


def read_as(text: str, language: str, persona: Persona) -> str:
    """The user's words as the model reads them: tagged when heard in a language other than
    the conversation's (`language` "": not known, e.g. typed)."""
    if not language or language == base_language(persona.language):
        return text
    return f"[Answer in {language_name(language)}] {text}"


def message_as_read(message: Message, persona: Persona) -> str:
    """A user message of the history as the model read it (session replay)."""
    return read_as(message.text, message.language, persona)
