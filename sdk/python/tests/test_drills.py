"""run_drills and mock_tool against the real engine: one test per rule, named after it."""

from __future__ import annotations

import asyncio
import json
import threading
import unittest.mock
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import dryfire_sdk
from dryfire_sdk import DrillContext, EngineError, run_drills, run_drills_async
from dryfire_sdk.testing import ToolMockError, mock_tool

from . import records_client

RECORDS = Path(__file__).resolve().parents[3] / "examples" / "pytest"
SAVE = {"packageId": "record-store", "operationId": "records.save"}
BUSY_ONCE = {
    "id": "busy-once", "operation": SAVE, "when": {"arguments": {"id": "record-1"}}, "times": 1,
    "outcome": {"kind": "error", "code": "BUSY", "message": "Try again", "retryable": True},
}


def drill(agent: Any, name: str = "save-record", **kw: Any) -> dryfire.DrillResult:
    return run_drills(drill=name, agent=agent, cwd=RECORDS, **kw)


def save_mock(d: DrillContext, **kw: Any) -> Any:
    kw.setdefault("input", lambda id, text: {"id": id, "text": text})
    return mock_tool(d.binding, operation=SAVE, **kw)


@pytest.fixture(autouse=True)
def _engine(dryfire_engine: dryfire_sdk.Engine) -> None:
    """Every test here uses the session's engine (run_drills' default while it lasts)."""


def test_sync_mode_returns_the_operations_value() -> None:
    got = []

    def agent(d: DrillContext) -> str:
        save = save_mock(d)
        got.append(save("record-1", "hello"))
        return "Saved record-1."

    r = drill(agent)
    assert got == [{"id": "record-1", "version": 1}]
    assert r.verdict == "passed"
    assert r.state["record-store"]["records"]["record-1"] == {"text": "hello", "version": 1}


def test_async_mode_returns_an_awaitable() -> None:
    async def agent(d: DrillContext) -> str:
        save = save_mock(d, mode="async")
        pending = save("record-1", "hello")
        assert asyncio.iscoroutine(pending)
        assert await pending == {"id": "record-1", "version": 1}
        return "Saved record-1."

    assert drill(agent).verdict == "passed"


def test_output_maps_the_value_to_the_native_return_shape() -> None:
    def agent(d: DrillContext) -> str:
        save = save_mock(d, output=lambda v: (v["id"], v["version"]))
        assert save("record-1", "hello") == ("record-1", 1)
        return "Saved"

    assert drill(agent).verdict == "passed"


def test_without_input_keyword_arguments_are_the_operations_arguments() -> None:
    def agent(d: DrillContext) -> str:
        save = mock_tool(d.binding, operation="record-store/records.save")
        assert save(id="record-1", text="hello") == {"id": "record-1", "version": 1}
        with pytest.raises(TypeError, match="positional arguments and no input= mapping"):
            save("record-1", "hello")
        return "Saved"

    assert drill(agent).verdict == "passed"


def test_a_failed_operation_raises_ToolMockError_with_envelope_and_status() -> None:
    seen: list[ToolMockError] = []

    def agent(d: DrillContext) -> str:
        save = save_mock(d)
        try:
            save("record-1", "hello")
        except ToolMockError as e:
            seen.append(e)
        save("record-1", "hello")
        return "Saved after a retry"

    r = drill(agent, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})
    assert r.verdict == "passed"
    [e] = seen
    assert e.envelope == {"code": "BUSY", "message": "Try again", "retryable": True}
    assert e.status == 503 and e.code == "BUSY" and e.retryable
    assert str(e) == "record-store/records.save: BUSY: Try again (status 503)"
    # A declared error that is not retryable is a 422.
    def too_long(d: DrillContext) -> str:
        with pytest.raises(ToolMockError) as info:
            save_mock(d)("record-1", "x" * 101)
        assert (info.value.code, info.value.status) == ("TOO_LONG", 422)
        return ""
    drill(too_long)


class StoreBusy(Exception):
    """The records client's own exception."""


def test_error_builds_the_dependencys_own_exception() -> None:
    def agent(d: DrillContext) -> str:
        save = save_mock(d, error=lambda env: StoreBusy(env["code"], env["message"]))
        with pytest.raises(StoreBusy) as info:
            save("record-1", "hello")
        assert info.value.args == ("BUSY", "Try again")
        return "Saved"

    drill(agent, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})


def test_a_repeated_successful_key_returns_its_receipt() -> None:
    def agent(d: DrillContext) -> str:
        save = save_mock(d, idempotency_key=lambda id, text: f"save-{id}")
        with pytest.raises(ToolMockError):
            save("record-1", "hello")  # BUSY: not a success, no receipt
        assert save("record-1", "hello") == {"id": "record-1", "version": 1}
        assert save("record-1", "changed") == {"id": "record-1", "version": 1}  # the receipt
        return "Saved"

    r = drill(agent, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})
    assert [e["outcome"] for e in r.evidence] == ["error", "behavior", "receipt"]
    assert [e["idempotency_key"] for e in r.evidence] == ["save-record-1"] * 3
    assert r.state["record-store"]["records"]["record-1"] == {"text": "hello", "version": 1}


