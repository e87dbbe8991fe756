"""Does a user turn ask the assistant's name?

The persona's name is configuration the app knows; the 135M model recalls it from a system
prompt hundreds or thousands of tokens back, and after 100 turns it answered "I am Aurora" or
"I'm a language AI" in 1 of 4 long conversations at n_ctx 512 and 4096 (bench/memory), with
the name in the system prompt and again in the memory note. So the reply to a turn that asks
the name starts with the answer in the question's language ("My name is Aria.", "Je m'appelle
Aria."): `Conversation.stream` forces those tokens, as it does for a repeat request
(repeat_request.py), and the model goes on from there.

Narrow on purpose: the whole turn is the question, perhaps after a greeting or "so" and before
"again" or "please" ("Hey, what's your name again?"); "What is my name?", "What does your name
mean?" and a question with more after it are left to the model. English, French, German,
Spanish, Italian, Portuguese and Russian, as whisper writes them (any case, with or without the
question mark). A question asked another way ("who am I talking to?") is the model's to answer.
Pure functions; any thread.
"""

from __future__ import annotations

import re

# (the question's forms in one language, the answer's form in it)
_ASKS: tuple[tuple[str, str], ...] = (
    (
        r"what(?:'s| is) your name|what are you called|what (?:should|do|can) i call you"
        r"|tell me your name|(?:may|can|could) i (?:ask|know|have) your name|do you have a name",
        "My name is {bot}.",
    ),
    (
        r"comment (?:tu t'appelles|t'appelles[- ]tu|vous appelez[- ]vous|vous vous appelez)"
        r"|quel est (?:ton|votre) nom|c'est quoi ton nom",
        "Je m'appelle {bot}.",
    ),
    (r"wie hei(?:ß|ss)(?:t du|en sie)|(?:wie|was) ist (?:dein|ihr) name", "Ich heiße {bot}."),
    (r"c[óo]mo te llamas|c[óo]mo se llama(?: usted)?|cu[áa]l es (?:tu|su) nombre", "Me llamo {bot}."),
    (r"come ti chiami|come si chiama|qual(?: è|'è| e) il tuo nome", "Mi chiamo {bot}."),
    (r"qual (?:é|e) o (?:seu|teu) nome|como (?:você|voce|tu) se chama|como te chamas", "Meu nome é {bot}."),
    (r"как (?:тебя|вас) зовут|как тво[её] имя", "Меня зовут {bot}."),
)
_LEAD = (
    r"(?:hey|hi|hello|so|and|ok|okay|oh|well|please|sorry|by the way|salut|bonjour|et|alors|hallo|"
    r"und|also|hola|y|ciao|e|allora|oi|olá|ola|привет|а|так)"
)
_TAIL = (
    r"(?:again|please|then|by the way|déjà|encore|nochmal|noch mal|denn|otra vez|di nuovo|de novo|"
    r"ещё|еще|снова)"
)
_QUESTIONS = tuple(
    (re.compile(rf"^[\s¿¡]*(?:{_LEAD}[\s,]+)*(?:{forms})(?:[\s,]+{_TAIL})*[\s?.!]*$", re.IGNORECASE), answer)
    for forms, answer in _ASKS
)


def own_name_reply(text: str, bot: str) -> str | None:
    """The answer a turn that asks the assistant's name starts with ("My name is Aria."), in
    the question's language; None when `text` asks something else or `bot` is empty."""
    name = bot.strip()
    if not name:
        return None
    for question, answer in _QUESTIONS:
        if question.match(text):
            return answer.format(bot=name)
    return None
