"""`toolwire-inspect doctor`: run from a shell, it says whether an agent started there would reach the
forwarder that is running. The shells here are real: `run` starts a real forwarder and runs the doctor
as its agent, with `env` changing what one setting says, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.mock import MockUpstream

from tests.test_run import SCRUBBED

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def upstream():
    with MockUpstream() as mock:
        yield mock


def _env(tmp_path: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in SCRUBBED}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # the CA under tmp
    return env


def doctor_under_run(tmp_path: Path, upstream: MockUpstream, *shell: str) -> tuple[int, str, list[str]]:
    """The doctor's exit status, the forwarder's base URL it found, and its other lines."""
    store = str(tmp_path / "s.sqlite3")
    done = subprocess.run([PYTHON, "-m", "inspector", "run", "--port", "0", "--store", store, "--upstream",
                           upstream.base_url, "--", *shell, PYTHON, "-m", "inspector", "doctor", "--store", store],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=60, cwd=ROOT)
    first, *lines = done.stdout.splitlines()
    assert first.startswith("forwarder: session 1 at http://127.0.0.1:"), done.stderr
    base = first.split(" at ", 1)[1].split(" ", 1)[0]
    assert first == f"forwarder: session 1 at {base} (passthrough to {upstream.base_url})"
    return done.returncode, base, lines


def _ca(tmp_path: Path) -> Path:
    return tmp_path / "data" / "toolwire-inspect" / "ca"


def test_with_no_forwarder_running_it_says_how_to_start_one(tmp_path):
    done = subprocess.run([PYTHON, "-m", "inspector", "doctor", "--store", str(tmp_path / "none.sqlite3")],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=60, cwd=ROOT)
    assert (done.returncode, done.stdout.splitlines(), done.stderr) == (1, [
        "fix   no forwarder is running on this store: start `toolwire-inspect` (the TUI), `toolwire-inspect record`, "
        "or run the agent under `toolwire-inspect run -- COMMAND`"], "")
    assert not (tmp_path / "none.sqlite3").exists()  # asking leaves no store behind


def test_the_environment_run_gives_an_agent_reaches_the_forwarder(tmp_path, upstream):
    status, base, lines = doctor_under_run(tmp_path, upstream)
    assert (status, lines) == (0, [
        f"ok    OPENAI_BASE_URL={base}/v1 reaches session 1",
        f"ok    ANTHROPIC_BASE_URL={base} reaches session 1",
        f"ok    GOOGLE_GEMINI_BASE_URL={base} reaches session 1",
        f"ok    GEMINI_API_BASE={base}/v1beta reaches session 1",
        f"ok    AWS_ENDPOINT_URL_BEDROCK_RUNTIME={base} reaches session 1",
        f"ok    ANTHROPIC_BEDROCK_BASE_URL={base} reaches session 1",
        f"ok    HTTPS_PROXY={base} reaches session 1, and SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, "
        "CODEX_CA_CERTIFICATE trust its CA"])


def test_a_base_url_pinned_to_the_provider_is_named_with_the_fix(tmp_path, upstream):
    status, base, lines = doctor_under_run(tmp_path, upstream, "env", "-u", "GEMINI_API_BASE",
                                           "OPENAI_BASE_URL=https://api.openai.com/v1")
    assert status == 1
    assert lines[0] == (f"fix   OPENAI_BASE_URL=https://api.openai.com/v1 is not a running forwarder: openai SDK, "
                        f"openai-agents, pydantic-ai, LangChain's ChatOpenAI, LiteLLM openai/ models bypass it "
                        f"(export OPENAI_BASE_URL={base}/v1)")
    assert lines[3].startswith("unset GEMINI_API_BASE is not set: ")
    assert lines[3].endswith(f"go to the provider directly (export GEMINI_API_BASE={base}/v1beta)")
    assert [line[:5] for line in lines] == ["fix  ", "ok   ", "ok   ", "unset", "ok   ", "ok   ", "ok   "]


def test_a_proxy_without_the_ca_in_any_trust_variable_will_fail_tls(tmp_path, upstream):
    status, base, lines = doctor_under_run(tmp_path, upstream, "env", "-u", "SSL_CERT_FILE", "-u", "REQUESTS_CA_BUNDLE",
                                           "-u", "NODE_EXTRA_CA_CERTS", "-u", "CODEX_CA_CERTIFICATE")
    ca = _ca(tmp_path)
    assert (status, lines[-1]) == (1, (
        f"fix   HTTPS_PROXY={base} reaches a forwarder, but no trust variable names its CA: TLS to intercepted hosts "
        f"will fail (export SSL_CERT_FILE={ca}/toolwire-ca-bundle.pem REQUESTS_CA_BUNDLE={ca}/toolwire-ca-bundle.pem "
        f"NODE_EXTRA_CA_CERTS={ca}/toolwire-ca.pem, or run the agent under `toolwire-inspect run`)"))


def test_a_proxy_elsewhere_or_none_and_localhost_for_loopback():
    from inspector.wiring import Running, check_environment

    running = [Running(4, "http://127.0.0.1:8787", "https://api.anthropic.com", "passthrough")]
    trust = [("SSL_CERT_FILE", Path("/ca/bundle.pem"))]
    lines = check_environment({"ANTHROPIC_BASE_URL": "http://localhost:8787", "HTTPS_PROXY": "http://10.0.0.5:3128"},
                              running, trust, Path("/ca/ca.pem"))
    assert lines == [
        ("ok", "ANTHROPIC_BASE_URL=http://localhost:8787 reaches session 4"),
        ("fix", "HTTPS_PROXY=http://10.0.0.5:3128 is not a running forwarder: clients without a base URL bypass it "
                "(export HTTPS_PROXY=http://127.0.0.1:8787)")]
    assert check_environment({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8787"}, running, trust, Path("/ca/ca.pem"))[1:] == [
        ("unset", "HTTPS_PROXY is not set: clients that take no base URL bypass the forwarder (export "
                  "HTTPS_PROXY=http://127.0.0.1:8787 and trust its CA: `toolwire-inspect ca`)")]
