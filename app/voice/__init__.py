"""Voice: reply text in, sound out.

Takes: streamed reply text. Gives: speakable sentences (markdown, URLs and emoji made speakable,
cut as soon as each is complete), espeak-ng PCM synthesized in memory, and playback through
sounddevice that `stop()` ends within milliseconds (or an external speak command, talk-llama's
`-s`). Reports sentence started/finished and queue-empty events.
Threads: the `Speaker` owns a synthesis thread and a playback thread; `say()`/`stop()` may be
called from any thread. Imports no other stage (only `app.system.sound_devices`).
"""