def test_an_unknown_operation_raises_at_creation_with_a_did_you_mean() -> None:
    def agent(d: DrillContext) -> str:
        with pytest.raises(ValueError, match=r"has no operation 'record-store/record.save' \(did you mean 'record-store/records.save'\?\)"):
            mock_tool(d.binding, operation={"packageId": "record-store", "operationId": "record.save"})
        with pytest.raises(TypeError, match="operation must be"):
            mock_tool(d.binding, operation="records.save")
        return ""

    r = drill(agent)
    assert r.evidence == []  # no request was made


def target_suite(tmp_path: Path, bindings: str) -> Path:
    for f in ("records.world.yaml", "records.star"):
        (tmp_path / f).write_bytes((RECORDS / f).read_bytes())
    (tmp_path / "target.dryfire.yaml").write_text(
        "version: 1\nworld: records.world.yaml\n"
        f"target: {{kind: external, bindings: [{bindings}]}}\n"
        "cases:\n  - name: save-record\n    input: Save record-1 with the text hello.\n"
    )
    return tmp_path


def test_the_notes_target_is_an_sdk_drill_and_other_bindings_are_refused(tmp_path: Path) -> None:
    def agent(d: DrillContext) -> str:
        assert d.binding.bindings == ("direct",)
        req = urllib.request.Request(d.binding.mcp_url, data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        assert refused.value.code == 403
        assert json.loads(refused.value.read())["error"]["code"] == "BINDING_NOT_DECLARED"
        save_mock(d)("record-1", "hello")
        return "Saved record-1."

    r = run_drills(drill="save-record", agent=agent, cwd=target_suite(tmp_path, "direct"))
    assert [e["operation"] for e in r.evidence] == ["record-store/records.save"]


def test_mock_tool_without_the_direct_binding_raises_at_creation(tmp_path: Path) -> None:
    def agent(d: DrillContext) -> str:
        with pytest.raises(ValueError, match=r"target lists bindings \[mcp\], not direct: mock_tool is the direct binding"):
            save_mock(d)
        return ""

    r = run_drills(drill="save-record", agent=agent, cwd=target_suite(tmp_path, "mcp"))
    assert r.evidence == []  # no request was made


def test_a_retained_callable_raises_after_its_binding_expires() -> None:
    kept: dict[str, Any] = {}

    def agent(d: DrillContext) -> str:
        kept["sync"] = save_mock(d)
        kept["async"] = save_mock(d, mode="async")
        kept["binding"] = d.binding
        return ""

    drill(agent)
    with pytest.raises(ToolMockError) as info:
        kept["sync"]("record-1", "hello")
    assert info.value.code == "DRILL_ENDED" and info.value.status == 410
    assert "has ended: a retained mock_tool callable" in str(info.value)
    with pytest.raises(ToolMockError, match="DRILL_ENDED"):
        asyncio.run(kept["async"]("record-1", "hello"))
    # The engine says the same to anything else that kept the URL.
    status, answer = kept["binding"].engine.request("POST", kept["binding"].path + "/ops/record-store/records.save",
                                                   {"arguments": {"id": "record-1", "text": "x"}})
    assert status == 410 and answer["error"]["code"] == "DRILL_ENDED"


def test_a_retained_callable_never_reaches_the_real_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[Any] = []

    def agent(d: DrillContext) -> Any:
        fake = save_mock(d, error=lambda env: StoreBusy(env))
        monkeypatch.setattr(records_client, "save_record", fake)
        kept.append(fake)
        return records_client.save_record("record-1", "hello")

    drill(agent)
    # The test forgot to restore its patch: a later call still reaches no real service.
    with pytest.raises(ToolMockError, match="DRILL_ENDED"):
        records_client.save_record("record-1", "again")
    assert records_client.REAL_CALLS == []


def test_it_works_with_unittest_mock_patch() -> None:
    def agent(d: DrillContext) -> str:
        with unittest.mock.patch.object(records_client, "save_record", side_effect=save_mock(d)) as m:
            out = records_client.save_and_report("record-1", "hello")
        assert m.call_args_list == [unittest.mock.call("record-1", "hello")]
        return out

    r = drill(agent)
    assert r.verdict == "passed", r.render()
    assert records_client.REAL_CALLS == []


def test_it_works_with_monkeypatch(monkeypatch: pytest.MonkeyPatch) -> None:
    def agent(d: DrillContext) -> str:
        monkeypatch.setattr(records_client, "save_record", save_mock(d))
        return records_client.save_and_report("record-1", "hello")

    assert drill(agent).verdict == "passed"
    assert records_client.REAL_CALLS == []


def test_it_works_with_mocker(mocker: Any) -> None:
    def agent(d: DrillContext) -> str:
        spy = mocker.patch.object(records_client, "save_record", side_effect=save_mock(d))
        out = records_client.save_and_report("record-1", "hello")
        assert spy.call_count == 1
        return out

    assert drill(agent).verdict == "passed"
    assert records_client.REAL_CALLS == []


def test_the_agents_exception_fails_the_drill_and_is_kept() -> None:
    def agent(d: DrillContext) -> str:
        raise RuntimeError("the agent broke")

    r = drill(agent)
    assert r.verdict == "failed"
    assert "the agent failed: RuntimeError: the agent broke" in r.failures
    assert isinstance(r.exception, RuntimeError)


def test_an_unknown_drill_is_an_engine_error_with_a_did_you_mean() -> None:
    with pytest.raises(EngineError) as info:
        drill(lambda d: "", name="save-recrod")
    assert info.value.code == "UNKNOWN_DRILL" and info.value.status == 404
    assert "save-record" in str(info.value)


def test_an_invalid_setup_names_the_key_path() -> None:
    bad = dict(BUSY_ONCE, outcome={"kind": "error", "code": "NOPE", "message": "x"})
    with pytest.raises(EngineError) as info:
        drill(lambda d: "", setup={"scenario": {"toolOverrides": [bad]}})
    assert info.value.code == "INVALID_SETUP"
    assert "setup.scenario.toolOverrides[0].outcome.code" in str(info.value)


def _agent_saving(text: str, key: str | None = None):
    def agent(d: DrillContext) -> str:
        save = save_mock(d, idempotency_key=(lambda id, t: key) if key else None)
        for i in range(3):
            save(f"record-{i}", f"{text}-{i}")
        return f"Saved {text}"
    return agent


def test_16_concurrent_drills_in_threads_never_share_state() -> None:
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: drill(_agent_saving(f"t{i}"), seed=i), range(16)))
    for i, r in enumerate(results):
        records = r.state["record-store"]["records"]
        assert {k: v["text"] for k, v in records.items()} == {"record-0": f"t{i}-0", "record-1": f"t{i}-1", "record-2": f"t{i}-2"}
        assert records["record-0"]["version"] == 2  # the world's own record-0, then this drill's one save
        assert [e["seq"] for e in r.evidence] == [1, 2, 3]
        assert r.seed == i and r.output == f"Saved t{i}"


