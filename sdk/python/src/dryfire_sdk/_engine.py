"""The engine: one ``dryfire engine`` child process per Python process, and its HTTP clients.

The engine prints one JSON line when it is ready (its URL and a token), serves control routes
under /engine/ (with the token) and each drill's binding routes under /drills/ID/ (the URL is the
capability), and exits when its standard input closes, so it never outlives this process.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import socket
import subprocess
import threading
import urllib.parse
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from ._binary import find_binary
from ._errors import DryfireError, EngineError

__all__ = ["Engine", "default_engine"]

PROTOCOL = 1
READY_TIMEOUT_S = 10.0
_SDK = "dryfire (Python) 0.1.0.dev0"


class Engine:
    """A running ``dryfire engine``: start it with :meth:`start`, end it with :meth:`close`.

    One engine serves any number of drills at once, from any number of threads and event loops.
    """

    def __init__(self, proc: subprocess.Popen[bytes], url: str, token: str, version: str) -> None:
        self._proc = proc
        self.url = url
        self.version = version
        self._token = token
        u = urllib.parse.urlsplit(url)
        self._host, self._port = u.hostname or "127.0.0.1", u.port or 80
        self._local = threading.local()
        self._aio: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = weakref.WeakKeyDictionary()
        self._closed = False

    @classmethod
    def start(
        cls,
        *,
        cwd: str | os.PathLike[str] | None = None,
        record: str | None = None,
        python: str | None = None,
        env: Mapping[str, str] | None = None,
        binary: str | None = None,
        ready_timeout: float = READY_TIMEOUT_S,
    ) -> Engine:
        """Start ``dryfire engine`` and wait (at most ready_timeout seconds) for its ready line."""
        argv = [binary or find_binary(), "engine"]
        if record:
            argv += ["--record", record]
        if python:
            argv += ["--python", python]
        proc = subprocess.Popen(
            argv, cwd=cwd, env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
        )
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline() if proc.stdout else b""), daemon=True)
        reader.start()
        reader.join(ready_timeout)
        if reader.is_alive() or not line or not line[0]:
            code = proc.poll()
            _kill(proc)
            if code is not None:
                raise DryfireError(f"starting {argv[0]} engine: it exited with status {code} before it was ready (its messages are above, on standard error)")
            raise DryfireError(f"starting {argv[0]} engine: no ready line within {ready_timeout:g} s")
        try:
            ready = json.loads(line[0])
        except ValueError:
            _kill(proc)
            raise DryfireError(f"starting {argv[0]} engine: its first line is not the ready line: {line[0][:200]!r}") from None
        if not isinstance(ready, dict) or ready.get("engine") != "dryfire":
            _kill(proc)
            raise DryfireError(f"starting {argv[0]} engine: its first line is not the ready line: {line[0][:200]!r}")
        if ready.get("protocol") != PROTOCOL:
            _kill(proc)
            raise DryfireError(
                f"{_SDK} speaks engine protocol {PROTOCOL}, but {argv[0]} (dryfire {ready.get('version')}) speaks "
                f"protocol {ready.get('protocol')}: install the dryfire binary and the Python package of one release"
            )
        return cls(proc, str(ready["url"]), str(ready["token"]), str(ready.get("version", "")))

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self, timeout: float = 5.0) -> None:
        """End the engine (closing its standard input ends it) and wait for it."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            _kill(self._proc)
        if self._proc.stdout:
            self._proc.stdout.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # HTTP, synchronous: one keep-alive connection per thread (a plain socket: http.client's
    # header parsing alone costs more than the engine's answer).

    def request(self, method: str, path: str, body: Any = None, *, control: bool = False) -> tuple[int, Any]:
        """One request to the engine; the answer's status and JSON body (None when empty)."""
        if self._closed:
            raise DryfireError("the dryfire engine was closed")
        msg = self._message(method, path, body, control)
        for attempt in (0, 1):
            conn: tuple[socket.socket, Any] | None = getattr(self._local, "conn", None)
            fresh = conn is None
            try:
                if conn is None:
                    sock = socket.create_connection((self._host, self._port), timeout=600)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    conn = (sock, sock.makefile("rb"))
                    self._local.conn = conn
                conn[0].sendall(msg)
                status, keep, raw = _read_response_sync(conn[1])
                break
            except (OSError, ValueError) as e:
                self._drop_sync()
                if fresh or attempt or self._proc.poll() is not None:
                    raise DryfireError(f"{method} {path} to the dryfire engine at {self.url}: {e}") from e
        if not keep:
            self._drop_sync()
        return status, (json.loads(raw) if raw else None)

    def _drop_sync(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn[1].close()
            conn[0].close()

    def _message(self, method: str, path: str, body: Any, control: bool) -> bytes:
        data = b"" if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {self._host}:{self._port}\r\nContent-Length: {len(data)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        if control:
            head += f"Authorization: Bearer {self._token}\r\n"
        return (head + "\r\n").encode() + data

    def control(self, method: str, path: str, body: Any = None, ok: Sequence[int] = (200, 201, 204)) -> Any:
        status, answer = self.request(method, path, body, control=True)
        if status not in ok:
            raise _engine_error(status, answer)
        return answer

    # HTTP, asyncio: a small pool of keep-alive connections per event loop.

    async def arequest(self, method: str, path: str, body: Any = None, *, control: bool = False) -> tuple[int, Any]:
        if self._closed:
            raise DryfireError("the dryfire engine was closed")
        msg = self._message(method, path, body, control)
        loop = asyncio.get_running_loop()
        pool = self._aio.setdefault(loop, [])
        for attempt in (0, 1):
            if pool:
                reader, writer = pool.pop()
                fresh = False
            else:
                reader, writer = await asyncio.open_connection(self._host, self._port)
                fresh = True
            try:
                writer.write(msg)
                status, keep, raw = await _read_response(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError) as e:
                writer.close()
                if fresh or attempt:
                    raise DryfireError(f"{method} {path} to the dryfire engine at {self.url}: {e}") from e
                continue
            if keep:
                pool.append((reader, writer))
            else:
                writer.close()
            return status, (json.loads(raw) if raw else None)
        raise AssertionError("unreachable")

    async def acontrol(self, method: str, path: str, body: Any = None, ok: Sequence[int] = (200, 201, 204)) -> Any:
        status, answer = await self.arequest(method, path, body, control=True)
        if status not in ok:
            raise _engine_error(status, answer)
        return answer


def _status(line: bytes) -> int:
    parts = line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP answer: {line[:80]!r}")
    return int(parts[1])


def _header(line: bytes, framing: list[Any]) -> None:
    """framing is [length, chunked, keep-alive], updated from one header line."""
    k, _, v = line.partition(b":")
    k, v = k.strip().lower(), v.strip().lower()
    if k == b"content-length":
        framing[0] = int(v)
    elif k == b"transfer-encoding" and b"chunked" in v:
        framing[1] = True
    elif k == b"connection" and v == b"close":
        framing[2] = False


_MAX_LINE = 65536


def _read_response_sync(f: Any) -> tuple[int, bool, bytes]:
    line = f.readline(_MAX_LINE)
    if not line:
        raise ValueError("the engine closed the connection")
    status = _status(line)
    framing: list[Any] = [-1, False, True]
    while (line := f.readline(_MAX_LINE)) not in (b"\r\n", b"\n", b""):
        _header(line, framing)
    length, chunked, keep = framing
    if chunked:
        body = bytearray()
        while (size := int(f.readline(_MAX_LINE).split(b";")[0], 16)) != 0:
            body += f.read(size + 2)[:-2]
        while f.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
            pass
        return status, keep, bytes(body)
    if length >= 0:
        data = f.read(length)
        if len(data) != length:
            raise ValueError("the engine's answer ended early")
        return status, keep, data
    if status in (204, 304):
        return status, keep, b""
    return status, False, f.read()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool, bytes]:
    status = _status(await reader.readuntil(b"\r\n"))
    framing: list[Any] = [-1, False, True]
    while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
        _header(line, framing)
    length, chunked, keep = framing
    if chunked:
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                break
            body += await reader.readexactly(size + 2)
            del body[-2:]
        return status, keep, bytes(body)
    if length >= 0:
        return status, keep, await reader.readexactly(length)
    if status in (204, 304):
        return status, keep, b""
    return status, False, await reader.read()


def _engine_error(status: int, answer: Any) -> EngineError:
    err = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(err, dict):
        return EngineError(str(err.get("code", "")), str(err.get("message", "")), status, answer)
    return EngineError("", f"the dryfire engine answered {status}: {answer!r}", status, answer if isinstance(answer, dict) else None)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.kill()
        proc.wait(5)
    except (OSError, subprocess.TimeoutExpired):
        pass


_default: Engine | None = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """This process's shared engine, started on first use and ended when the process exits."""
    global _default
    with _default_lock:
        if _default is None or _default._closed or _default._proc.poll() is not None:
            _default = Engine.start()
            atexit.register(_default.close)
        return _default


def set_default_engine(engine: Engine | None) -> Engine | None:
    """Make engine the one run_drills uses when it is given none; returns the previous one."""
    global _default
    with _default_lock:
        prev, _default = _default, engine
        return prev
