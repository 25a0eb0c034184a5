"""Suites as pytest tests: the case names of a suite file, and one ``dryfire run`` per file.

Collection reads only the case names (a small reader of the suite's ``cases:`` list, no YAML
library needed); running a file runs ``dryfire run FILE --json`` once for the cases pytest
selected, and each case's item reports its result, with dryfire's own text for a case that did
not pass.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

__all__ = ["CaseResult", "case_names", "run_suite"]

_TOP_CASES = re.compile(r"^cases\s*:(.*)$")
_FLOW_NAME = re.compile(r"""(?:^|[{,\s])name\s*:\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,}#]+)""")


def _scalar(text: str) -> str | None:
    """A YAML scalar as written after ``name:`` on one line (plain, single- or double-quoted)."""
    s = text.strip()
    if not s:
        return None
    if s[0] == '"':
        end = 1
        while end < len(s):
            if s[end] == "\\":
                end += 2
                continue
            if s[end] == '"':
                break
            end += 1
        try:
            return str(json.loads(s[: end + 1]))
        except ValueError:
            return None
    if s[0] == "'":
        m = re.match(r"'((?:[^']|'')*)'", s)
        return m.group(1).replace("''", "'") if m else None
    if s[0] in "|>&*!{[":
        return None
    s = re.split(r"\s#", s, maxsplit=1)[0].rstrip()
    return s or None


def case_names(text: str) -> list[str] | None:
    """The names of a suite's cases in file order, or None when this reader cannot tell them
    (a flow-style list, a multi-line name, ...): the file is then one test."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _TOP_CASES.match(line)), None)
    if start is None:
        return []
    rest = _TOP_CASES.match(lines[start]).group(1).strip()  # type: ignore[union-attr]
    if rest and not rest.startswith("#"):
        return None  # a flow-style list
    names: list[str] = []
    item_col = -1
    key_col = -1
    current: str | None = None
    have_item = False
    for line in lines[start + 1:]:
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        col = len(line) - len(stripped)
        if col == 0 and not stripped.startswith("-"):
            break  # the next top-level key
        if stripped.startswith("-") and (item_col < 0 or col == item_col) and (len(stripped) == 1 or stripped[1] == " "):
            if item_col < 0:
                item_col = col
            if have_item:
                if current is None:
                    return None
                names.append(current)
            have_item, current = True, None
            rest = stripped[1:].lstrip(" ")
            key_col = col + (len(stripped) - len(rest))
            if rest.startswith("{"):
                m = _FLOW_NAME.search(rest)
                current = _scalar(m.group(1)) if m else None
                if current is None:
                    return None
                continue
            stripped, col = rest, key_col
            if not stripped:
                key_col = -1
                continue
        elif item_col < 0:
            return None  # not a block sequence
        if key_col < 0:
            key_col = col
        if col == key_col and (stripped.startswith("name:") or stripped.startswith("name :")):
            current = _scalar(stripped.split(":", 1)[1])
            if current is None:
                return None
    if have_item:
        if current is None:
            return None
        names.append(current)
    return names


@dataclass
class CaseResult:
    name: str
    status: str  # passed | failed | error | skipped
    reason: str
    text: str  # dryfire's own lines for the case (header and details)
    case: dict


def _re2_quote(s: str) -> str:
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", s)


def interpreter_first(env: dict[str, str]) -> dict[str, str]:
    """env with the directory of this interpreter first on PATH.

    An ``agent.command: [python, ...]`` (or ``python3``) run from pytest then runs pytest's own
    interpreter, with the packages of its environment, not whichever python comes first on the
    user's PATH. The directory is not added twice.
    """
    here = os.path.dirname(os.path.abspath(sys.executable))
    rest = [d for d in env.get("PATH", os.defpath).split(os.pathsep) if d and os.path.abspath(d) != here]
    env["PATH"] = os.pathsep.join([here, *rest])
    return env


def run_suite(binary: str, rootdir: str, path: str, names: list[str] | None, *, record: str | None,
              concurrency: int | None, python: str | None, timeout: float | None = None) -> tuple[dict[str, CaseResult], str, int]:
    """Run ``dryfire run`` on one suite file for the cases ``names`` (every case: None).

    Returns the results by case name, the run's whole text output and its exit code.
    """
    rel = os.path.relpath(path, rootdir)
    fd, report = tempfile.mkstemp(prefix="dryfire-pytest-", suffix=".json")
    os.close(fd)
    try:
        argv = [binary, "run", rel, "--json", report]
        if names is not None:
            argv += ["--filter", "^(" + "|".join(_re2_quote(n) for n in names) + ")$"]
        if record:
            argv += ["--record", record]
        if concurrency:
            argv += ["--concurrency", str(concurrency)]
        if python:
            argv += ["--python", python]
        env = interpreter_first(dict(os.environ))
        env["TERM"] = "dumb"
        env["NO_COLOR"] = "1"
        proc = subprocess.run(argv, cwd=rootdir, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        try:
            with open(report, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = None
    finally:
        try:
            os.unlink(report)
        except OSError:
            pass
    if not data:
        return {}, out, proc.returncode
    blocks = _text_blocks(proc.stdout.decode("utf-8", "replace"), rel)
    results: dict[str, CaseResult] = {}
    for c in data.get("cases", []):
        name = str(c.get("name", ""))
        results[name] = CaseResult(name, str(c.get("status", "")), str(c.get("reason", "")), blocks.get(name, ""), c)
    return results, out, proc.returncode


def _text_blocks(text: str, rel: str) -> dict[str, str]:
    """dryfire run's log output split per case: header line + indented details, by case name."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    prefix = rel + ": "
    for line in text.splitlines():
        if line.startswith(" ") and current is not None:
            current.append(line)
            continue
        current = None
        word, _, rest = line.partition(" ")
        rest = rest.lstrip(" ")
        if word.isupper() and rest.startswith(prefix):
            current = blocks.setdefault(rest[len(prefix):], [])
            current.append(line)
    return {k: "\n".join(v) for k, v in blocks.items()}