def test_16_concurrent_drills_in_asyncio_never_share_state() -> None:
    def agent_for(i: int):
        async def agent(d: DrillContext) -> str:
            save = save_mock(d, mode="async")
            for j in range(3):
                await save(f"record-{j}", f"a{i}-{j}")
                await asyncio.sleep(0)
            return f"Saved a{i}"
        return agent

    async def main() -> list[dryfire.DrillResult]:
        return await asyncio.gather(*(run_drills_async(drill="save-record", agent=agent_for(i), cwd=RECORDS) for i in range(16)))

    for i, r in enumerate(asyncio.run(main())):
        records = r.state["record-store"]["records"]
        assert {k: v["text"] for k, v in records.items()} == {"record-0": f"a{i}-0", "record-1": f"a{i}-1", "record-2": f"a{i}-2"}
        assert [e["seq"] for e in r.evidence] == [1, 2, 3]


def test_mock_tool_and_an_mcp_client_in_one_drill_share_state() -> None:
    mcp = pytest.importorskip("mcp")

    async def agent(d: DrillContext) -> str:
        save = save_mock(d, mode="async")
        await save("record-1", "from mock_tool")
        async with mcp.Client(d.binding.mcp_url) as s:
            got = await s.call_tool("get_record", {"id": "record-1"})
            assert not got.is_error
            assert got.structured_content == {"text": "from mock_tool", "version": 1}
            saved = await s.call_tool("save_record", {"id": "record-1", "text": "hello"})
            assert saved.structured_content == {"id": "record-1", "version": 2}
        assert (await save("record-1", "hello")) == {"id": "record-1", "version": 3}
        return "Saved"

    r = drill(agent)
    assert r.verdict == "passed", r.render()
    assert [e["operation"] for e in r.evidence] == ["record-store/records.save", "record-store/records.get",
                                                    "record-store/records.save", "record-store/records.save"]


