"""`toolwire-inspect run -- COMMAND`: real agents, as real subprocesses, given nothing but what `run`
sets; each is recorded, and the doctor names what bypassed or failed the forwarder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import shutil

import pytest

from inspector.mock import MockUpstream
from inspector.store import Store

PYTHON = sys.executable
# No setting of the user's may help: every variable an agent could read is taken away first.
SCRUBBED = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE", "HTTPS_PROXY",
            "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
            "NODE_EXTRA_CA_CERTS", "CODEX_CA_CERTIFICATE", "ALL_PROXY", "all_proxy")


@pytest.fixture
def upstream():
    with MockUpstream() as mock:
        yield mock


def run(tmp_path: Path, agent: str, *options: str, runtime: str = PYTHON,
        script_name: str = "agent.py") -> tuple[subprocess.CompletedProcess, list]:
    script = tmp_path / script_name
    script.write_text(textwrap.dedent(agent))
    env = {name: value for name, value in os.environ.items() if name not in SCRUBBED}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), OPENAI_API_KEY="sk-test-run-0000000000")  # the CA under tmp
    done = subprocess.run([PYTHON, "-m", "inspector", "run", "--port", "0", "--store", str(tmp_path / "s.sqlite3"),
                           *options, "--", runtime, str(script)], capture_output=True, text=True, env=env, timeout=60,
                          cwd=Path(__file__).resolve().parents[1])
    with Store(tmp_path / "s.sqlite3", read_only=True) as store:
        rows = store.rows()
    return done, rows


def doctor(done: subprocess.CompletedProcess) -> list[str]:
    return [line.split("doctor: ", 1)[1] for line in done.stderr.splitlines() if "toolwire-inspect doctor: " in line]


OPENAI_AGENT = """
    import openai
    answer = openai.OpenAI().chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}])
    print(answer.choices[0].message.content)
"""


def test_an_openai_sdk_agent_is_recorded_with_no_setting_of_its_own(tmp_path, upstream):
    done, rows = run(tmp_path, OPENAI_AGENT, "--upstream", upstream.base_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Hello from the mock upstream."
    assert [(row.method, row.path, row.status) for row in rows] == [("POST", "/v1/chat/completions", 200)]
    assert doctor(done) == []


def test_the_default_routes_serve_each_sdk_its_own_base_url(tmp_path):
    """No --upstream: the agent's variable points at its provider's route (the route's upstream is the
    real provider, unreachable here, so the flow records that error; what matters is where it went)."""
    agent = """
        import os
        print(os.environ["OPENAI_BASE_URL"]); print(os.environ["ANTHROPIC_BASE_URL"])
        print(os.environ["GOOGLE_GEMINI_BASE_URL"]); print(os.environ["GEMINI_API_BASE"])
    """
    done, _ = run(tmp_path, agent)
    assert done.returncode == 0, done.stderr
    base = done.stdout.splitlines()[0].rsplit("/r/openai/v1", 1)[0]
    assert done.stdout.splitlines() == [f"{base}/r/openai/v1", f"{base}/r/anthropic", f"{base}/r/gemini",
                                        f"{base}/r/gemini/v1beta"]


PROXY_ONLY_AGENT = """
    import os, httpx
    # A client that takes no base URL: it calls the provider's own host, through HTTPS_PROXY, trusting
    # what {trust} names.
    verify = {verify}
    with httpx.Client(verify=verify) as client:
        answer = client.post("https://api.openai.com/v1/chat/completions",
                             json={{"model": "m", "messages": [{{"role": "user", "content": "hi"}}]}})
    print(answer.status_code)
