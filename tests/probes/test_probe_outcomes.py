"""The outcome of a health probe, as the article reads it, for every way a server can answer.

Faults come from the misbehaving server on loopback; no mocks. The happy path against a real
server is in test_probe_llama_server.py.
"""

import time

import pytest
from probe_helpers import closed_port

from probes import probe

TIMEOUT_S = 1.0

# (path on the misbehaving server, kind, expected outcome, HTTP code, words in the error)
OUTCOMES = [
    ("ok/tiny", probe.HOSTED, probe.UP, 200, ""),
    ("ok/renamed-checkpoint", probe.HOSTED, probe.MODEL_MISSING, 200, "'tiny' is not listed"),
    ("auth/right-key/tiny", probe.HOSTED, probe.AUTH_ERROR, 401, "wrong key or missing Bearer"),
    ("status/403", probe.HOSTED, probe.AUTH_ERROR, 403, "wrong key"),
    ("loading", probe.VLLM, probe.LOADING, 503, "Loading model"),
    ("loading-health/tiny", probe.LLAMA_CPP, probe.LOADING, 503, "Loading model"),
    ("status/502", probe.HOSTED, probe.DOWN, 502, "down"),
    ("reset", probe.HOSTED, probe.DOWN, None, "disconnected"),
    ("hang", probe.HOSTED, probe.TIMEOUT, None, "within 1 s"),
    ("slow-headers/30", probe.HOSTED, probe.TIMEOUT, None, "within 1 s"),
    ("drip", probe.HOSTED, probe.TIMEOUT, None, "within 1 s"),
    ("garbage", probe.HOSTED, probe.BAD_RESPONSE, 200, "not JSON"),
    ("wrong-shape", probe.HOSTED, probe.BAD_RESPONSE, 200, "'data' list"),
    ("huge", probe.HOSTED, probe.BAD_RESPONSE, 200, "too large"),
    ("huge-chunked", probe.HOSTED, probe.BAD_RESPONSE, 200, "too large"),
    ("status/404", probe.HOSTED, probe.BAD_RESPONSE, 404, "HTTP 404"),
    ("status/500", probe.HOSTED, probe.BAD_RESPONSE, 500, "HTTP 500"),
    ("redirect-away", probe.HOSTED, probe.BAD_RESPONSE, 302, "another host (localhost)"),
    ("redirect-same/tiny", probe.HOSTED, probe.UP, 200, ""),
    ("ollama/tiny", probe.OLLAMA, probe.UP, 200, ""),
]


@pytest.mark.parametrize(("path", "kind", "status", "http_status", "words"), OUTCOMES)
def test_it_classifies_the_answer(misbehaving, path, kind, status, http_status, words):
    target = probe.Target(misbehaving.url(path), kind=kind, model_id="tiny", timeout_s=TIMEOUT_S)

    [result] = probe.probe_many([target])

    assert (result.status, result.http_status) == (status, http_status), result.error
    assert words in result.error


def test_it_reads_connection_refused_as_down():
    target = probe.Target(f"http://127.0.0.1:{closed_port()}", model_id="tiny", timeout_s=2)

    [result] = probe.probe_many([target])

    assert result.status == probe.DOWN
    assert "connection refused" in result.error


def test_it_lists_the_models_and_times_the_answer(misbehaving):
    [result] = probe.probe_many([probe.Target(misbehaving.url("ok/tiny"), model_id="tiny")])

    assert result.models == ("tiny",)
    assert 0 < result.latency_ms < 1000


def test_it_stops_reading_a_50_mb_body_early(misbehaving):
    target = probe.Target(misbehaving.url("huge-chunked"), model_id="tiny", timeout_s=10)
    started = time.perf_counter()

    [result] = probe.probe_many([target])

    assert result.status == probe.BAD_RESPONSE
    assert "over 1,000,000 bytes" in result.error
    assert time.perf_counter() - started < 5


def test_one_bad_endpoint_never_delays_the_rest(misbehaving):
    hanging = [probe.Target(misbehaving.url("hang"), timeout_s=2, ref=i) for i in range(20)]
    good = [probe.Target(misbehaving.url("ok/tiny"), model_id="tiny", timeout_s=2, ref="good")]
    started = time.perf_counter()

    results = probe.probe_many([*hanging, *good])

    elapsed = time.perf_counter() - started
    assert [r.status for r in results] == [probe.TIMEOUT] * 20 + [probe.UP]
    assert results[-1].latency_ms < 1000  # answered while the others hung
    assert elapsed < 2 + 1.5  # all at once: one timeout, not twenty


