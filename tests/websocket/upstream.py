"""A fake upstream speaking WebSocket on loopback (aiohttp's server, on a thread of its own): the
Responses API over a socket as Codex and the openai SDK use it, plus a few frames a test asks for.

Each `response.create` is answered with the server events of one turn: a `generate: false` prewarm
with an empty completed response; a turn whose input holds no `function_call_output` with a call of
its first tool; one that answers a call with a text message. `{"type": "burst", "count": N}` is
answered with N small frames and a `burst.done`. Control frames are its own to answer: each ping
is told (`pinged`) and answered, a `held:` one only once `pong_now` comes; `ping_me` pings the
client, whose pong is told (`ponged`). What the client sent is kept in
`seen` (the handshake headers, the frames) for the tests to compare."""

from __future__ import annotations

import asyncio
import threading

import orjson
from aiohttp import WSMsgType, web


class SocketUpstream:
    def __init__(self) -> None:
        self.handshakes: list[dict[str, str]] = []  # headers of each upgrade, lower-cased names
        self.received: list[tuple[bool, bytes]] = []  # (text, payload) of each client frame
        self.closes: list[tuple[int | None, str]] = []  # the client's close codes and reasons
        self.pings: list[bytes] = []  # the payloads of the pings that reached it, and of the pongs
        self.pongs: list[bytes] = []
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._ids = 0
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SocketUpstream:
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True, name="ws-upstream").start()
        ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._socket)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self._loop.run_forever()

    async def _stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/v1/refuse":
            return web.Response(status=426, text="upgrade refused")
        self.handshakes.append({k.lower(): v for k, v in request.headers.items()})
        # Pings answered here, not by aiohttp: what reached it is kept, and a `held:` one waits.
        ws = web.WebSocketResponse(protocols=("chosen.v1",), max_msg_size=0, autoping=False)
        ws.headers["x-request-id"] = "req_upstream"
        await ws.prepare(request)
        held: list[bytes] = []
        while True:
            message = await ws.receive()
            if message.type is WSMsgType.CLOSE:
                self.closes.append((message.data, message.extra or ""))
                break
            if message.type in (WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                self.closes.append((ws.close_code, ""))
                break
            if message.type is WSMsgType.PING:
                self.pings.append(message.data)
                await ws.send_str(orjson.dumps({"type": "pinged", "data": message.data.decode()}).decode())
                if message.data.startswith(b"held:"):
                    held.append(message.data)
                else:
                    await ws.pong(message.data)
                continue
            if message.type is WSMsgType.PONG:
                self.pongs.append(message.data)
                await ws.send_str(orjson.dumps({"type": "ponged", "data": message.data.decode()}).decode())
                continue
            if message.type is WSMsgType.BINARY:
                self.received.append((False, message.data))
                await ws.send_bytes(message.data[::-1])
                continue
            if message.type is not WSMsgType.TEXT:
                continue
            self.received.append((True, message.data.encode()))
            event = orjson.loads(message.data)
            if event.get("type") == "close_me":
                await ws.close(code=4001, message=b"asked to")
                break
            if event.get("type") == "pong_now":  # the pongs of the held pings, now
                for data in held:
                    await ws.pong(data)
                held.clear()
                continue
            if event.get("type") == "ping_me":
                await ws.ping(event["data"].encode())
                continue
            if event.get("type") == "echo":
                await ws.send_str(message.data)
                continue
            if event.get("type") == "burst":  # a long stream of small frames, then the count of them
                for n in range(event["count"]):
                    await ws.send_str(orjson.dumps({"type": "burst.delta", "n": n}).decode())
                await ws.send_str(orjson.dumps({"type": "burst.done", "count": event["count"]}).decode())
                continue
            for answer in self._turn(event):
                await ws.send_str(orjson.dumps(answer).decode())
        return ws

    def _turn(self, create: dict) -> list[dict]:
        self._ids += 1
        response_id = f"resp_{self._ids}"
        base = {"id": response_id, "object": "response", "model": create.get("model", ""),
                "previous_response_id": create.get("previous_response_id")}
        if create.get("generate") is False:
            output: list[dict] = []
        elif any(item.get("type") == "function_call_output" for item in create.get("input") or [] if isinstance(item, dict)):
            output = [{"type": "message", "id": f"msg_{self._ids}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "done", "annotations": []}]}]
        else:
            tool = (create.get("tools") or [{"name": "none"}])[0]["name"]
            output = [{"type": "function_call", "id": f"fc_{self._ids}", "call_id": f"call_{self._ids}",
                       "name": tool, "arguments": '{"path": "README.md"}', "status": "completed"}]
        events: list[dict] = [{"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}]
        for index, item in enumerate(output):
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
            events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        events.append({"type": "response.completed", "response": {**base, "status": "completed", "output": output}})
        return events
