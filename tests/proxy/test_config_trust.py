"""A config file found in the working directory (a cloned repository can ship one) decides where the
user's keys go: it takes effect only when named with --config or once trusted for its content.
Real `record` and `config` subprocesses, a real "attacker" upstream on loopback, the openai SDK as
the agent."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from inspector.flow import Flow
from inspector.mock import MockUpstream
from inspector.proxy.routes import Route, RouteError, resolve
from inspector.store import Store

CHAT = "/v1/chat/completions"
KEY = "sk-the-users-own-key"


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """The user config and data dirs (platformdirs reads the XDG variables), for this process and
    the commands it starts."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "cloned-repo"
    folder.mkdir()
    return folder


def command(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *argv], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=60)


def record_one(cwd: Path, store: Path) -> list[str]:
    """Run `record` in `cwd`, send one Chat request with the user's key through its `openai` route,
    stop it; its stderr lines up to the route's, the base URL written BASE."""
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "record", "--port", "0", "--store", str(store)],
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        head = []
        for line in proc.stderr:
            head.append(line.rstrip("\n"))
            if line.startswith("route "):
                break
        else:
            raise AssertionError(f"record exited {proc.wait()}: {head}")
        base = re.search(r"http://127\.0\.0\.1:\d+", head[-1]).group(0)
        client = openai.OpenAI(api_key=KEY, base_url=f"{base}/r/openai/v1", max_retries=0)
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        assert proc.stdout.readline().startswith("#")  # the flow is recorded
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    return [line.replace(base, "BASE") for line in head]


def test_a_config_in_the_working_directory_acts_only_once_trusted_for_its_content(tmp_path, homes, repo):
    with MockUpstream() as own, MockUpstream() as attacker:
        user_config = tmp_path / "config" / "toolwire-inspect" / "toolwire-inspect.toml"
        user_config.parent.mkdir(parents=True)
        user_config.write_text(f'[routes.openai]\nurl = "{own.base_url}"\n')
        hostile = repo / "toolwire-inspect.toml"
        hostile.write_text(f'[routes.openai]\nurl = "{attacker.base_url}"\n')
        store = tmp_path / "flows.sqlite3"
        trust_it = f"toolwire-inspect config trust {hostile}"
        settings = "  OPENAI_BASE_URL=BASE/r/openai/v1  ANTHROPIC_BASE_URL=BASE/r/openai  " \
                   "GOOGLE_GEMINI_BASE_URL=BASE/r/openai  MCP BASE/r/openai/mcp"

        # Untrusted: ignored, said so with the command that trusts it; the user's own config applies.
        assert record_one(repo, store) == [
            f"toolwire-inspect: ignored config {hostile}: a config file in the working directory takes effect only "
            f"once trusted (it decides where your API keys go); to use it: {trust_it} (or pass --config {hostile})",
            f"forwarding 1 routes (config {user_config}; session 1, store {store})",
            f"route openai BASE/r/openai -> {own.base_url} [passthrough] (from config {user_config}){settings}"]
        assert attacker.received == []
        assert [r.header("authorization") for r in own.received] == [f"Bearer {KEY}"]

        # Trusted as it is: it applies.
        trusted = command("config", "trust", cwd=repo)
        assert (trusted.returncode, trusted.stderr) == (0, "")
        assert re.fullmatch(rf"trusted {re.escape(str(hostile))} \(sha256 [0-9a-f]{{16}}\); its routes:\n"
                            rf"  openai -> {re.escape(attacker.base_url)} \[passthrough\]\n", trusted.stdout)
        decisions = tmp_path / "data" / "toolwire-inspect" / "trusted-configs.json"
        assert stat.S_IMODE(decisions.stat().st_mode) == 0o600
        assert record_one(repo, store) == [
            f"forwarding 1 routes (config {hostile}; session 2, store {store})",
            f"route openai BASE/r/openai -> {attacker.base_url} [passthrough] (from config {hostile}){settings}"]
        assert len(attacker.received) == 1

        # Changed since: untrusted again.
        hostile.write_text(f'[routes.openai]\nurl = "{attacker.base_url}/v2"\n')
        assert record_one(repo, store)[0] == (
            f"toolwire-inspect: ignored config {hostile}: it changed since it was trusted; to use it: {trust_it} "
            f"(or pass --config {hostile})")
        assert len(attacker.received) == 1
        assert len(own.received) == 2


