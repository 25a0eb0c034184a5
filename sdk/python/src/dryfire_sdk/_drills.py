"""run_drills: a world suite's drill with the test's own function as the agent."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import urllib.parse
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from ._engine import Engine, default_engine
from ._errors import DryfireError

__all__ = ["Binding", "DrillContext", "DrillResult", "Operation", "Task", "Verdict", "run_drills", "run_drills_async"]


@dataclass(frozen=True)
class Task:
    """What the drill asks the agent to do: the case's ``input``."""

    instruction: str
    input: str


@dataclass(frozen=True)
class Operation:
    """One operation of the drill's world, as the engine lists it."""

    package: str
    operation: str
    tool: str
    input_schema: Any
    output_schema: Any
    errors: tuple[str, ...]
    idempotent: bool

    @property
    def name(self) -> str:
        return f"{self.package}/{self.operation}"


class Binding:
    """A drill's world, reachable while the drill runs.

    ``url`` and the ``*_url`` attributes are the drill's routes (MCP, ``/tools``, ``/ops``, the world's
    control API); ``env`` is what an agent program or an SDK client needs to reach them
    (``OPENAI_BASE_URL``, ``DRYFIRE_MCP_URL``, ...). Its methods call the world's control routes.
    """

    def __init__(self, engine: Engine, drill: str, raw: Mapping[str, Any]) -> None:
        self.engine = engine
        self.drill = drill
        self.id: str = raw["id"]
        self.url: str = raw["url"]
        self.mcp_url: str = raw["mcp_url"]
        self.tools_url: str = raw["tools_url"]
        self.ops_url: str = raw["ops_url"]
        self.world_url: str = raw["world_url"]
        self.env: dict[str, str] = dict(raw.get("env") or {})
        # The bindings the drill's agent may use (its suite's target.bindings): the engine refuses
        # a call through any other, and mock_tool (the direct binding) raises at once without direct.
        self.bindings: tuple[str, ...] = tuple(raw.get("bindings") or ("direct", "mcp", "http"))
        self.operations: tuple[Operation, ...] = tuple(
            Operation(
                package=o["package"], operation=o["operation"], tool=o.get("tool", ""),
                input_schema=o.get("input_schema"), output_schema=o.get("output_schema"),
                errors=tuple(o.get("errors") or ()), idempotent=bool(o.get("idempotent")),
            )
            for o in raw.get("operations") or ()
        )
        self.path = urllib.parse.urlsplit(self.url).path.rstrip("/")
        self.ended = False

    def __repr__(self) -> str:
        return f"<dryfire_sdk.Binding drill={self.drill!r} url={self.url!r}{' ended' if self.ended else ''}>"

    def _world(self, method: str, sub: str, body: Any = None) -> Any:
        status, answer = self.engine.request(method, f"{self.path}/world{sub}", body)
        if status >= 400:
            err = (answer or {}).get("error") if isinstance(answer, dict) else None
            msg = err.get("message") if isinstance(err, dict) else repr(answer)
            raise DryfireError(f"{method} {self.world_url}{sub}: {status}: {msg}")
        return answer

    def reset(self, package: str | None = None) -> None:
        """Reset the whole world, or one package, to its start (the evidence is kept).

        This does not touch your test runner's mocks: restore those yourself.
        """
        self._world("POST", "/reset" + (f"/{urllib.parse.quote(package, safe='')}" if package else ""))

    def advance_clock(self, by: str | float) -> str:
        """Move the world's virtual clock on (``"10m"``, or seconds); due events fire. Returns the new time."""
        return str(self._world("POST", "/clock/advance", {"by": by})["now"])

    def clock(self) -> str:
        return str(self._world("GET", "/clock")["now"])

    def state(self) -> dict[str, Any]:
        """The world's state now: package → collection → value."""
        return dict(self._world("GET", "/state"))

    def evidence(self, since: int | None = None) -> dict[str, Any]:
        """``{"evidence": [...], "events": [...]}`` so far (after seq ``since``)."""
        return dict(self._world("GET", "/evidence" + (f"?since={int(since)}" if since is not None else "")))

    def world(self) -> dict[str, Any]:
        return dict(self._world("GET", ""))


