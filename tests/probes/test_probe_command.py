"""`manage.py probe [NAME] [--speed]`: probe now and print what was found."""

import pytest
from django.core.management import CommandError, call_command

from probes.models import ProbeResult

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("probe", *args, stdout=out)
    return out.getvalue()


def test_it_probes_every_enabled_endpoint(make_endpoint, llama_server, misbehaving):
    make_endpoint(name="tiny", base_url=llama_server.base_url)
    make_endpoint(name="renamed", base_url=llama_server.base_url, model_id="tiny-llama-v2")
    make_endpoint(name="broken", base_url=misbehaving.url("garbage"))
    make_endpoint(name="paused", base_url=misbehaving.url("garbage"), enabled=False)

    out = run()

    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("infra/broken") and "bad_response" in lines[0]
    assert lines[1].startswith("infra/renamed") and "model_missing" in lines[1]
    assert lines[2].startswith("infra/tiny") and " up " in lines[2] and "HTTP 200" in lines[2]
    assert ProbeResult.objects.count() == 3


def test_it_probes_one_by_name_with_speed(make_endpoint, llama_server):
    make_endpoint(name="tiny", base_url=llama_server.base_url)
    make_endpoint(name="other", base_url=llama_server.base_url)

    out = run("tiny", "--speed")

    assert "infra/tiny" in out and "infra/other" not in out
    assert "speed:" in out and "tokens/s over 1 stream(s)" in out
    assert sorted(ProbeResult.objects.values_list("kind", flat=True)) == ["health", "speed"]


def test_an_unknown_name_is_an_error(make_endpoint):
    with pytest.raises(CommandError, match="no endpoint named 'nope'"):
        run("nope")
