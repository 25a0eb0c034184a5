"""Replacing a dependency of the agent with a world operation, from the test.

``mock_tool(binding, operation=...)`` is a callable to install where the agent looks the real
function up (``unittest.mock.patch``, pytest's ``monkeypatch``, pytest-mock's ``mocker``): each call
maps its arguments to the operation's input, calls the operation in the drill's world (so function
mocks, MCP clients and HTTP calls share one state and one evidence), and returns the operation's
output or raises. It never calls the real dependency.
"""

from __future__ import annotations

import difflib
import json
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, overload

from ._drills import Binding
from ._errors import DryfireError

__all__ = ["ToolMockError", "mock_tool"]


class ToolMockError(DryfireError):
    """A world operation answered with an error.

    ``envelope`` is the error object (``{"code", "message", "retryable"}``), ``status`` the HTTP status
    the world gave it (422 a declared error, 503 a retryable one, 400 invalid input, 410 an ended drill, ...).
    """

    def __init__(self, envelope: Mapping[str, Any], status: int, operation: str = "") -> None:
        self.envelope = dict(envelope)
        self.status = status
        self.operation = operation
        self.code = str(self.envelope.get("code", ""))
        self.retryable = bool(self.envelope.get("retryable", False))
        where = f"{operation}: " if operation else ""
        super().__init__(f"{where}{self.code}: {self.envelope.get('message', '')} (status {status})")


def _operation_name(operation: Any) -> tuple[str, str]:
    if isinstance(operation, str):
        pkg, sep, op = operation.partition("/")
        if sep and pkg and op:
            return pkg, op
    elif isinstance(operation, Mapping):
        pkg = operation.get("packageId", operation.get("package_id", operation.get("package")))
        op = operation.get("operationId", operation.get("operation_id", operation.get("operation")))
        if isinstance(pkg, str) and isinstance(op, str) and pkg and op:
            return pkg, op
    elif isinstance(operation, tuple) and len(operation) == 2 and all(isinstance(x, str) and x for x in operation):
        return operation[0], operation[1]
    raise TypeError(
        f"mock_tool: operation must be {{'packageId': ..., 'operationId': ...}}, 'package/operation' or "
        f"(package, operation); got {operation!r}"
    )


def _default_input(*args: Any, **kwargs: Any) -> Any:
    if len(args) == 1 and not kwargs and isinstance(args[0], Mapping):
        return dict(args[0])
    if not args:
        return kwargs
    raise TypeError(
        "mock_tool: the call has positional arguments and no input= mapping to name them: "
        "give input=lambda ...: {...} (the operation's arguments as a dict)"
    )


@overload
def mock_tool(binding: Binding, *, mode: Literal["sync"] = "sync", operation: Any, input: Callable[..., Any] | None = None,
              output: Callable[[Any], Any] | None = None, idempotency_key: Callable[..., str | None] | None = None,
              error: Callable[[dict[str, Any]], BaseException] | None = None, actor: str | None = None) -> Callable[..., Any]: ...


@overload
def mock_tool(binding: Binding, *, mode: Literal["async"], operation: Any, input: Callable[..., Any] | None = None,
              output: Callable[[Any], Any] | None = None, idempotency_key: Callable[..., str | None] | None = None,
              error: Callable[[dict[str, Any]], BaseException] | None = None, actor: str | None = None) -> Callable[..., Awaitable[Any]]: ...


def mock_tool(
    binding: Binding,
    *,
    mode: Literal["sync", "async"] = "sync",
    operation: Any,
    input: Callable[..., Any] | None = None,
    output: Callable[[Any], Any] | None = None,
    idempotency_key: Callable[..., str | None] | None = None,
    error: Callable[[dict[str, Any]], BaseException] | None = None,
    actor: str | None = None,
) -> Callable[..., Any]:
    """A callable that answers as the world operation ``operation`` of the drill ``binding`` is bound to.

    - ``mode="sync"`` returns the value; ``mode="async"`` returns a coroutine function (its calls are awaitables).
    - ``input(*args, **kwargs)`` maps a call's arguments to the operation's arguments (a dict); without it
      a call's keyword arguments, or its one dict argument, are the arguments.
    - ``output(value)`` turns the operation's JSON output into the native return value (default: as is).
    - ``idempotency_key(*args, **kwargs)`` gives the call's key: retries of one logical request share a
      key, distinct requests get distinct keys; a repeated successful key answers its receipt.
    - An error answer raises :class:`ToolMockError` (``envelope``, ``status``), or what ``error(envelope)``
      returns: the dependency's own exception. A call after the drill ended always raises
      ToolMockError with code ``DRILL_ENDED``.

    An operation the world does not have raises ValueError here, with a did-you-mean.
    """
    if mode not in ("sync", "async"):
        raise ValueError(f"mock_tool: mode must be 'sync' or 'async', not {mode!r}")
    if not isinstance(binding, Binding):
        raise TypeError(f"mock_tool: binding must be the dryfire_sdk.Binding of a running drill, not {type(binding).__name__}")
    pkg, op = _operation_name(operation)
    name = f"{pkg}/{op}"
    known = [o.name for o in binding.operations]
    if binding.operations and name not in known:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"mock_tool: the world of drill {binding.drill!r} has no operation {name!r}{hint}; it has: {', '.join(known)}")
    if "direct" not in binding.bindings:
        raise ValueError(
            f"mock_tool: drill {binding.drill!r}'s target lists bindings [{', '.join(binding.bindings)}], not direct: "
            "mock_tool is the direct binding (add direct to target.bindings in the suite, or reach the world the way the target says)"
        )
    engine = binding.engine
    path = f"{binding.path}/ops/{urllib.parse.quote(pkg, safe='')}/{urllib.parse.quote(op, safe='.-_~')}"
    map_input = input or _default_input
    base: dict[str, Any] = {}
    if actor is not None:
        base["actorId"] = actor

    def envelope_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        body = dict(base)
        body["arguments"] = map_input(*args, **kwargs)
        if idempotency_key is not None:
            key = idempotency_key(*args, **kwargs)
            if key is not None:
                body["idempotencyKey"] = str(key)
        return body

    def result_of(status: int, answer: Any) -> Any:
        if isinstance(answer, dict) and answer.get("status") == "ok":
            value = answer.get("output")
            return output(value) if output is not None else value
        env = answer.get("error") if isinstance(answer, dict) else None
        if not isinstance(env, dict):
            env = {"code": "UNEXPECTED_ANSWER", "message": f"the world answered {status}: {json.dumps(answer)[:300]}", "retryable": False}
        if env.get("code") != "DRILL_ENDED" and error is not None:
            raise error(dict(env))
        raise ToolMockError(env, status, name)

    def ended() -> ToolMockError:
        return ToolMockError({"code": "DRILL_ENDED", "retryable": False,
                              "message": f"drill {binding.drill} ({binding.id}) has ended: a retained mock_tool callable, or a call after the test, reaches no world"},
                             410, name)

    if mode == "sync":
        def call(*args: Any, **kwargs: Any) -> Any:
            if binding.ended:
                raise ended()
            status, answer = engine.request("POST", path, envelope_of(args, kwargs))
            return result_of(status, answer)
        fn: Callable[..., Any] = call
    else:
        async def acall(*args: Any, **kwargs: Any) -> Any:
            if binding.ended:
                raise ended()
            status, answer = await engine.arequest("POST", path, envelope_of(args, kwargs))
            return result_of(status, answer)
        fn = acall
    fn.__name__ = fn.__qualname__ = f"mock_tool[{name}]"
    fn.__doc__ = f"The world operation {name} of drill {binding.drill!r} ({mode})."
    return fn
