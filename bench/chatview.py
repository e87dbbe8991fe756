"""The conversation view with a long conversation: how long the window takes to show 1000
messages, and to redraw while a reply streams into it. Baseline in the same run: the same view
redrawing the whole conversation each time (what it did before it learned to redraw only the
newest message). Offscreen Qt, the real ChatView and ChatFeed.
Run: .venv/bin/python -m bench.chatview [--messages 1000]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench.common import emit, pct

REPLY = "Here is **a plan**:\n\n- first, `pack`\n- then go.\n\nThat is all for today, I think."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    from app.brain.records import Message
    from app.gui.chat_feed import ChatFeed
    from app.gui.chat_view import ChatView
    from app.loop.events import History, Token, UserTurn

    app = QApplication([])
    msgs = [
        Message("assistant", REPLY) if i % 2 else Message("user", f"Question {i}?")
        for i in range(args.messages)
    ]
    opens, redraws, full = [], [], []
    for _ in range(args.repeats):
        view = ChatView("Sam", "Max")
        view.resize(760, 600)
        view.show()
        feed = ChatFeed(view)
        t0 = time.perf_counter()
        feed.handle(History(tuple(msgs)))
        app.processEvents()
        opens.append((time.perf_counter() - t0) * 1000)
        feed.handle(UserTurn("One more?"))
        view.redraw()
        for k in range(8):
            feed.handle(Token(f" word{k} **bold**"))
            t0 = time.perf_counter()
            view.redraw()
            redraws.append((time.perf_counter() - t0) * 1000)
            feed.handle(Token(" more"))
            view._tail = None  # the baseline: the whole conversation again
            t0 = time.perf_counter()
            view.redraw()
            full.append((time.perf_counter() - t0) * 1000)
        view.close()
    out = {
        "messages": args.messages,
        "open_ms_p50": round(pct(opens, 50), 1),
        "redraw_ms_p50": round(pct(redraws, 50), 1),
        "full_redraw_ms_p50": round(pct(full, 50), 1),
    }
    out["redraw_speedup"] = round(out["full_redraw_ms_p50"] / out["redraw_ms_p50"], 1)
    emit("chatview", out)


if __name__ == "__main__":
    main()