"""


def test_an_agent_that_only_honours_https_proxy_is_recorded(tmp_path, upstream):
    agent = PROXY_ONLY_AGENT.format(trust="SSL_CERT_FILE", verify="True")  # httpx reads SSL_CERT_FILE
    done, rows = run(tmp_path, agent, "--upstream", upstream.base_url, "--intercept",
                     f"api.openai.com={upstream.base_url}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "200"
    assert [(row.path, row.status) for row in rows] == [("/v1/chat/completions", 200)]
    assert doctor(done) == []


def test_a_codex_shaped_client_trusting_only_its_own_ca_variable_is_recorded(tmp_path, upstream):
    agent = PROXY_ONLY_AGENT.format(trust="CODEX_CA_CERTIFICATE",
                                    verify='__import__("ssl").create_default_context('
                                           'cafile=os.environ["CODEX_CA_CERTIFICATE"])')
    done, rows = run(tmp_path, agent, "--upstream", upstream.base_url, "--intercept",
                     f"api.openai.com={upstream.base_url}")
    assert done.returncode == 0, done.stderr
    assert [(row.path, row.status) for row in rows] == [("/v1/chat/completions", 200)]


def test_the_doctor_names_a_client_pinned_to_a_direct_url(tmp_path, upstream):
    agent = f"""
        import httpx
        print(httpx.post({upstream.base_url!r} + "/v1/chat/completions", json={{"model": "m"}}).status_code)
    """
    done, rows = run(tmp_path, agent, "--upstream", upstream.base_url)
    assert (done.returncode, rows) == (0, [])
    [line] = doctor(done)
    assert line.startswith("the command made no request through the forwarder: it may pin a URL of its own or read "
                           "a variable not set here (ANTHROPIC_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL, "
                           "AWS_ENDPOINT_URL_BEDROCK_RUNTIME, CODEX_CA_CERTIFICATE, ")


def test_the_doctor_names_a_client_that_does_not_trust_the_ca_and_the_fix(tmp_path, upstream):
    agent = PROXY_ONLY_AGENT.format(trust="certifi's roots only", verify='__import__("certifi").where()')
    done, rows = run(tmp_path, agent.replace("    print(answer.status_code)", ""), "--upstream", upstream.base_url,
                     "--intercept", f"api.openai.com={upstream.base_url}")
    assert done.returncode == 1  # the agent's own failure, passed on
    assert "CERTIFICATE_VERIFY_FAILED" in done.stderr
    assert rows == []
    [line] = doctor(done)
    assert line.startswith("1 TLS handshake(s) through the proxy failed: the client does not trust the proxy CA "
                           "(TLS with a client for api.openai.com failed (")
    assert line.endswith(f"a client with a trust store of its own needs {tmp_path}/data/toolwire-inspect/ca/"
                         "toolwire-ca.pem added there (`toolwire-inspect ca` says how)")


def test_the_doctor_names_a_host_tunnelled_unrecorded(tmp_path, upstream):
    port = upstream.base_url.rsplit(":", 1)[1]
    agent = f"""
        import os, socket
        proxy = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1]
        with socket.create_connection((proxy.split(":")[0], int(proxy.split(":")[1]))) as s:
            s.sendall(b"CONNECT localhost:{port} HTTP/1.1\\r\\nHost: localhost:{port}\\r\\n\\r\\n")
            print(s.recv(100).split(b"\\r\\n")[0].decode())
    """
    done, rows = run(tmp_path, agent, "--upstream", upstream.base_url, "--allow-connect", "localhost")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "HTTP/1.1 200 Connection established"
    assert doctor(done) == [f"1 connection(s) to localhost:{port} went through the proxy untouched and unrecorded: "
                            "--intercept localhost records them"]


def test_the_command_s_exit_status_is_run_s(tmp_path, upstream):
    done, _ = run(tmp_path, "raise SystemExit(3)", "--upstream", upstream.base_url)
    assert done.returncode == 3


def test_run_without_a_command_says_how(tmp_path):
    done = subprocess.run([PYTHON, "-m", "inspector", "run", "--store", str(tmp_path / "s.sqlite3")],
                          capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (
        2, "toolwire-inspect: run needs the agent's command after --: toolwire-inspect run -- python agent.py\n")


def test_run_sends_the_agent_s_flows_to_the_collector_too(tmp_path, upstream):
    from tests.otlp.receiver import Receiver

    with Receiver() as receiver:
        done, rows = run(tmp_path, OPENAI_AGENT, "--upstream", upstream.base_url, "--otlp-endpoint", receiver.url)
        receiver.wait(1)
        names = [span.name for span in receiver.spans()]
    assert done.returncode == 0, done.stderr
    assert (len(rows), names) == (1, ["chat gpt-4.1-mini"])
    assert done.stderr.splitlines()[-1].startswith("toolwire-inspect: otlp: 1 spans exported, 0 failed, 0 flows dropped")
    assert done.stderr.splitlines()[1].startswith("#1 POST /v1/chat/completions 200 ")


NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

# The Node clients use only what Node itself has (no npm install): the openai Node SDK's way, a
# base URL read from OPENAI_BASE_URL and fetch; and a proxy agent's way, a CONNECT to HTTPS_PROXY
# and TLS over the tunnel to the provider's own host, trusting what Node trusts (its roots plus
# NODE_EXTRA_CA_CERTS, read at start-up).
NODE_BASE_URL_AGENT = """
    const answer = await fetch(process.env.OPENAI_BASE_URL + "/chat/completions", {
      method: "POST",
      headers: {"content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY},
      body: JSON.stringify({model: "gpt-4.1-mini", messages: [{role: "user", content: "hi"}]}),
    });
    console.log(answer.status, (await answer.json()).choices[0].message.content);
"""

NODE_PROXY_AGENT = """
    import http from "node:http";
    import https from "node:https";
    import tls from "node:tls";

    const proxy = new URL(process.env.HTTPS_PROXY);
    const host = "api.openai.com";
    const tunnel = http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT", path: host + ":443"});
    tunnel.on("connect", (head, socket) => {
      if (head.statusCode !== 200) throw new Error("CONNECT refused: " + head.statusCode);
      const request = https.request({
        host, port: 443, path: "/v1/chat/completions", method: "POST",
        headers: {"content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY},
        createConnection: () => tls.connect({socket, servername: host}),
      }, (response) => {
        let text = "";
        response.on("data", (chunk) => { text += chunk; });
        response.on("end", () => console.log(response.statusCode, JSON.parse(text).choices[0].message.content));
      });
      request.on("error", (error) => { console.error(error.code || error.message); process.exit(1); });
      request.end(JSON.stringify({model: "gpt-4.1-mini", messages: [{role: "user", content: "hi"}]}));
    });
    tunnel.end();
"""


@needs_node
def test_a_node_client_reading_the_base_url_is_recorded(tmp_path, upstream):
    done, rows = run(tmp_path, NODE_BASE_URL_AGENT, "--upstream", upstream.base_url, runtime=NODE,
                     script_name="client.mjs")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "200 Hello from the mock upstream."
    assert [(row.method, row.path, row.status) for row in rows] == [("POST", "/v1/chat/completions", 200)]
    assert doctor(done) == []


@needs_node
def test_a_node_client_through_proxy_mode_trusts_the_ca_by_node_extra_ca_certs(tmp_path, upstream):
    """Issue 22's acceptance: `run -- node client.js`, proxy mode, the CA trusted through
    NODE_EXTRA_CA_CERTS alone (Node reads neither SSL_CERT_FILE nor the bundle)."""
    done, rows = run(tmp_path, NODE_PROXY_AGENT, "--upstream", upstream.base_url, "--intercept",
                     f"api.openai.com={upstream.base_url}", runtime=NODE, script_name="client.mjs")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "200 Hello from the mock upstream."
    assert [(row.method, row.path, row.status) for row in rows] == [("POST", "/v1/chat/completions", 200)]
    assert doctor(done) == []


def node_reads_the_proxy_variables() -> bool:
    """Whether this Node's own fetch honours HTTPS_PROXY under NODE_USE_ENV_PROXY (the flag of the
    same meaning, --use-env-proxy, came with it: an older Node refuses the flag)."""
    return NODE is not None and subprocess.run([NODE, "--use-env-proxy", "-e", ""], capture_output=True).returncode == 0


NODE_BARE_FETCH_AGENT = """
    // No base URL, no proxy agent: the provider's own host, as a Node script calls it.
    const answer = await fetch("https://api.openai.com/v1/chat/completions", {
      method: "POST",
      headers: {"content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY},
      body: JSON.stringify({model: "gpt-4.1-mini", messages: [{role: "user", content: "hi"}]}),
    });
    console.log(answer.status);
"""


@needs_node
def test_node_is_told_to_read_the_proxy_variables(tmp_path, upstream):
    """Node's own fetch and https ignore HTTPS_PROXY unless NODE_USE_ENV_PROXY=1."""
    done, _ = run(tmp_path, 'console.log(process.env.NODE_USE_ENV_PROXY, process.env.NODE_EXTRA_CA_CERTS);',
                  "--upstream", upstream.base_url, runtime=NODE, script_name="client.mjs")
    assert done.stdout.splitlines()[-1] == f"1 {tmp_path}/data/toolwire-inspect/ca/toolwire-ca.pem"


@pytest.mark.skipif(not node_reads_the_proxy_variables(),
                    reason="this Node's fetch ignores HTTPS_PROXY (NODE_USE_ENV_PROXY came with Node 24); "
                           "its bare fetch would go to the internet")
def test_a_node_client_with_a_bare_fetch_is_recorded(tmp_path, upstream):
    done, rows = run(tmp_path, NODE_BARE_FETCH_AGENT, "--upstream", upstream.base_url, "--intercept",
                     f"api.openai.com={upstream.base_url}", runtime=NODE, script_name="client.mjs")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "200"
    assert [(row.method, row.path, row.status) for row in rows] == [("POST", "/v1/chat/completions", 200)]
    assert doctor(done) == []
