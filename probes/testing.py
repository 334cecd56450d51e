"""A misbehaving OpenAI-compatible server on loopback, for the tests and the benchmark.

It shows, on demand, the faults a real server cannot be made to show: slow headers, garbage
JSON, a 50 MB body, a connection that never answers, 503 while loading, a redirect to another
host. The first path segment picks the behaviour, so one server stands in for many endpoints:

    http://127.0.0.1:<port>/ok/<model>          lists <model>, streams tokens with usage
    http://127.0.0.1:<port>/hang                reads the request, never answers
    http://127.0.0.1:<port>/slow-headers/<s>    answers after <s> seconds
    http://127.0.0.1:<port>/hook/<code>         a webhook receiver answering <code>
    …                                           (see `_route`)

Every request is recorded (path, Host, Authorization) in `requests`, so a test can check where
a key went.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from dataclasses import dataclass

HUGE_BYTES = 50 * 1024 * 1024
STREAM_TOKENS = 12
STREAM_GAP_S = 0.01
PROMPT_TOKENS = 17


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    host: str
    authorization: str | None
    body: bytes = b""


class MisbehavingServer:
    """Runs an asyncio server in a thread; `with MisbehavingServer() as server: server.url(…)`."""

    def __init__(self, host: str = "127.0.0.1"):
        self.host = host
        self.port = 0
        self.requests: list[Seen] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="misbehaving-server", daemon=True)
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    def url(self, path: str = "") -> str:
        return f"http://{self.host}:{self.port}/{path.lstrip('/')}".rstrip("/")

    def start(self) -> MisbehavingServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the misbehaving server did not start")
        return self

    def stop(self) -> None:
        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._loop.is_running():
            self._loop.close()

    def __enter__(self) -> MisbehavingServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def seen(self, prefix: str) -> list[Seen]:
        return [r for r in list(self.requests) if r.path.startswith(prefix)]

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, self.host, 0, backlog=1024)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            while True:  # keep-alive: serve requests on this connection until it closes
                keep_open = await self._one_request(reader, writer)
                if not keep_open:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_request(self, reader, writer) -> bool:
        line = await reader.readline()
        if not line:
            return False
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers = {}
        while True:
            raw = await reader.readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        host, auth = headers.get("host", ""), headers.get("authorization")
        self.requests.append(Seen(method, path, host, auth, body))
        return await self._route(method, path, headers, body, writer)

    async def _route(self, method, path, headers, body, writer) -> bool:
        parts = path.split("?", 1)[0].strip("/").split("/")
        behaviour, rest = parts[0], parts[1:]
        tail = "/" + "/".join(rest)

        if behaviour == "ok":  # /ok/<model>[/v1/models | /v1/chat/completions | /health]
            model = rest[0] if rest else "tiny"
            if tail.endswith("/chat/completions") and method == "POST":
                await _stream_tokens(writer)
                return False
            if tail.endswith("/health"):
                return await _json(writer, 200, {"status": "ok"})
            return await _json(writer, 200, _models(model))
        if behaviour == "auth":  # /auth/<key>/<model>/...: 401 without `Bearer <key>`
            key, model = rest[0], rest[1]
            if headers.get("authorization") != f"Bearer {key}":
                return await _json(writer, 401, {"error": {"message": "Invalid API key"}})
            return await _json(writer, 200, _models(model))
        if behaviour == "hang":  # a connection that never answers
            await asyncio.sleep(3600)
        if behaviour == "slow-headers":  # /slow-headers/<seconds>
            await asyncio.sleep(float(rest[0]) if rest else 3600)
            return await _json(writer, 200, _models("tiny"))
        if behaviour == "drip":  # headers at once, then a byte every 0.2 s, forever
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.2)
        if behaviour == "reset":  # closes without answering
            return False
        if behaviour == "garbage":
            return await _raw(writer, 200, b"<html>{not json at all", "application/json")
        if behaviour == "wrong-shape":
            return await _json(writer, 200, {"models_are": "elsewhere"})
        if behaviour == "huge":  # 50 MB, declared up front
            await _huge(writer, chunked=False)
            return False
        if behaviour == "huge-chunked":  # 50 MB, no length given: only reading it tells
            await _huge(writer, chunked=True)
            return False
        if behaviour == "loading":  # llama-server while it loads: 503 everywhere
            return await _json(writer, 503, {"error": {"code": 503, "message": "Loading model"}})
        if behaviour == "loading-health":  # /health says loading, /v1/models already lists
            if tail.endswith("/health"):
                return await _json(writer, 503, {"error": {"message": "Loading model"}})
            return await _json(writer, 200, _models(rest[0]))
        if behaviour == "status":  # /status/<code>
            return await _json(writer, int(rest[0]), {"error": {"message": "as asked"}})
        if behaviour == "redirect-away":  # to another host (localhost is not 127.0.0.1)
            where = f"http://localhost:{writer.get_extra_info('sockname')[1]}/ok/tiny{tail}"
            return await _redirect(writer, where)
        if behaviour == "redirect-same":  # within the origin: followed
            return await _redirect(writer, f"/ok/{rest[0]}/v1/models")
        if behaviour == "ollama":  # an Ollama too old for /v1/models
            model = rest[0]
            if tail.endswith("/api/tags"):
                return await _json(writer, 200, {"models": [{"name": model, "model": model}]})
            if tail.endswith("/api/version"):
                return await _json(writer, 200, {"version": "0.1.30"})
            return await _json(writer, 404, {"error": "not found"})
        if behaviour == "bad-stream":  # chat stream events that are not JSON
            writer.write(_head(200, "text/event-stream", None))
            writer.write(b"data: {half an event\n\n")
            await writer.drain()
            return False
        if behaviour == "hook":  # a webhook receiver: /hook/<code>
            return await _json(writer, int(rest[0]) if rest else 200, {"ok": True})
        if behaviour == "echo-key":  # reflects the Authorization header in an error
            auth = headers.get("authorization", "")
            return await _raw(writer, 400, f"bad request with {auth}".encode(), "text/plain")
        return await _json(writer, 404, {"error": "no such behaviour"})


def _models(model: str) -> dict:
    return {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "test"}]}


def _head(code: int, content_type: str, length: int | None) -> bytes:
    reason = {200: "OK", 302: "Found", 401: "Unauthorized", 404: "Not Found",
              503: "Service Unavailable"}.get(code, "Status")  # fmt: skip
    lines = [f"HTTP/1.1 {code} {reason}", f"Content-Type: {content_type}"]
    if length is None:
        lines.append("Connection: close")
    else:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _raw(writer, code: int, body: bytes, content_type: str) -> bool:
    writer.write(_head(code, content_type, len(body)) + body)
    await writer.drain()
    return True


async def _json(writer, code: int, payload: object) -> bool:
    return await _raw(writer, code, json.dumps(payload).encode(), "application/json")


async def _redirect(writer, location: str) -> bool:
    writer.write(
        f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n".encode()
    )
    await writer.drain()
    return True


async def _huge(writer, *, chunked: bool) -> None:
    block = b"[" + b"0," * 32767 + b"0]"
    if chunked:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
    else:
        writer.write(_head(200, "application/json", HUGE_BYTES))
    sent = 0
    while sent < HUGE_BYTES:
        piece = block[: HUGE_BYTES - sent]
        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
        await writer.drain()
        sent += len(piece)
    if chunked:
        writer.write(b"0\r\n\r\n")
    await writer.drain()


async def _stream_tokens(writer) -> None:
    """A vLLM-like stream: role chunk, STREAM_TOKENS tokens, a usage block, [DONE]."""
    writer.write(_head(200, "text/event-stream", None))

    async def event(payload: dict) -> None:
        writer.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        await writer.drain()

    await event({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    for i in range(STREAM_TOKENS):
        await asyncio.sleep(STREAM_GAP_S)
        await event({"choices": [{"index": 0, "delta": {"content": f" t{i}"}}]})
    await event({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    await event(
        {
            "choices": [],
            "usage": {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": STREAM_TOKENS,
                "total_tokens": PROMPT_TOKENS + STREAM_TOKENS,
            },
        }
    )
    writer.write(b"data: [DONE]\n\n")
    await writer.drain()
