"""The dryfire pytest plugin (entry point ``pytest11``, loaded when the package is installed).

- Suites as tests: every ``*.dryfire.yaml`` / ``.yml`` file pytest finds is collected, each case one
  item (``-k``, ``--junitxml`` and pytest-xdist work on them); a file's selected cases run with one
  ``dryfire run`` per file and process, and a case that does not pass fails with dryfire's text.
- Fixtures: ``dryfire_engine`` (one engine per session, so one per xdist worker) and
  ``dryfire_drill`` (a started drill, named by ``@pytest.mark.dryfire_drill("name", ...)``).
- ``assert result.verdict == "passed"`` on a failed drill shows the checks, expected vs got, and the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import _drills
from ._binary import find_binary
from ._drills import DrillResult, Verdict
from ._engine import Engine, set_default_engine
from ._suites import CaseResult, case_names, run_suite

_RECORD_MODES = ("none", "once", "new", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("dryfire", "dryfire suites and drills")
    g.addoption("--dryfire-record", choices=_RECORD_MODES, default=None,
                help="record mode of model cassettes: none|once|new|all (default: none when CI is set, else once)")
    g.addoption("--dryfire-concurrency", type=int, default=None, metavar="N",
                help="cases dryfire runs at once within one suite file (default 8; results never depend on it)")
    g.addoption("--dryfire-python", default=None, metavar="PATH",
                help="the Python interpreter for impl: mocks (default: $DRYFIRE_PYTHON, then python3)")
    g.addoption("--no-dryfire-suites", action="store_true", default=False,
                help="do not collect *.dryfire.yaml files as tests")
    parser.addini("dryfire_suites", "collect *.dryfire.yaml files as tests (default true)", type="bool", default=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dryfire_drill(name, *, suite=None, setup=None, seed=None, actor=None, record=None): "
                                       "the drill the dryfire_drill fixture starts")


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    name = file_path.name
    if not (name.endswith(".dryfire.yaml") or name.endswith(".dryfire.yml")):
        return None
    cfg = parent.config
    if cfg.getoption("--no-dryfire-suites") or not cfg.getini("dryfire_suites"):
        return None
    return DryfireSuite.from_parent(parent, path=file_path)


_WORLD_KEY = re.compile(r"^world\s*:", re.M)
_AGENT_KEY = re.compile(r"^agent\s*:", re.M)


class DryfireSuite(pytest.File):
    """A suite file: one item per case.

    A world suite without ``agent:`` holds drills for the SDK (each test's own function is their
    agent): it is not collected, as its drills run from the tests that name them.
    """

    def collect(self) -> Iterator[pytest.Item]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise self.CollectError(f"reading {self.path}: {e}") from e
        if _WORLD_KEY.search(text) and not _AGENT_KEY.search(text):
            return
        names = case_names(text)
        self._names = names
        self._results: dict[str, CaseResult] | None = None
        self._out = ""
        if names is None:  # a shape the reader does not follow: the file is one test
            yield DryfireCase.from_parent(self, name=self.path.name, case=None)
            return
        for n in names:
            yield DryfireCase.from_parent(self, name=n, case=n)

    def results(self) -> tuple[dict[str, CaseResult], str]:
        if self._results is None:
            cfg = self.config
            selected = [it.case for it in self.session.items if isinstance(it, DryfireCase) and it.parent is self and it.case is not None]
            names = None if self._names is None or len(selected) == len(self._names) else selected
            results, out, code = run_suite(
                find_binary(), str(cfg.rootpath), str(self.path), names,
                record=cfg.getoption("--dryfire-record"), concurrency=cfg.getoption("--dryfire-concurrency"),
                python=cfg.getoption("--dryfire-python"),
            )
            if not results and code != 0:
                self._out = out
            self._results = results
        return self._results, self._out


class DryfireCaseFailure(Exception):
    pass


class DryfireCase(pytest.Item):
    """One case of a suite file."""

    def __init__(self, *, case: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        suite = self.parent
        assert isinstance(suite, DryfireSuite)
        results, out = suite.results()
        if not results:
            raise DryfireCaseFailure(out.strip() or f"dryfire run {suite.path} gave no report")
        if self.case is None:
            bad = [r for r in results.values() if r.status in ("failed", "error")]
            if bad:
                raise DryfireCaseFailure("\n".join(r.text or f"{r.status}: {r.reason}" for r in bad))
            return
        r = results.get(self.case)
        if r is None:
            raise DryfireCaseFailure(
                f"case {self.case!r} is not in the report of dryfire run {suite.path} (its cases: "
                f"{', '.join(repr(k) for k in results)}): the plugin read the case names differently from dryfire"
            )
        self.user_properties.append(("dryfire_status", r.status))
        if r.status == "skipped":
            pytest.skip(r.reason or "skipped")
        if r.status != "passed":
            raise DryfireCaseFailure(r.text or f"{r.status}: {r.reason}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, DryfireCaseFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # The domain is the failure's headline. pytest shows a domain that ends the
        # node id with its dots as "::" (for module.Class names) in -v lines; the
        # trailing space keeps the file's and the case's dots as they are.
        return self.path, None, f"{self.path.name}::{self.name} "


# Fixtures.


@pytest.fixture(scope="session")
def dryfire_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """The dryfire engine of this test session (of this xdist worker), started in the rootdir.

    ``run_drills`` without ``engine=`` uses it while the session lasts.
    """
    cfg = request.config
    eng = Engine.start(cwd=str(cfg.rootpath), record=cfg.getoption("--dryfire-record"), python=cfg.getoption("--dryfire-python"))
    prev = set_default_engine(eng)
    try:
        yield eng
    finally:
        set_default_engine(prev)
        eng.close()


class DrillFixture:
    """A drill started for one test: ``binding`` and ``task`` now, ``end(output)`` for the verdict."""

    def __init__(self, engine: Engine, started: dict[str, Any]) -> None:
        self.engine = engine
        self.context = _drills._context(engine, started)
        self.binding = self.context.binding
        self.task = self.context.task
        self.result: DrillResult | None = None

    def end(self, output: Any = None, error: BaseException | str | None = None) -> DrillResult:
        """End the drill with the agent's output (or its error) and return the verdict."""
        if self.result is not None:
            return self.result
        err = None if error is None else (error if isinstance(error, str) else _drills._error_of(error))
        try:
            answer = self.engine.control("POST", f"/engine/drills/{self.binding.id}/end", {"output": _drills._output_of(output), "error": err})
        finally:
            self.binding.ended = True
        self.result = _drills._result(self.context, answer, output, error if isinstance(error, BaseException) else None)
        return self.result

    def abandon(self) -> None:
        if self.result is None and not self.binding.ended:
            _drills._abandon(self.engine, self.context)


