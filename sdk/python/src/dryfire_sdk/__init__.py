"""dryfire for Python: run a world's drills with your own agent function, from pytest or any code.

``run_drills(drill=..., agent=...)`` starts a drill in the dryfire engine (the Go binary, started as
``dryfire engine``, one per process), gives the agent its task and a binding to the drill's world,
and returns the verdict. ``dryfire_sdk.testing.mock_tool`` turns a binding into a replacement for one
of the agent's dependencies. The pytest plugin (installed with the package) adds fixtures for
both and collects ``*.dryfire.yaml`` suites as tests.
"""

from __future__ import annotations

from ._binary import BinaryNotFound, find_binary
from ._drills import Binding, DrillContext, DrillResult, Operation, Task, run_drills, run_drills_async
from ._engine import Engine, default_engine, set_default_engine
from ._errors import DryfireError, EngineError

__version__ = "0.1.0.dev0"

__all__ = [
    "BinaryNotFound",
    "Binding",
    "DrillContext",
    "DrillResult",
    "DryfireError",
    "Engine",
    "EngineError",
    "Operation",
    "Task",
    "__version__",
    "default_engine",
    "find_binary",
    "run_drills",
    "run_drills_async",
    "set_default_engine",
]
