"""The network side of a probe: plain asyncio + httpx, no Django.

`check_health` asks an OpenAI-compatible server for `/v1/models` and its kind's own health
routes and classifies the answer as the article reads it; `measure_speed` streams a short chat
completion (N at once for the concurrency probe); `probe_many` runs many probes concurrently,
each inside its own deadline, so one bad endpoint never delays the rest.

Safety rules kept here, where every request is made:
- only http/https URLs with a host (`validate_base_url`);
- redirects are followed only within the endpoint's own origin (scheme, host, port), never to
  another host, so the key goes to its own endpoint and nowhere else;
- bodies are read streamed and abandoned past `MAX_BODY_BYTES`;
- the key never appears in a result: error texts are scrubbed of it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

# Outcomes, as the article reads them (issue 5).
UP = "up"
LOADING = "loading"  # 503 while the weights load
DOWN = "down"  # connection refused / reset
AUTH_ERROR = "auth_error"  # 401/403: wrong key or missing `Bearer`
MODEL_MISSING = "model_missing"  # up, but the expected id is not listed
TIMEOUT = "timeout"
BAD_RESPONSE = "bad_response"  # not JSON, wrong shape, too large, a redirect elsewhere
STATUSES = (UP, LOADING, DOWN, AUTH_ERROR, MODEL_MISSING, TIMEOUT, BAD_RESPONSE)

# Server kinds, and the health routes each really serves (besides /v1/models).
VLLM = "vllm"
SGLANG = "sglang"
LLAMA_CPP = "llama_cpp"  # llama.cpp's native llama-server: /health answers 503 while loading
LLAMA_CPP_PYTHON = "llama_cpp_python"  # llama-cpp-python's server: no /health route
OLLAMA = "ollama"
HOSTED = "hosted"  # a hosted OpenAI-compatible API: /v1/models only
HEALTH_ROUTES: dict[str, tuple[str, ...]] = {
    VLLM: ("/health",),
    SGLANG: ("/health",),
    LLAMA_CPP: ("/health",),
    LLAMA_CPP_PYTHON: (),
    OLLAMA: ("/api/version", "/api/tags"),
    HOSTED: (),
}

# A model list is a few kB; a megabyte is already a misbehaving server.
MAX_BODY_BYTES = 1_000_000
# Same-origin redirects (a trailing slash, a path prefix) are followed this many times at most.
MAX_REDIRECTS = 3
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_CONCURRENCY = 100
SPEED_PROMPT = "Count from one to twenty in words."
USER_AGENT = "k3planner-probe/1"


# httpx logs every request at INFO; a sweep of 200 endpoints would write 400 lines every few
# seconds. Requests made by probes are dropped from that log (results are stored instead).
_probing = contextvars.ContextVar("probing", default=False)


class _QuietProbes(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _probing.get()


logging.getLogger("httpx").addFilter(_QuietProbes())


class ProbeFailure(Exception):
    """A request that ended in one of the outcomes above instead of a usable answer."""

    def __init__(self, status: str, error: str, http_status: int | None = None):
        super().__init__(error)
        self.status = status
        self.error = error
        self.http_status = http_status
        self.latency_ms: float | None = None  # set when an HTTP answer came back


def validate_base_url(url: str) -> str:
    """The normalised base URL, or ValueError saying what is wrong with it."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise ValueError(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("the URL must start with http:// or https://")
    if not parts.hostname:
        raise ValueError("the URL must name a host")
    if parts.username is not None or parts.password is not None:
        # Credentials in a URL end up in logs; keys go in the key field.
        raise ValueError("put the key in the key field, not in the URL")
    if parts.query or parts.fragment:
        raise ValueError("the base URL takes no query string or fragment")
    if port == 0:
        raise ValueError("port 0 is not a port")
    return url.rstrip("/")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _roots(base_url: str) -> tuple[str, str]:
    """(server root, OpenAI API root): a base URL may be given with or without its /v1."""
    base = base_url.rstrip("/")
    if base.endswith("/v1"):
        return base[: -len("/v1")], base
    return base, base + "/v1"