@dataclass(frozen=True)
class DrillContext:
    """What the agent function gets: the task, and the binding to the drill's world."""

    task: Task
    binding: Binding
    drill: str
    seed: int
    build_hash: str


@dataclass
class DrillResult:
    """The verdict of a drill and everything it is based on (as the engine's ``end`` answers it)."""

    drill: str
    verdict: str
    status: str
    failures: list[str]
    checks: list[dict[str, Any]]
    seed: int
    build_hash: str
    state: Any
    evidence: list[dict[str, Any]]
    events: list[Any]
    report: dict[str, Any]
    build: Any = None
    reproduction: dict[str, Any] | None = None
    output: Any = None
    exception: BaseException | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    def render(self) -> str:
        """The verdict as a person reads it: the checks, the failures, the evidence."""
        return render_result(self)

    def assert_passed(self) -> None:
        """Raise AssertionError with :meth:`render` unless the verdict is passed."""
        if not self.passed:
            raise AssertionError(self.render())


class Verdict(str):
    """A drill's verdict (``"passed"`` or ``"failed"``), a str that knows its result, so that pytest
    can show the whole verdict when ``assert result.verdict == "passed"`` fails."""

    result: DrillResult | None = None

    def __new__(cls, value: str, result: DrillResult | None = None) -> Verdict:
        v = super().__new__(cls, value)
        v.result = result
        return v


AgentFn = Callable[[DrillContext], Union[Any, Awaitable[Any]]]


def _start_body(drill: str | None, suite: str | os.PathLike[str] | None, setup: Mapping[str, Any] | None, seed: int | None,
                actor: str | None, record: str | None, reproduce: Mapping[str, Any] | None, cwd: str | os.PathLike[str] | None) -> dict[str, Any]:
    if reproduce is None and not drill:
        raise TypeError("run_drills needs drill= (the name of a case of a world suite), or reproduce= (a stored result's report)")
    body: dict[str, Any] = {"cwd": os.fspath(cwd) if cwd is not None else os.getcwd()}
    if drill:
        body["drill"] = drill
    if suite is not None:
        body["suite"] = os.fspath(suite)
    if setup is not None:
        body["setup"] = dict(setup)
    if seed is not None:
        body["seed"] = int(seed)
    if actor is not None:
        body["actor"] = actor
    if record is not None:
        body["record"] = record
    if reproduce is not None:
        body["reproduce"] = _report_of(reproduce)
    return body


def _report_of(reproduce: Any) -> Any:
    if isinstance(reproduce, DrillResult):
        return reproduce.report
    if isinstance(reproduce, (str, os.PathLike)):
        with open(reproduce, encoding="utf-8") as f:
            return json.load(f)
    return reproduce


def _context(engine: Engine, started: Mapping[str, Any]) -> DrillContext:
    drill = str(started.get("drill", ""))
    task = started.get("task") or {}
    return DrillContext(
        task=Task(instruction=str(task.get("instruction", "")), input=str(task.get("input", task.get("instruction", "")))),
        binding=Binding(engine, drill, started["binding"]),
        drill=drill, seed=int(started.get("seed", 0)), build_hash=str(started.get("build_hash", "")),
    )


