"""Memory across conversations (off unless the user turns it on).

One private file (`memory.json`, 0600, written atomically) holds the facts the user stated in
any conversation while sharing is on: by key, the latest statement winning, as in one
conversation's note (memory.py). A brain given a `SharedMemory` reads them as said before its
own history (its own statements replace them by key), so a new conversation's first note
already knows the user's name; each user turn it keeps adds its facts to the file; Forget takes
a fact out of the file too. A missing file is empty; an unreadable one is set aside as
`memory.json.bad` and logged (nothing the user said in a conversation is lost: those stay in
its history).

Owned by the brain's thread (the llm thread); file I/O happens on a user turn that states a
fact, on Forget and when a conversation opens.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from app.brain.facts import Fact
from app.brain.memory import facts_in, known_facts
from app.brain.records import Message
from app.system.paths import private_dir, write_private

log = logging.getLogger(__name__)


class SharedMemory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._facts: dict[str, Fact] = {}
        self.reload()

    def reload(self) -> None:
        """Read the file again (another conversation may have added to it)."""
        self._facts = {}
        if not self.path.exists():
            return
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))["facts"]
            facts = [Fact(str(i["key"]), str(i["kind"]), str(i["value"]), str(i["sentence"])) for i in items]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            bad = self.path.with_name(self.path.name + ".bad")
            log.warning("shared memory %s unreadable (%s): kept aside as %s", self.path, exc, bad.name)
            self.path.replace(bad)
            return
        self._facts = {f.key: f for f in facts}

    @property
    def facts(self) -> list[Fact]:
        """Oldest first."""
        return list(self._facts.values())

    def learn(self, facts: Iterable[Fact]) -> None:
        """Keep `facts` (a later one replaces an earlier one with its key); written when changed."""
        changed = False
        for fact in facts:
            if self._facts.get(fact.key) != fact or list(self._facts)[-1:] != [fact.key]:
                self._facts.pop(fact.key, None)
                self._facts[fact.key] = fact
                changed = True
        if changed:
            self._save()

    def forget(self, key: str) -> None:
        if self._facts.pop(key, None) is not None:
            self._save()

    def _save(self) -> None:
        items = [{"key": f.key, "kind": f.kind, "value": f.value, "sentence": f.sentence} for f in self.facts]
        try:
            private_dir(self.path.parent)
            write_private(self.path, json.dumps({"facts": items}, ensure_ascii=False, indent=1))
        except OSError as exc:
            log.warning("shared memory %s not written: %s", self.path, exc)


def remembered(
    memory: bool, history: list[Message], forgotten: set[str], shared: SharedMemory | None
) -> list[Fact]:
    """What a brain's memory note holds: its history's facts after the shared ones (none with
    memory off). Both brains answer `remembered()` with this."""
    if not memory:
        return []
    return known_facts(history, forgotten, shared.facts if shared is not None else ())


def learn_from(shared: SharedMemory | None, memory: bool, user_text: str) -> None:
    """A user turn was kept: its facts join the shared memory (when sharing and memory are on)."""
    if shared is not None and memory:
        shared.learn(facts_in(user_text))


def join(shared: SharedMemory, memory: bool, history: list[Message], forgotten: set[str]) -> None:
    """Sharing turned on: a conversation's own facts join the shared ones (with memory on)."""
    if memory:
        shared.learn(known_facts(history, forgotten))
