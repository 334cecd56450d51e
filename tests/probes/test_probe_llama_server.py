"""Against a real OpenAI-compatible server: llama-cpp-python serving a tiny GGUF on loopback.

No mocks on the happy path: up, model missing, streamed tokens, auth errors, and down after
the server stops.
"""

import httpx
import pytest

from probes import probe

KIND = probe.LLAMA_CPP_PYTHON


def target_for(server, **overrides) -> probe.Target:
    fields = {"base_url": server.base_url, "kind": KIND, "model_id": server.model_id}
    return probe.Target(**{**fields, "timeout_s": 10, **overrides})


def test_it_is_up_when_the_server_lists_the_model(llama_server):
    [result] = probe.probe_many([target_for(llama_server)])

    assert result.status == probe.UP, result.error
    assert result.http_status == 200
    assert result.models == ("tiny-llama",)
    assert result.health_http_status is None  # this kind has no /health: not asked


def test_it_is_model_missing_when_the_id_changed(llama_server):
    [result] = probe.probe_many([target_for(llama_server, model_id="tiny-llama-v2")])

    assert result.status == probe.MODEL_MISSING
    assert result.models == ("tiny-llama",)
    assert "'tiny-llama-v2' is not listed (listed: tiny-llama)" in result.error


def test_the_wrong_kind_still_reads_v1_models(llama_server):
    # Told it is llama.cpp's native server, the probe also asks /health, which llama-cpp-python
    # does not serve (404); /v1/models still decides.
    [result] = probe.probe_many([target_for(llama_server, kind=probe.LLAMA_CPP)])

    assert (result.status, result.health_http_status) == (probe.UP, 404)


def test_it_measures_real_streamed_tokens(llama_server):
    result = probe.probe_speed(target_for(llama_server), max_tokens=16)

    assert result.status == probe.UP, result.error
    # The same request unstreamed (greedy, so the same tokens): the server's own count.
    # llama-cpp-python may run past max_tokens to finish a UTF-8 character, so it is not 16.
    usage = httpx.post(
        f"{llama_server.base_url}/v1/chat/completions",
        json={"model": "tiny-llama", "max_tokens": 16, "temperature": 0,
              "messages": [{"role": "user", "content": probe.SPEED_PROMPT}]},
        timeout=30,
    ).json()["usage"]  # fmt: skip
    assert result.output_tokens == usage["completion_tokens"] >= 2
    assert result.tokens_per_s > 0
    assert 0 < result.ttft_ms < result.total_ms
    assert result.prompt_tokens is None  # llama-cpp-python sends no usage block when streaming


def test_it_measures_parallel_streams(llama_server):
    result = probe.probe_speed(target_for(llama_server), concurrency=2, max_tokens=8)

    assert result.status == probe.UP, result.error
    assert result.concurrency == 2
    assert result.output_tokens >= 4
    assert result.tokens_per_s > 0


@pytest.mark.parametrize(
    ("api_key", "status"),
    [
        (None, probe.AUTH_ERROR),  # missing Bearer
        ("sk-wrong", probe.AUTH_ERROR),  # wrong key
        ("sk-test-only-4f1c", probe.UP),
    ],
)
def test_a_server_that_wants_a_key(llama_server_with_key, api_key, status):
    [result] = probe.probe_many([target_for(llama_server_with_key, api_key=api_key)])

    assert result.status == status, result.error
    if status == probe.AUTH_ERROR:
        assert result.http_status == 401


def test_the_speed_probe_sends_the_key_too(llama_server_with_key):
    target = target_for(llama_server_with_key, api_key=llama_server_with_key.api_key)

    assert probe.probe_speed(target, max_tokens=4).status == probe.UP
    assert probe.probe_speed(target_for(llama_server_with_key), max_tokens=4).status == (
        probe.AUTH_ERROR
    )


def test_it_is_down_once_the_server_stops(own_llama_server):
    target = target_for(own_llama_server)
    assert probe.probe_many([target])[0].status == probe.UP

    own_llama_server.stop()

    [result] = probe.probe_many([target])
    assert result.status == probe.DOWN
    assert "connection refused" in result.error
    assert probe.probe_speed(target).status == probe.DOWN