def test_reproducing_a_stored_report_gives_identical_evidence(tmp_path: Path) -> None:
    def agent(d: DrillContext) -> str:
        save = save_mock(d, idempotency_key=lambda id, text: f"save-{id}")
        try:
            save("record-1", "hello")
        except ToolMockError:
            save("record-1", "hello")
        return "Saved record-1."

    first = drill(agent, seed=7, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})
    assert first.verdict == "passed"
    stored = tmp_path / "report.json"
    stored.write_text(json.dumps(first.report))
    # From the result, and from the stored file: the per-test rules come back with the build.
    for source in (first, str(stored)):
        again = run_drills(agent=agent, reproduce=source, cwd=RECORDS)
        assert again.reproduction == {"identical": True, "differences": []}
        assert again.evidence == first.evidence and again.seed == 7 and again.build_hash == first.build_hash
    # Another agent against the same build: the differences are named.
    other = run_drills(agent=lambda d: save_mock(d)("record-1", "other") and "Saved", reproduce=first, cwd=RECORDS)
    assert other.reproduction is not None and not other.reproduction["identical"]
    assert other.reproduction["differences"]


def test_reset_restores_rule_counts_and_the_runners_mocks_are_separate(monkeypatch: pytest.MonkeyPatch) -> None:
    def agent(d: DrillContext) -> str:
        fake = save_mock(d)
        monkeypatch.setattr(records_client, "save_record", fake)
        with pytest.raises(ToolMockError):
            records_client.save_record("record-1", "hello")
        records_client.save_record("record-1", "hello")
        d.binding.reset()
        assert "record-1" not in d.binding.state()["record-store"]["records"]
        assert records_client.save_record is fake  # a world reset leaves the test's patch alone
        with pytest.raises(ToolMockError, match="BUSY"):  # busy-once counts again
            records_client.save_record("record-1", "hello")
        records_client.save_record("record-1", "hello")
        return "Saved"

    r = drill(agent, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})
    assert r.verdict == "passed", r.render()
    assert [e["outcome"] for e in r.evidence] == ["error", "behavior", "error", "behavior"]


def test_return_and_original_outcomes_and_scope_priority() -> None:
    stub = {"id": "stub", "operation": SAVE, "outcome": {"kind": "return", "value": {"id": "stub", "version": 0}}}
    original = {"id": "real", "operation": SAVE, "when": {"arguments": {"id": "record-2"}}, "outcome": {"kind": "original"}}

    def agent(d: DrillContext) -> str:
        save = save_mock(d)
        assert save("record-1", "hello") == {"id": "stub", "version": 0}  # return: no handler ran
        assert save("record-2", "hello") == {"id": "record-2", "version": 1}  # original: the behavior
        return "Saved"

    r = drill(agent, setup={"scenario": {"toolOverrides": [stub, original]}})
    state = r.state["record-store"]["records"]
    assert "record-1" not in state and state["record-2"]["version"] == 1
    assert [(e["override"] or {}).get("id") for e in r.evidence] == ["stub", "real"]


def test_the_binding_controls_the_world() -> None:
    def agent(d: DrillContext) -> str:
        b = d.binding
        assert b.clock() == "2026-01-01T09:00:00Z"
        assert b.advance_clock("10m") == "2026-01-01T09:10:00Z"
        save_mock(d)("record-1", "hello")
        ev = b.evidence()
        assert [e["operation"] for e in ev["evidence"]] == ["record-store/records.save"]
        assert b.evidence(since=1)["evidence"] == []
        assert {o.name for o in b.operations} == {"record-store/records.save", "record-store/records.get", "mail/send"}
        assert b.env["DRYFIRE_CASE"] == "save-record" and b.env["OPENAI_BASE_URL"] == b.url + "/v1"
        assert d.task.instruction == "Save record-1 with the text hello."
        return "Saved"

    assert drill(agent).verdict == "passed"


def test_threads_share_one_engine_and_each_thread_its_connection() -> None:
    engines = set()

    def agent(d: DrillContext) -> str:
        engines.add(id(d.binding.engine))
        save_mock(d)("record-1", "hello")
        return "Saved"

    threads = [threading.Thread(target=lambda: drill(agent)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(engines) == 1


def test_a_start_past_the_engines_drill_limit_raises_too_many_drills() -> None:
    # Drills that are never ended are bounded (DRYFIRE_MAX_DRILLS): the
    # start past the bound is refused, raised as EngineError with its code.
    import os

    with dryfire_sdk.Engine.start(cwd=RECORDS, env={**os.environ, "DRYFIRE_MAX_DRILLS": "1"}) as eng:
        first = eng.control("POST", "/engine/drills", {"drill": "save-record"})
        with pytest.raises(EngineError) as e:
            eng.control("POST", "/engine/drills", {"drill": "save-record"})
        assert e.value.code == "TOO_MANY_DRILLS"
        assert "its limit (DRYFIRE_MAX_DRILLS, default 1000)" in str(e.value)
        eng.control("DELETE", f"/engine/drills/{first['id']}")
        eng.control("POST", "/engine/drills", {"drill": "save-record"})
