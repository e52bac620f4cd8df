"""The app for process managers (`uvicorn --factory`, `ctxgw serve --workers N`).

Each worker process reads the settings from the environment here, in its entry point, and owns
its runtime through the app's lifespan; the gateway is stateless, so workers share nothing but
PostgreSQL.
"""

from __future__ import annotations

import os

from litestar import Litestar

from gateway.http.app import create_app
from gateway.shell.collector import settle_collector
from gateway.shell.logs import configure_logging
from gateway.shell.settings import load_settings

__all__ = ["from_environment"]


def from_environment() -> Litestar:
    settings = load_settings(os.environ)
    configure_logging(settings.log_level, settings.log_format)
    app = create_app(settings)
    settle_collector()  # as `ctxgw serve` does (gateway.shell.collector)
    return app