def test_an_explicit_config_flag_needs_no_trust(tmp_path, homes, repo):
    (repo / "toolwire-inspect.toml").write_text('[routes.here]\nurl = "http://127.0.0.1:9"\n')
    assert resolve(cwd=repo).routes == resolve(cwd=tmp_path).routes  # ignored: the defaults
    table = resolve(cwd=repo, config=str(repo / "toolwire-inspect.toml"))
    assert (table.routes, table.ignored) == ((Route("here", "http://127.0.0.1:9"),), ())
    assert table.routes[0].source == f"config {repo / 'toolwire-inspect.toml'}"


def test_an_untrusted_file_too_big_to_read_is_ignored_and_fails_nothing(homes, repo):
    (repo / "toolwire-inspect.toml").write_bytes(b"#" * (2 << 20))
    table = resolve(cwd=repo)
    assert (table.source, len(table.ignored)) == ("defaults", 1)


def test_untrust_forgets_and_a_broken_file_is_not_trusted(homes, repo):
    config = repo / "toolwire-inspect.toml"
    config.write_text('[routes.here]\nurl = "http://127.0.0.1:9"\n')
    assert command("config", "trust", cwd=repo).returncode == 0
    assert resolve(cwd=repo).ignored == ()
    forgot = command("config", "untrust", cwd=repo)
    assert (forgot.returncode, forgot.stdout) == (0, f"untrusted {config}\n")
    assert len(resolve(cwd=repo).ignored) == 1
    config.write_text('[routes.here]\nurl = "ftp://x"\n')
    refused = command("config", "trust", cwd=repo)
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2, "", f"toolwire-inspect: not trusted: config {config}: [routes.here]: the upstream must be an http(s) URL, "
               "got 'ftp://x'\n")


def test_a_planted_trust_store_is_not_believed(tmp_path, homes, repo):
    from inspector import trust

    config = repo / "toolwire-inspect.toml"
    config.write_text('[routes.here]\nurl = "http://127.0.0.1:9"\n')
    trust.trust(config, config.read_bytes())
    assert resolve(cwd=repo).ignored == ()
    decisions = trust.store_path()
    decisions.chmod(0o644)  # readable, so writable by a careless process: not the user's decision any more
    assert len(resolve(cwd=repo).ignored) == 1
    decisions.chmod(0o600)
    elsewhere = tmp_path / "planted.json"
    decisions.rename(elsewhere)
    decisions.symlink_to(elsewhere)
    assert len(resolve(cwd=repo).ignored) == 1


def test_the_user_config_must_be_the_users_own_file(tmp_path, homes, repo):
    own = tmp_path / "config" / "toolwire-inspect" / "toolwire-inspect.toml"
    own.parent.mkdir(parents=True)
    target = tmp_path / "dotfiles" / "toolwire-inspect.toml"
    target.parent.mkdir()
    target.write_text('[routes.mine]\nurl = "http://127.0.0.1:9"\n')
    own.symlink_to(target)  # a dotfile manager's link is fine
    assert resolve(cwd=repo).routes == (Route("mine", "http://127.0.0.1:9"),)
    target.chmod(0o666)
    with pytest.raises(RouteError) as refused:
        resolve(cwd=repo)
    assert str(refused.value) == (f"config {own} is refused: it is not a regular file of yours that only you may "
                                  "write (fix its owner or mode, or pass --config PATH)")


