"""Probe fixtures: a real llama-cpp-python server on loopback, a misbehaving one, and the cast.

Alice and Bob are on the "infra" team, which owns the endpoints; Charlie is not, and must not
see them.
"""

import importlib.util
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from probe_helpers import free_port
from tiny_gguf import write_tiny_gguf

from probes.testing import MisbehavingServer

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 90
MODEL_ALIAS = "tiny-llama"
SERVER_KEY = "sk-test-only-4f1c"


@dataclass
class LlamaServer:
    base_url: str
    model_id: str
    proc: subprocess.Popen
    log_path: Path
    api_key: str | None = None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start_llama_server(model: Path, name: str, api_key: str | None = None) -> LlamaServer:
    """`python -m llama_cpp.server` on a free loopback port, once it lists its model."""
    # Checked, not imported: importing llama_cpp here would load the library into the tests.
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] is a dev dependency (pip install -e '.[dev]')")
    port = free_port()
    log_path = ROOT / "test-artifacts" / f"llama-server-{name}.log"
    log_path.parent.mkdir(exist_ok=True)
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "512", "--n_threads", "1", "--verbose", "False",
    ]  # fmt: skip
    if api_key:
        cmd += ["--api_key", api_key]
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    server = LlamaServer(f"http://127.0.0.1:{port}", MODEL_ALIAS, proc, log_path, api_key)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama-cpp-python server exited early; see {log_path}")
        try:
            if httpx.get(f"{server.base_url}/v1/models", headers=headers, timeout=1).is_success:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"llama-cpp-python server did not answer in time; see {log_path}")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


@pytest.fixture(scope="session")
def llama_server(tiny_model):
    """A real OpenAI-compatible server, no key; shared by the tests that only read from it."""
    server = start_llama_server(tiny_model, "open")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llama_server_with_key(tiny_model):
    server = start_llama_server(tiny_model, "keyed", api_key=SERVER_KEY)
    yield server
    server.stop()


@pytest.fixture
def own_llama_server(tiny_model):
    """A server of this test's own, which the test may stop."""
    server = start_llama_server(tiny_model, "own")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def misbehaving():
    with MisbehavingServer() as server:
        yield server


@pytest.fixture
def team(alice, bob):
    from teams.models import Membership, Team

    team = Team.objects.create(name="Infra", slug="infra")
    Membership.objects.create(team=team, user=alice, role="admin")
    Membership.objects.create(team=team, user=bob)
    return team


@pytest.fixture
def bob(django_user_model):
    """Bob is on Alice's team."""
    return django_user_model.objects.create_user("bob", "bob@example.com", "bob-pass-123")


@pytest.fixture
def charlie(django_user_model):
    """Charlie is on another team and must not see Alice's endpoints."""
    from teams.models import Membership, Team

    user = django_user_model.objects.create_user("charlie", "c@example.com", "charlie-pass-123")
    other = Team.objects.create(name="Other", slug="other")
    Membership.objects.create(team=other, user=user)
    return user


@pytest.fixture
def make_endpoint(team):
    from probes.models import Endpoint

    def make(**fields) -> Endpoint:
        fields.setdefault("team", team)
        fields.setdefault("name", f"ep-{Endpoint.objects.count() + 1}")
        fields.setdefault("base_url", "http://127.0.0.1:9")
        fields.setdefault("kind", "llama_cpp_python")
        fields.setdefault("model_id", MODEL_ALIAS)
        fields.setdefault("timeout_s", 5.0)
        return Endpoint.objects.create(**fields)

    return make


@pytest.fixture(autouse=True)
def _tasks_in_process(request):
    """Run Celery tasks in-process (as the embedded default run does), even when the test
    command sets a broker; only the tests marked `integration` go through the real worker."""
    if request.node.get_closest_marker("integration"):
        yield
        return
    from k3planner.celery import app

    old = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = old


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The cast logs in with force_login; hashing their passwords properly only costs time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch):
    # Probes never read proxy settings (trust_env=False); keep the webhook posts local too.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield
    os.environ.pop("ENDPOINT_KEY_TEST", None)