@dataclass(frozen=True)
class Target:
    """Where to probe and what to expect. `api_key` is kept out of repr and of every result."""

    base_url: str
    kind: str = HOSTED
    model_id: str = ""
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    ref: object = None  # the caller's handle (an endpoint id); passed through untouched

    @property
    def models_url(self) -> str:
        return _roots(self.base_url)[1] + "/models"

    @property
    def chat_url(self) -> str:
        return _roots(self.base_url)[1] + "/chat/completions"

    def health_urls(self) -> tuple[str, ...]:
        root = _roots(self.base_url)[0]
        return tuple(root + route for route in HEALTH_ROUTES.get(self.kind, ()))

    def scrub(self, text: str) -> str:
        if self.api_key:
            text = text.replace(self.api_key, "***")
        return text[:500]


@dataclass(frozen=True)
class HealthResult:
    status: str
    http_status: int | None = None
    latency_ms: float | None = None  # GET /v1/models, request to last byte
    models: tuple[str, ...] = ()
    error: str = ""
    health_http_status: int | None = None  # the kind's own health route, when it has one
    ref: object = None


@dataclass(frozen=True)
class SpeedResult:
    status: str
    http_status: int | None = None
    concurrency: int = 1
    ttft_ms: float | None = None  # mean over the streams
    tokens_per_s: float | None = None  # all streams together, decode only
    tokens_per_s_per_stream: float | None = None  # mean over the streams
    total_ms: float | None = None  # request to the end of the slowest stream
    prompt_tokens: int | None = None  # from the usage block, summed over the streams
    output_tokens: int | None = None
    error: str = ""
    ref: object = None


def _client(timeout_s: float, limits: httpx.Limits | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=False,
        limits=limits or httpx.Limits(max_connections=None, max_keepalive_connections=20),
        headers={"User-Agent": USER_AGENT},
        trust_env=False,  # an HTTP(S)_PROXY in the environment must not see the key
    )


def _headers(target: Target, url: str) -> dict[str, str]:
    # The key goes only to the endpoint's own origin; _send never leaves it, this double-checks.
    if target.api_key and _origin(url) == _origin(target.base_url):
        return {"Authorization": f"Bearer {target.api_key}"}
    return {}


def _classify_transport(target: Target, exc: Exception) -> ProbeFailure:
    text = target.scrub(f"{type(exc).__name__}: {exc}".rstrip(": "))
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return ProbeFailure(TIMEOUT, text)
    if isinstance(exc, httpx.ConnectError):
        return ProbeFailure(DOWN, f"connection refused or host unreachable ({text})")
    if isinstance(exc, httpx.ReadError | httpx.WriteError):
        return ProbeFailure(DOWN, f"connection reset ({text})")
    if isinstance(exc, httpx.RemoteProtocolError) and "disconnected" in str(exc).lower():
        return ProbeFailure(DOWN, text)  # closed before answering: a server going away
    return ProbeFailure(BAD_RESPONSE, text)


def _classify_http(target: Target, response: httpx.Response, body: bytes) -> ProbeFailure | None:
    code = response.status_code
    if code in (401, 403):
        return ProbeFailure(AUTH_ERROR, f"HTTP {code}: wrong key or missing Bearer", code)
    if code == 503:
        return ProbeFailure(LOADING, f"HTTP 503: {_short(target, body)}", code)
    if code in (502, 504):
        return ProbeFailure(DOWN, f"HTTP {code} from a proxy: the server behind it is down", code)
    if 300 <= code < 400:
        return ProbeFailure(BAD_RESPONSE, f"HTTP {code}: redirect not followed", code)
    if code >= 400:
        return ProbeFailure(BAD_RESPONSE, f"HTTP {code}: {_short(target, body)}", code)
    return None


def _short(target: Target, body: bytes) -> str:
    text = body[:200].decode("utf-8", "replace").strip()
    return target.scrub(" ".join(text.split())) or "(empty body)"


