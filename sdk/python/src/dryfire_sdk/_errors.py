"""The SDK's exceptions."""

from __future__ import annotations

from typing import Any

__all__ = ["DryfireError", "EngineError"]


class DryfireError(Exception):
    """Every error the dryfire SDK raises on its own account."""


class EngineError(DryfireError):
    """The engine answered a control request with an error.

    ``code`` is the engine's error code (``UNKNOWN_DRILL``, ``INVALID_SETUP``, ...),
    ``status`` the HTTP status, and the message is the engine's, unchanged.
    """

    def __init__(self, code: str, message: str, status: int, body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.body = body or {}
