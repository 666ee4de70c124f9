"""Structured JSON logs for the server: one object per line on stderr.

Access lines are already JSON objects (see :mod:`convection.api.access_log`)
and are written as they are; every other record (engine, API, uvicorn)
becomes ``{"time", "level", "logger", "message"}``. Messages are written
by Convection's own code, which never logs parameter values or secrets.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

ACCESS_LOGGER = "convection.api.access"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if record.name == ACCESS_LOGGER:
            return record.getMessage()
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


def configure_logging(level: int = logging.INFO) -> None:
    """Send the convection and uvicorn loggers to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    logging.captureWarnings(True)
    for name in ("convection", "uvicorn", "uvicorn.error", "py.warnings"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level)
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True  # ours is structured
