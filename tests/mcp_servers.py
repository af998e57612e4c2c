"""The MCP test servers, in one home: `mcp_server(NAME)`, the mcp SDK's own server with `lookup` and
`NAME_status` (served over streamable HTTP by the e2e tests), and the servers over stdio for the
mcp-stdio tests, run as `python -m tests.mcp_servers KIND NAME`:

- `sdk NAME`: mcp_server(NAME) plus `crash` (exits with 3 while answering) and `leak` (answers
  with the value of $SERVER_API_TOKEN in an error).
- `exit CODE`: reads one line and exits with CODE without answering.
- `echo ARGS...`: answers every request with its own command line and environment, as a server
  does that prints its configuration or quotes a failing connection string.
- `script PATH`: writes nothing of its own: for each line it reads it appends the line to PATH and
  answers with the next canned line from PATH.answers (bytes as they are); exits at EOF with 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `exit` and `script` start without the mcp SDK
    from mcp.server.mcpserver import MCPServer


def mcp_server(name: str) -> MCPServer:
    """Two tools: `lookup`, which every server of this kind serves (a duplicate across servers),
    and `NAME_status`, its own."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name)

    @server.tool()
    def lookup(query: str) -> str:
        """Look something up."""
        return f"{name}: {query}"

    @server.tool(name=f"{name}_status")
    def status() -> str:
        """Server status."""
        return "ok"

    return server


def sdk(name: str) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    server = mcp_server(name)

    @server.tool()
    def crash() -> str:
        """Exit without answering."""
        os._exit(3)

    @server.tool()
    def leak() -> str:
        """Quote the server's credential in an error."""
        raise ToolError(f"upstream refused token {os.environ['SERVER_API_TOKEN']}")

    server.run("stdio")


def exit_on_first_line(code: str) -> None:
    sys.stdin.buffer.readline()
    os._exit(int(code))


def script(path: str) -> None:
    received = Path(path)
    answers = iter(Path(path + ".answers").read_bytes().splitlines(keepends=True))
    with received.open("ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            answer = next(answers, None)
            if answer is not None:
                sys.stdout.buffer.write(answer)
                sys.stdout.buffer.flush()


def echo() -> None:
    import json

    for line in sys.stdin.buffer:
        request = json.loads(line)
        if "id" in request:
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"argv": sys.argv, "env": dict(os.environ)}}
            sys.stdout.buffer.write(json.dumps(answer).encode() + b"\n")
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    if sys.argv[1] == "echo":
        echo()
    else:
        {"sdk": sdk, "script": script, "exit": exit_on_first_line}[sys.argv[1]](sys.argv[2])