async def _send(
    client: httpx.AsyncClient,
    target: Target,
    method: str,
    url: str,
    payload: dict | None = None,
) -> httpx.Response:
    """Send, following redirects only within the endpoint's origin. The response is open."""
    for _ in range(MAX_REDIRECTS + 1):
        request = client.build_request(method, url, json=payload, headers=_headers(target, url))
        response = await client.send(request, stream=True)
        if response.status_code not in (301, 302, 303, 307, 308):
            return response
        location = response.headers.get("location", "")
        await response.aclose()
        next_url = urljoin(url, location)
        if _origin(next_url) != _origin(target.base_url):
            where = _origin(next_url)[1] or "nowhere"
            raise ProbeFailure(
                BAD_RESPONSE,
                f"HTTP {response.status_code}: redirect to another host ({where}) not followed",
                response.status_code,
            )
        if response.status_code == 303:
            method, payload = "GET", None
        url = next_url
    raise ProbeFailure(BAD_RESPONSE, f"more than {MAX_REDIRECTS} redirects")


async def _read_capped(response: httpx.Response) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise ProbeFailure(
            BAD_RESPONSE,
            f"response too large: {int(declared):,} bytes declared, limit {MAX_BODY_BYTES:,}",
            response.status_code,
        )
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ProbeFailure(
                BAD_RESPONSE,
                f"response too large: over {MAX_BODY_BYTES:,} bytes",
                response.status_code,
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def _get_json(
    client: httpx.AsyncClient, target: Target, url: str
) -> tuple[int, object, float]:
    """(HTTP code, parsed JSON, latency ms) of a 2xx answer, or ProbeFailure."""
    started = time.perf_counter()
    try:
        response = await _send(client, target, "GET", url)
        try:
            body = await _read_capped(response)
        finally:
            await response.aclose()
    except ProbeFailure:
        raise
    except (httpx.HTTPError, OSError, TimeoutError) as exc:
        raise _classify_transport(target, exc) from None
    latency_ms = (time.perf_counter() - started) * 1000
    failure = _classify_http(target, response, body)
    if failure is None:
        try:
            return response.status_code, json.loads(body), latency_ms
        except ValueError:
            failure = ProbeFailure(
                BAD_RESPONSE, f"not JSON: {_short(target, body)}", response.status_code
            )
    failure.latency_ms = latency_ms
    raise failure


def model_ids(data: object) -> tuple[str, ...]:
    """Ids in an OpenAI `/v1/models` answer or an Ollama `/api/tags` one; ValueError otherwise."""
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        items, keys = data["data"], ("id",)
    elif isinstance(data, dict) and isinstance(data.get("models"), list):
        items, keys = data["models"], ("name", "model")  # Ollama
    else:
        raise ValueError("expected an object with a 'data' list of models")
    ids: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("a model entry is not an object")
        for key in keys:
            if isinstance(item.get(key), str) and item[key] not in ids:
                ids.append(item[key])
    return tuple(ids)


async def check_health(client: httpx.AsyncClient, target: Target) -> HealthResult:
    """GET /v1/models and the kind's health routes, concurrently; classify the outcome."""
    try:
        async with asyncio.timeout(target.timeout_s):
            return await _check_health(client, target)
    except TimeoutError:
        return HealthResult(
            TIMEOUT, error=f"no complete answer within {target.timeout_s:g} s", ref=target.ref
        )


async def _check_health(client: httpx.AsyncClient, target: Target) -> HealthResult:
    urls = (target.models_url, *target.health_urls())
    answers = await asyncio.gather(
        *(_get_json(client, target, url) for url in urls), return_exceptions=True
    )
    models_answer, health_answers = answers[0], answers[1:]
    health_code = None
    extra_ids: list[str] = []
    for url, answer in zip(urls[1:], health_answers, strict=True):
        if isinstance(answer, ProbeFailure):
            health_code = health_code or answer.http_status
            # llama-server's /health answers 503 while the model loads, whatever /v1/models says.
            if answer.status == LOADING:
                return HealthResult(
                    LOADING, answer.http_status, None, (), answer.error, answer.http_status,
                    target.ref,
                )  # fmt: skip
        elif isinstance(answer, BaseException):
            raise answer
        else:
            health_code = health_code or answer[0]
            if url.endswith("/api/tags"):
                with contextlib.suppress(ValueError):  # a bad tag list: /v1/models decides
                    extra_ids.extend(model_ids(answer[1]))

    if isinstance(models_answer, ProbeFailure):
        if extra_ids and models_answer.status == BAD_RESPONSE:
            models_answer = None  # an Ollama too old for /v1/models: /api/tags lists them
        else:
            return HealthResult(
                models_answer.status, models_answer.http_status, models_answer.latency_ms, (),
                models_answer.error, health_code, target.ref,
            )  # fmt: skip
    elif isinstance(models_answer, BaseException):
        raise models_answer

    code, latency_ms, ids = health_code, None, list(extra_ids)
    if models_answer is not None:
        code, data, latency_ms = models_answer
        try:
            ids = list(dict.fromkeys([*model_ids(data), *extra_ids]))
        except ValueError as exc:
            return HealthResult(BAD_RESPONSE, code, latency_ms, (), str(exc), health_code,
                                target.ref)  # fmt: skip
    listed = tuple(ids)
    if target.model_id and target.model_id not in listed:
        shown = ", ".join(listed[:10]) or "none"
        return HealthResult(
            MODEL_MISSING, code, latency_ms, listed,
            target.scrub(f"{target.model_id!r} is not listed (listed: {shown})"),
            health_code, target.ref,
        )  # fmt: skip
    return HealthResult(UP, code, latency_ms, listed, "", health_code, target.ref)


@dataclass
class _Stream:
    first_token_s: float | None = None
    last_token_s: float | None = None
    end_s: float | None = None
    chunks: int = 0  # content deltas seen; the token count when the server sends no usage
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def tokens(self) -> int:
        return self.completion_tokens if self.completion_tokens is not None else self.chunks


def _is_token(delta: dict) -> bool:
    """Whether a stream delta carries a token.

    llama-cpp-python sends a token that ends mid-UTF-8 character as content "" (and sends no
    usage block), so an empty content is a token too — except on the opening chunk, where
    OpenAI, vLLM and SGLang send {"role": "assistant", "content": ""}.
    """
    for key in ("content", "reasoning_content"):
        text = delta.get(key)
        if isinstance(text, str) and (text or "role" not in delta):
            return True
    return False


async def _one_stream(
    client: httpx.AsyncClient, target: Target, max_tokens: int, started: float
) -> _Stream:
    payload = {
        "model": target.model_id or "default",
        "messages": [{"role": "user", "content": SPEED_PROMPT}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    stream = _Stream()
    try:
        response = await _send(client, target, "POST", target.chat_url, payload)
    except ProbeFailure:
        raise
    except (httpx.HTTPError, OSError) as exc:
        raise _classify_transport(target, exc) from None
    try:
        if response.status_code != 200:
            body = await _read_capped(response)
            failure = _classify_http(target, response, body)
            if failure is None:
                failure = ProbeFailure(
                    BAD_RESPONSE, f"HTTP {response.status_code}", response.status_code
                )
            # vLLM and SGLang answer an unknown model with 404 / 400 naming it.
            unknown_model = b"model" in body.lower() and response.status_code in (400, 404)
            if failure.status == BAD_RESPONSE and unknown_model:
                failure = ProbeFailure(MODEL_MISSING, failure.error, failure.http_status)
            raise failure
        size = 0
        async for line in response.aiter_lines():
            size += len(line)
            if size > MAX_BODY_BYTES:
                raise ProbeFailure(BAD_RESPONSE, "stream too large", 200)
            line = line.strip()
            if not line.startswith("data:"):
                continue
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                break
            try:
                event = json.loads(data)
            except ValueError:
                raise ProbeFailure(BAD_RESPONSE, "a stream event is not JSON", 200) from None
            if not isinstance(event, dict):
                raise ProbeFailure(BAD_RESPONSE, "a stream event is not an object", 200)
            now = time.perf_counter() - started
            for choice in event.get("choices") or []:
                delta = (choice or {}).get("delta") or {}
                if _is_token(delta):
                    stream.chunks += 1
                    if stream.first_token_s is None:
                        stream.first_token_s = now
                    stream.last_token_s = now
            usage = event.get("usage")
            if isinstance(usage, dict):
                if isinstance(usage.get("prompt_tokens"), int):
                    stream.prompt_tokens = usage["prompt_tokens"]
                if isinstance(usage.get("completion_tokens"), int):
                    stream.completion_tokens = usage["completion_tokens"]
    except ProbeFailure:
        raise
    except (httpx.HTTPError, OSError) as exc:
        raise _classify_transport(target, exc) from None
    finally:
        await response.aclose()
    stream.end_s = time.perf_counter() - started
    return stream


async def measure_speed(
    client: httpx.AsyncClient,
    target: Target,
    *,
    concurrency: int = 1,
    max_tokens: int = 32,
    timeout_s: float | None = None,
) -> SpeedResult:
    """Stream `concurrency` short chat completions at once and time them.

    Tokens/s is decode speed: (tokens − 1) over first to last token, so time to first token
    (prefill and queueing) is reported apart. For N streams, the tokens of all streams over the
    window from the earliest first token to the latest last token.
    """
    deadline = timeout_s or max(target.timeout_s, 30.0)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(deadline):
            streams = await asyncio.gather(
                *(_one_stream(client, target, max_tokens, started) for _ in range(concurrency))
            )
    except TimeoutError:
        error = f"streams not finished within {deadline:g} s"
        return SpeedResult(TIMEOUT, concurrency=concurrency, error=error, ref=target.ref)
    except ProbeFailure as failure:
        return SpeedResult(failure.status, failure.http_status, concurrency,
                           error=failure.error, ref=target.ref)  # fmt: skip
    total_ms = (time.perf_counter() - started) * 1000
    got = [s for s in streams if s.first_token_s is not None]
    if not got:
        return SpeedResult(BAD_RESPONSE, 200, concurrency, total_ms=total_ms,
                           error="the stream carried no tokens", ref=target.ref)  # fmt: skip
    per_stream = [
        (s.tokens - 1) / (s.last_token_s - s.first_token_s)
        for s in got
        if s.tokens > 1 and s.last_token_s > s.first_token_s
    ]
    window = max(s.last_token_s for s in got) - min(s.first_token_s for s in got)
    decoded = sum(max(s.tokens - 1, 0) for s in got)
    prompts = [s.prompt_tokens for s in got if s.prompt_tokens is not None]
    return SpeedResult(
        status=UP,
        http_status=200,
        concurrency=concurrency,
        ttft_ms=sum(s.first_token_s for s in got) / len(got) * 1000,
        tokens_per_s=decoded / window if window > 0 and decoded else None,
        tokens_per_s_per_stream=sum(per_stream) / len(per_stream) if per_stream else None,
        total_ms=total_ms,
        prompt_tokens=sum(prompts) if prompts else None,
        output_tokens=sum(s.tokens for s in got),
        ref=target.ref,
    )


async def probe_many_async(
    targets: Iterable[Target], *, concurrency: int = DEFAULT_CONCURRENCY
) -> list[HealthResult]:
    """Health-probe every target at once (at most `concurrency` in flight), in input order."""
    targets = list(targets)
    if not targets:
        return []
    _probing.set(True)  # this task and the ones it starts
    gate = asyncio.Semaphore(concurrency)
    longest = max(t.timeout_s for t in targets)
    async with _client(longest) as client:

        async def one(target: Target) -> HealthResult:
            async with gate:
                try:
                    return await check_health(client, target)
                except Exception as exc:  # a bug must not sink the other probes
                    return HealthResult(BAD_RESPONSE, error=target.scrub(repr(exc)),
                                        ref=target.ref)  # fmt: skip

        return await asyncio.gather(*(one(t) for t in targets))


def _run(coro):
    """asyncio.run, also from a thread whose event loop is already running (an async view,
    a test driving a browser): then in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def probe_many(
    targets: Iterable[Target], *, concurrency: int = DEFAULT_CONCURRENCY
) -> list[HealthResult]:
    return _run(probe_many_async(targets, concurrency=concurrency))


def probe_speed(target: Target, *, concurrency: int = 1, max_tokens: int = 32) -> SpeedResult:
    async def run() -> SpeedResult:
        _probing.set(True)
        limits = httpx.Limits(max_connections=concurrency + 1)
        async with _client(max(target.timeout_s, 30.0), limits) as client:
            return await measure_speed(
                client, target, concurrency=concurrency, max_tokens=max_tokens
            )

    return _run(run())