def _output_of(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def _error_of(e: BaseException) -> str:
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _result(ctx: DrillContext, answer: Mapping[str, Any], output: Any, exc: BaseException | None) -> DrillResult:
    r = DrillResult(
        drill=ctx.drill, verdict=str(answer.get("verdict", "")), status=str(answer.get("status", "")),
        failures=list(answer.get("failures") or []), checks=list(answer.get("checks") or []),
        seed=int(answer.get("seed", ctx.seed)), build_hash=str(answer.get("build_hash", ctx.build_hash)),
        state=answer.get("state"), evidence=list(answer.get("evidence") or []), events=list(answer.get("events") or []),
        report=dict(answer.get("report") or {}), build=answer.get("build"), reproduction=answer.get("reproduction"),
        output=output, exception=exc, raw=dict(answer),
    )
    r.verdict = Verdict(r.verdict, r)
    for observe in _observers:
        observe(r)
    return r


# Called with every DrillResult as it is made (the pytest plugin shows the failed ones under the
# failure of the test that made them).
_observers: list[Callable[[DrillResult], None]] = []


# The protocol of one drill, written once for run_drills and
# run_drills_async: a generator that yields what is to be done (a control
# request, or running the agent) and is sent the outcome; each driver does
# those steps its own way (blocking, or awaiting).
class _Control:
    __slots__ = ("method", "path", "body")

    def __init__(self, method: str, path: str, body: Any) -> None:
        self.method, self.path, self.body = method, path, body


class _RunAgent:
    __slots__ = ("ctx",)

    def __init__(self, ctx: DrillContext) -> None:
        self.ctx = ctx


def _drill(eng: Engine, start: Mapping[str, Any]) -> Generator[Any, Any, DrillResult]:
    started = yield _Control("POST", "/engine/drills", start)
    ctx = _context(eng, started)
    output, exc = yield _RunAgent(ctx)
    try:
        answer = yield _Control("POST", f"/engine/drills/{ctx.binding.id}/end",
                                {"output": _output_of(output), "error": None if exc is None else _error_of(exc)})
    finally:
        ctx.binding.ended = True
    return _result(ctx, answer, output, exc)


def run_drills(
    *,
    drill: str | None = None,
    agent: AgentFn,
    setup: Mapping[str, Any] | None = None,
    suite: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    actor: str | None = None,
    record: str | None = None,
    reproduce: Any = None,
    cwd: str | os.PathLike[str] | None = None,
    engine: Engine | None = None,
) -> DrillResult:
    """Run one drill of a world suite with ``agent`` as its agent, and return its verdict.

    ``agent(ctx)`` gets a :class:`DrillContext` (``ctx.task.instruction``, ``ctx.binding``); what it
    returns is the drill's output (the ``output`` checks read it), an exception it raises fails the
    drill with ``the agent failed: ...`` (the exception is kept in ``result.exception``). An agent
    that is a coroutine function is run with ``asyncio.run`` (use :func:`run_drills_async` inside an
    event loop). ``reproduce`` is a stored result (a :class:`DrillResult`, its ``report``, or the
    path of a report file): the drill then starts from that report's build and seed.
    """
    eng = engine or default_engine()
    steps = _drill(eng, _start_body(drill, suite, setup, seed, actor, record, reproduce, cwd))
    answer: Any = None
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        if isinstance(step, _Control):
            try:
                answer = eng.control(step.method, step.path, step.body)
            except BaseException:
                steps.close()  # the protocol's finally: the binding ends
                raise
            continue
        try:
            value = agent(step.ctx)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
            answer = (value, None)
        except Exception as e:  # the agent's failure is the drill's
            answer = (None, e)
        except BaseException:
            _abandon(eng, step.ctx)
            raise


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


async def run_drills_async(
    *,
    drill: str | None = None,
    agent: AgentFn,
    setup: Mapping[str, Any] | None = None,
    suite: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    actor: str | None = None,
    record: str | None = None,
    reproduce: Any = None,
    cwd: str | os.PathLike[str] | None = None,
    engine: Engine | None = None,
) -> DrillResult:
    """:func:`run_drills` for an event loop: the agent may be a coroutine function, or a plain one."""
    eng = engine or await asyncio.get_running_loop().run_in_executor(None, default_engine)
    steps = _drill(eng, _start_body(drill, suite, setup, seed, actor, record, reproduce, cwd))
    answer: Any = None
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        if isinstance(step, _Control):
            try:
                answer = await eng.acontrol(step.method, step.path, step.body)
            except BaseException:
                steps.close()  # the protocol's finally: the binding ends
                raise
            continue
        try:
            value = agent(step.ctx)
            if inspect.isawaitable(value):
                value = await value
            answer = (value, None)
        except Exception as e:
            answer = (None, e)
        except BaseException:  # cancelled: no verdict, no cassette
            await asyncio.shield(_aabandon(eng, step.ctx))
            raise


def _abandon(eng: Engine, ctx: DrillContext) -> None:
    ctx.binding.ended = True
    try:
        eng.control("DELETE", f"/engine/drills/{ctx.binding.id}")
    except DryfireError:
        pass


async def _aabandon(eng: Engine, ctx: DrillContext) -> None:
    ctx.binding.ended = True
    try:
        await eng.acontrol("DELETE", f"/engine/drills/{ctx.binding.id}")
    except DryfireError:
        pass


def _compact(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _rel(path: str) -> str:
    cwd = os.getcwd() + os.sep
    return path[len(cwd):] if path.startswith(cwd) else path


def render_result(r: DrillResult) -> str:
    """A drill's verdict as text: a headline, every check (failed ones with their message), the
    agent's error, then one line per evidence entry."""
    failed = [c for c in r.checks if not c.get("passed")]
    head = f"drill {r.drill!r} {r.verdict or r.status}"
    if r.status == "error":
        head = f"drill {r.drill!r} erred"
    head += f" (seed {r.seed}, {r.build_hash[:19]})"
    if r.checks:
        head += f": {len(failed)} of {len(r.checks)} checks failed" if failed else f": {len(r.checks)} checks passed"
    lines = [head]
    for c in r.checks:
        mark = "ok  " if c.get("passed") else "FAIL"
        lines.append(f"  {mark} {c.get('check', '')}" + (f"  ({_rel(str(c['at']))})" if c.get("at") else ""))
        if not c.get("passed") and c.get("message"):
            lines += [f"         {m}" for m in str(c["message"]).splitlines()]
    check_msgs = {str(c.get("message", "")) for c in failed}
    others = [f for f in r.failures if not any(m and m in f for m in check_msgs)]
    for f in others:
        lines.append(f"  {f}")
    case = (r.report.get("cases") or [{}])[0] if r.report else {}
    if case.get("reason") and r.status == "error":
        lines.append(f"  reason: {case['reason']}")
    if r.evidence:
        lines.append("evidence:")
        for e in r.evidence:
            outcome = e.get("outcome", "")
            res = e.get("result")
            env = res.get("error") if isinstance(res, dict) and isinstance(res.get("error"), dict) else res
            if e.get("is_error") and isinstance(env, dict) and "code" in env:
                res_text = f"{env.get('code', '')} {env.get('message', '')!r}"
            else:
                res_text = _compact(res)
            extra = ""
            ov = e.get("override")
            if isinstance(ov, dict):
                extra += f" [override {ov.get('id')} ({ov.get('scope')})]"
            if e.get("fault"):
                fault = e["fault"]
                extra += f" [fault {fault.get('id', fault) if isinstance(fault, dict) else fault}]"
            if e.get("idempotency_key"):
                extra += f" [key {e['idempotency_key']}]"
            lines.append(f"  {e.get('seq', '')}. {e.get('time', '')} {e.get('actor', '')} {e.get('operation', '')} "
                         f"{_compact(e.get('arguments'))} -> {outcome}: {res_text}{extra}")
    if r.output is not None or case.get("output"):
        out = case.get("output", r.output)
        lines.append(f"output: {out if isinstance(out, str) else _compact(out)!r}" if isinstance(out, str) else f"output: {_compact(out)}")
    return "\n".join(lines)
