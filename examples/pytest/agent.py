"""The existing agent of the example: it reads an instruction, saves the record it names, and
retries when the store is busy. It imports save_record by name, so a test replaces agent.save_record
(the name is looked up in this module), not records_client.save_record."""

from __future__ import annotations

import re

from records_client import StoreBusy, save_record


def run_agent(instruction: str, attempts: int = 3) -> str:
    m = re.search(r"Save (\S+) with the text (.+?)\.?$", instruction)
    if not m:
        return "I do not know what to save."
    record_id, text = m.group(1), m.group(2)
    for attempt in range(1, attempts + 1):
        try:
            saved = save_record(record_id, text)
        except StoreBusy:
            if attempt == attempts:
                return f"The store stayed busy: {record_id} was not saved."
            continue
        return f"Saved {saved['id']} (version {saved['version']})."
    raise AssertionError("unreachable")
