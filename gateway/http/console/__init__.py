"""The auditor's console at /console (ARCHITECTURE §13): server-rendered, read-only pages."""

from gateway.http.console.pages import CONSOLE

__all__ = ["CONSOLE"]