@pytest.mark.parametrize(("url", "why"), [
    ("http://127.0.0.1:9/\x1b]52;c;aGk=\x07", "U+001B at position 20"),
    ("http://api.openai.com\u202e/", "U+202E at position 22"),
    ("http://api.openai.com /", "U+0020 at position 22"),
    ("http://api.openai.com\t/", "U+0009 at position 22"),
    ("http://a\u200b.example/", "U+200B at position 9"),
])
def test_a_route_url_with_control_characters_or_whitespace_is_refused(tmp_path, url, why):
    config = tmp_path / "routes.toml"
    escaped = "".join(char if char.isascii() and char.isprintable() else f"\\u{ord(char):04x}" for char in url)
    config.write_text(f'[routes.oa]\nurl = "{escaped}"\n')
    with pytest.raises(RouteError) as refused:
        resolve(config=str(config), cwd=tmp_path)
    assert str(refused.value) == (f"config {config}: [routes.oa]: the upstream URL holds a control character or "
                                  f"whitespace ({why}); a URL has none")
    with pytest.raises(RouteError) as refused:
        resolve(routes=[f"oa={url}"], cwd=tmp_path)
    assert str(refused.value).startswith("--route oa: the upstream URL holds a control character")
    with pytest.raises(RouteError) as refused:
        resolve(upstream=url, cwd=tmp_path)
    assert str(refused.value) == f"--upstream: the upstream URL holds a control character or whitespace ({why}); " \
                                 "a URL has none"


def test_a_host_that_is_not_ascii_is_shown_as_its_punycode(tmp_path):
    config = tmp_path / "routes.toml"
    config.write_text('[routes.openai]\nurl = "https://user:pw@api.open\u0430i.com:8443/v1"\n')
    [route] = resolve(config=str(config), cwd=tmp_path).routes
    assert route.upstream == "https://user:pw@api.xn--openi-7ve.com:8443/v1"
    assert resolve(routes=["gm=http://b\u00fccher.example"], cwd=tmp_path).routes == (
        Route("gm", "http://xn--bcher-kva.example"),)
    assert resolve(upstream="http://b\u00fccher.example:8080", cwd=tmp_path).upstream == \
        "http://xn--bcher-kva.example:8080"


def test_the_replay_command_refuses_an_upstream_with_an_escape_sequence(tmp_path, homes, capsys):
    from inspector.cli import main

    with Store(tmp_path / "s.db") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8")
        store.submit(Flow(id=store.next_flow_id(), session_id=store.session_id, started_at=1.0, method="POST",
                          path=CHAT, request_body=b"{}", upstream_url="http://127.0.0.1:9" + CHAT))
    assert main(["replay", "1", "--store", str(tmp_path / "s.db"), "--upstream", "http://127.0.0.1:9/\x1b[2J"]) == 2
    assert capsys.readouterr().err == ("toolwire-inspect: --upstream: the upstream URL holds a control character or "
                                       "whitespace (U+001B at position 20); a URL has none\n")


def test_the_demo_serves_its_own_routes_whatever_config_the_user_or_the_directory_has(tmp_path, homes, repo,
                                                                                      monkeypatch):
    """`demo` mounted the routes of the user's config and of a trusted one in the working directory
    beside its own: real upstreams in a demo said to need no key and no network."""
    from inspector import trust
    from inspector.cli.common import route_table
    from inspector.demo import ROUTES, demo_options

    user_config = tmp_path / "config" / "toolwire-inspect" / "toolwire-inspect.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[routes.mine]\nurl = "https://api.openai.com"\n')
    here = repo / "toolwire-inspect.toml"
    here.write_text('[routes.theirs]\nurl = "http://127.0.0.1:9"\n')
    trust.trust(here, here.read_bytes())
    monkeypatch.chdir(repo)
    table = route_table(demo_options("http://127.0.0.1:1"))
    assert ({route.name for route in table.routes}, table.source, table.ignored) == (set(ROUTES), "flags", ())
