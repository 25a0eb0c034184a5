"""A records client as an agent's code has it: the real service is never reached in the tests."""

from __future__ import annotations

REAL_CALLS: list[tuple[str, str]] = []


def save_record(id: str, text: str) -> dict:
    REAL_CALLS.append((id, text))
    raise RuntimeError("the real record store was called")


def save_and_report(id: str, text: str) -> str:
    """The agent's code: it looks save_record up in this module at call time."""
    for _ in range(3):
        try:
            saved = save_record(id, text)
            return f"Saved {saved['id']} (version {saved['version']})."
        except Exception as e:  # noqa: BLE001 - a retry loop, as agents have them
            last = e
    return f"Could not save {id}: {last}"
