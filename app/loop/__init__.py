"""The loop: ears, brain and voice joined into the assistant, talk-llama's main loop.

Takes: user intents from a front end (press/release, typed text, stop, settings). Gives: `State`
changes and `Event`s (transcripts, reply tokens, spoken sentences, per-turn latency reports,
errors in words) through one callback; it never imports a front end or Qt.
Threads: the `Assistant` owns a whisper worker and an llm worker (the only thread that touches
the Conversation); the Speaker and the Microphone own their own. Events arrive on those threads;
front ends hand them to their own thread (the GUI through a Qt signal). Also holds the persisted
user settings and how they become an assistant configuration.
"""
