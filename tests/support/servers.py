"""Language model servers on loopback for the remote-brain tests.

`LlamaServer`: the real thing, llama-cpp-python's own OpenAI-compatible server (`python -m
llama_cpp.server`, its `server` extra) on the embedded GGUF, verbose, its log kept in a file
(it reports prompt-cache reuse only there: "N prefix-match hit, remaining M prompt tokens").

`CppServer` and `RpcWorker`: llama.cpp's own `llama-server` and its distributed engine's worker
`ggml-rpc-server`, built from the sources llama-cpp-python vendors (`llama_cpp_bin`).

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

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _ServerProcess:
    """A server in a child process on a free loopback port, its output kept in `log`; ready
    once `ready_path` (under the root URL) answers, or, with no path, once the port accepts
    connections. Stopped with `stop()`. `nice` > 0: it runs at that lower CPU priority (a
    benchmark's stand-in for a server on another machine, which takes no cycles from the app)."""

    name = "server"

    def __init__(self, cmd: list[str], log: Path, port: int, ready_path: str | None, nice: int = 0) -> None:
        self.port, self.log = port, log
        self.root = f"http://127.0.0.1:{port}"
        self._out = open(log, "w")  # noqa: SIM115 (closed in stop)
        if nice:
            cmd = ["nice", "-n", str(nice), *cmd]
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                if ready_path is None:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return
                with urllib.request.urlopen(f"{self.root}{ready_path}", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{self.name} did not start:\n{log.read_text()[-2000:]}") from None
                time.sleep(0.2)

    def text(self) -> str:
        self._out.flush()
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._out.close()


class LlamaServer(_ServerProcess):
    name = "llama_cpp.server"

    def __init__(self, model: Path, log: Path, n_ctx: int = 2048, nice: int = 0) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/v1"
        cmd = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx),
            "--host", "127.0.0.1", "--port", str(port), "--n_threads", "2", "--verbose", "True",
        ]  # fmt: skip
        super().__init__(cmd, log, port, "/v1/models", nice)

    def prefix_hits(self) -> list[tuple[int, int]]:
        """(tokens reused from the cache, tokens evaluated) per request, in order."""
        found = re.findall(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens", self.text())
        return [(int(a), int(b)) for a, b in found]

    def completed(self) -> int:
        """Requests whose generation ran to its end (llama.cpp prints its timings then)."""
        return len(re.findall(r"llama_perf_context_print:\s+total time", self.text()))


def llama_cpp_bin() -> Path | None:
    """The folder with llama.cpp's own `llama-server` and `ggml-rpc-server`
    (packaging/build_llama_server.sh, which `make test` runs), or None when not built."""
    found = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build_llama_server.sh"), sys.executable, "--find"],
        capture_output=True, text=True,
    )  # fmt: skip
    return Path(found.stdout.strip()) if found.returncode == 0 else None


class CppServer(_ServerProcess):
    """llama.cpp's own `llama-server` on `model`: `n_ctx`, `slots` parallel conversations
    (`-np`), chunk reuse after a shift (`--cache-reuse`, 0 = off), `rpc` workers to run the
    model on (`host:port`, all layers offloaded to them). Its chat template is the model's
    (`--jinja`), as a user runs it; `extra`: more of its flags; `nice`: as `_ServerProcess`."""

    name = "llama-server"

    def __init__(
        self, bin_dir: Path, model: Path, log: Path, n_ctx: int = 1024, slots: int = 1,
        cache_reuse: int = 64, rpc: list[str] | None = None, threads: int = 2, extra: tuple[str, ...] = (),
        nice: int = 0,
    ) -> None:  # fmt: skip
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/v1"
        cmd = [
            str(bin_dir / "llama-server"), "-m", str(model), "-c", str(n_ctx * slots), "-np", str(slots),
            "--jinja", "--host", "127.0.0.1", "--port", str(port), "-t", str(threads),
            "--cache-reuse", str(cache_reuse), "--no-webui", *extra,
        ]  # fmt: skip
        if rpc:
            cmd += ["--rpc", ",".join(rpc), "-ngl", "99", "-lv", "4"]  # -lv 4: where each layer went
        super().__init__(cmd, log, port, "/health", nice)

    def props(self) -> dict:
        with urllib.request.urlopen(f"{self.root}/props", timeout=10) as response:
            return json.loads(response.read())

    def releases(self) -> list[int]:
        """Tokens in the slot when each request ended (prompt + generated), in order."""
        return [int(n) for n in re.findall(r"stop processing: n_tokens = (\d+)", self.text())]

    def cancels(self) -> int:
        return len(re.findall(r"cancel task", self.text()))


class RpcWorker(_ServerProcess):
    """llama.cpp's `ggml-rpc-server`: one machine's share of a model, here on loopback."""

    name = "ggml-rpc-server"

    def __init__(self, bin_dir: Path, log: Path, threads: int = 1) -> None:
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        cmd = [str(bin_dir / "ggml-rpc-server"), "-H", "127.0.0.1", "-p", str(port), "-t", str(threads)]
        super().__init__(cmd, log, port, None)  # it speaks no HTTP


class FaultServer:
    """Answers /v1/models with one model and /v1/chat/completions according to `mode`:
    "ok" (a short stream), "stall" (no byte for `stall_s`), "status:NNN", "drop" (two pieces,
    then the connection closes), "stall-after-first" (one piece, then silence for `stall_s`),
    "malformed" (a stream that is not JSON), "empty" (a stream that ends with no chunk, as
    llama-cpp-python's server answers a prompt over its context; "empty:N": N times, then "ok"),
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
                    left = int(mode[6:]) - 1 if mode.startswith("empty:") else 1
                    server.mode = mode if mode == "empty" else f"empty:{left}" if left else "ok"
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
