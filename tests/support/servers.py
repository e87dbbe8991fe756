"""Language model servers on loopback for the remote-brain tests.

`LlamaServer`: the real thing, llama-cpp-python's own OpenAI-compatible server (`python -m
llama_cpp.server`, its `server` extra) on the embedded GGUF, verbose, its log kept in a file
(it reports prompt-cache reuse only there: "N prefix-match hit, remaining M prompt tokens").

`FaultServer`: a small stand-in that misbehaves on purpose (stalls, HTTP errors, a stream
dropped mid-reply, a malformed stream), for the failure paths no real server shows on demand.
It is labelled as such; the normal path is tested against `LlamaServer`.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, model: Path, log: Path, n_ctx: int = 2048) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx),
            "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", "2", "--verbose", "True",
        ]  # fmt: skip
        self._out = open(log, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"llama_cpp.server did not start:\n{log.read_text()[-2000:]}"
                    ) from None
                time.sleep(0.2)

    def text(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")

    def prefix_hits(self) -> list[tuple[int, int]]:
        """(tokens reused from the cache, tokens evaluated) per request, in order."""
        found = re.findall(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens", self.text())
        return [(int(a), int(b)) for a, b in found]

    def completed(self) -> int:
        """Requests whose generation ran to its end (llama.cpp prints its timings then)."""
        return len(re.findall(r"llama_perf_context_print:\s+total time", self.text()))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._out.close()


class FaultServer:
    """Answers /v1/models with one model and /v1/chat/completions according to `mode`:
    "ok" (a short stream), "stall" (no byte for `stall_s`), "status:NNN", "drop" (two pieces,
    then the connection closes), "stall-after-first" (one piece, then silence for `stall_s`),
    "malformed" (a stream that is not JSON), "empty" (a stream that ends with no chunk, as
    llama-cpp-python's server answers a prompt over its context; "empty-once": once, then "ok"),
    "context:N" (once, llama-server's 400 for a prompt over a context of N tokens; then "ok")."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.stall_s = 5.0
        self.requests = 0
        self.bodies: list[dict] = []  # the chat requests received, as sent
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _json(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.endswith("/v1/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fault", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                server.requests += 1
                server.bodies.append(json.loads(raw or b"{}"))
                mode = server.mode
                if mode == "stall":
                    time.sleep(server.stall_s)
                    return
                if mode.startswith("context:"):
                    server.mode = "ok"
                    error = {
                        "code": 400, "message": "the request exceeds the available context size",
                        "type": "exceed_context_size_error", "n_prompt_tokens": 9999, "n_ctx": int(mode[8:]),
                    }  # fmt: skip
                    self._json(400, {"error": error})
                    return
                if mode.startswith("status:"):
                    code = int(mode.split(":")[1])
                    self._json(code, {"error": {"message": f"test error {code}", "code": code}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if mode.startswith("empty"):
                    server.mode = "ok" if mode == "empty-once" else mode
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                if mode == "malformed":
                    self.wfile.write(b"data: {this is not json\n\n")
                    self.wfile.flush()
                    return
                for word, end in [
                    ("Hello", None),
                    (" there", None),
                    (",", None),
                    (" friend", None),
                    (".", "stop"),
                ]:
                    chunk = {
                        "id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fault",
                        "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": end}],
                    }  # fmt: skip
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    if mode == "stall-after-first":
                        time.sleep(server.stall_s)
                        return
                    if mode == "drop" and word == " there":
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                self.wfile.write(b"data: [DONE]\n\n")

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fault-server").start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
