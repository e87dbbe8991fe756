"""Brain: user text in, reply text out, from one persistent llama context.

Takes: a user turn's text. Gives: the reply as streamed text pieces, per-turn stats, context
counters, and sessions saved and resumed from disk. Holds the chat format (the model's own
template as per-turn segments), the token ledger and the whole-turn KV shift, the persona, and
the history export.
Threads: not thread-safe; exactly one thread (the loop's llm worker, or a CLI's main thread)
owns a `Conversation` for its life; `cancel()` is the one call allowed from elsewhere.
Imports only the catalog.
"""