def test_it_keeps_the_input_order_and_passes_refs_through(misbehaving):
    targets = [
        probe.Target(misbehaving.url(p), model_id="tiny", timeout_s=1, ref=p)
        for p in ("garbage", "ok/tiny", "hang", "loading")
    ]

    results = probe.probe_many(targets)

    assert [r.ref for r in results] == ["garbage", "ok/tiny", "hang", "loading"]


# The key goes to its own endpoint and nowhere else.


def test_it_sends_the_key_as_a_bearer_token(misbehaving):
    target = probe.Target(misbehaving.url("auth/k-123/tiny"), model_id="tiny", api_key="k-123")

    [result] = probe.probe_many([target])

    assert result.status == probe.UP


def test_it_does_not_follow_a_redirect_to_another_host(misbehaving):
    target = probe.Target(misbehaving.url("redirect-away"), model_id="tiny", api_key="k-away")

    [result] = probe.probe_many([target])

    assert result.status == probe.BAD_RESPONSE
    assert not [r for r in misbehaving.requests if r.host.startswith("localhost")]
    assert not [r for r in misbehaving.requests if r.authorization == "Bearer k-away"][1:]


def test_it_follows_a_redirect_within_the_origin_with_the_key(misbehaving):
    target = probe.Target(misbehaving.url("redirect-same/tiny"), model_id="tiny", api_key="k-s")

    [result] = probe.probe_many([target])

    assert result.status == probe.UP
    followed = [r for r in misbehaving.seen("/ok/tiny") if r.authorization == "Bearer k-s"]
    assert len(followed) == 1


def test_it_never_repeats_the_key_in_an_error(misbehaving):
    target = probe.Target(misbehaving.url("echo-key"), model_id="tiny", api_key="sk-secret-99")

    [result] = probe.probe_many([target])

    assert "sk-secret-99" not in result.error
    assert "Bearer ***" in result.error


def test_it_keeps_the_key_out_of_the_targets_repr():
    target = probe.Target("http://127.0.0.1:1", api_key="sk-secret-99")

    assert "sk-secret-99" not in repr(target)


# URLs are validated before anything is sent.

GOOD_URLS = [
    ("http://10.0.0.5:8000", "http://10.0.0.5:8000"),
    ("https://api.example.com/v1/", "https://api.example.com/v1"),
    ("  http://gpu-box.lan:11434  ", "http://gpu-box.lan:11434"),
]
BAD_URLS = [
    ("ftp://example.com", "http:// or https://"),
    ("file:///etc/passwd", "http:// or https://"),
    ("http://", "must name a host"),
    ("example.com:8000", "http:// or https://"),
    ("http://user:pw@example.com", "key field"),
    ("http://example.com/?x=1", "no query"),
    ("http://example.com:99999", "not a valid URL"),
    ("", "http:// or https://"),
]


@pytest.mark.parametrize(("url", "normalised"), GOOD_URLS)
def test_it_accepts_http_and_https_urls(url, normalised):
    assert probe.validate_base_url(url) == normalised


@pytest.mark.parametrize(("url", "reason"), BAD_URLS)
def test_it_rejects_other_urls(url, reason):
    with pytest.raises(ValueError, match=reason.replace("?", r"\?")):
        probe.validate_base_url(url)


@pytest.mark.parametrize(
    ("base", "models_url", "health"),
    [
        ("http://h:8000", "http://h:8000/v1/models", ("http://h:8000/health",)),
        ("http://h:8000/v1", "http://h:8000/v1/models", ("http://h:8000/health",)),
        ("http://h:8000/proxy/v1/", "http://h:8000/proxy/v1/models", ("http://h:8000/proxy/health",)),
    ],
)  # fmt: skip
def test_a_base_url_may_carry_its_v1(base, models_url, health):
    target = probe.Target(base, kind=probe.VLLM)

    assert (target.models_url, target.health_urls()) == (models_url, health)


@pytest.mark.parametrize(
    ("kind", "routes"),
    [
        (probe.VLLM, ("/health",)),
        (probe.SGLANG, ("/health",)),
        (probe.LLAMA_CPP, ("/health",)),
        (probe.LLAMA_CPP_PYTHON, ()),  # llama-cpp-python's server has no /health
        (probe.OLLAMA, ("/api/version", "/api/tags")),
        (probe.HOSTED, ()),
    ],
)
def test_each_kind_is_asked_what_it_really_serves(kind, routes):
    target = probe.Target("http://h", kind=kind)

    assert target.health_urls() == tuple("http://h" + r for r in routes)