@pytest.fixture
def dryfire_drill(request: pytest.FixtureRequest, dryfire_engine: Engine) -> Iterator[DrillFixture]:
    """A drill started for this test, named by ``@pytest.mark.dryfire_drill("drill", suite=..., setup=..., seed=...)``.

    Call mock_tool(dryfire_drill.binding, ...), run the agent, then ``dryfire_drill.end(output)``; a
    drill the test did not end is abandoned after it (no verdict, no cassette).
    """
    marker = request.node.get_closest_marker("dryfire_drill")
    if marker is None or not (marker.args or marker.kwargs.get("drill")):
        raise pytest.UsageError(f"{request.node.nodeid}: the dryfire_drill fixture needs @pytest.mark.dryfire_drill(\"DRILL\", ...) naming the drill")
    kw = dict(marker.kwargs)
    drill = kw.pop("drill", None) or marker.args[0]
    unknown = set(kw) - {"suite", "setup", "seed", "actor", "record", "cwd"}
    if unknown:
        raise pytest.UsageError(f"{request.node.nodeid}: dryfire_drill marker: unknown keyword(s) {', '.join(sorted(unknown))} "
                                "(known: suite, setup, seed, actor, record, cwd)")
    cwd = kw.pop("cwd", None) or str(request.path.parent)
    body = _drills._start_body(drill, kw.get("suite"), kw.get("setup"), kw.get("seed"), kw.get("actor"), kw.get("record"), None, cwd)
    fx = DrillFixture(dryfire_engine, dryfire_engine.control("POST", "/engine/drills", body))
    try:
        yield fx
    finally:
        fx.abandon()


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    """``assert result.verdict == "passed"``: the verdict's headline and failed checks (pytest may
    shorten this; the whole verdict is the report section of the test's failure)."""
    for side in (left, right):
        if isinstance(side, Verdict) and side.result is not None and op in ("==", "!="):
            lines = side.result.render().splitlines()
            return [f"{left!r} {op} {right!r}", lines[0], *(x for x in lines[1:] if x.startswith("  FAIL "))]
    return None


_results_key = pytest.StashKey[list[DrillResult]]()
_current: list[pytest.Item] = []


def _observe(r: DrillResult) -> None:
    if _current:
        _current[-1].stash.setdefault(_results_key, []).append(r)


_drills._observers.append(_observe)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _current.append(item)
    try:
        return (yield)
    finally:
        _current.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test shows every failed drill it ran: checks, expected vs got, evidence, output."""
    report = yield
    if report.when == "call" and report.failed:
        for r in item.stash.get(_results_key, []):
            if not r.passed:
                report.sections.append((f"dryfire verdict: drill {r.drill!r}", r.render()))
    return report
