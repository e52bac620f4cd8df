"""The distribution: what the wheel ships, and the one version every surface reports."""

from __future__ import annotations

import email.parser
import importlib.metadata
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway import __version__

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel built from this checkout, as `pip install .` would build it."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "--directory", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (built,) = out.glob("ctxgw-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_ships_the_three_typed_packages_and_not_the_harness(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    tops = {name.split("/", 1)[0] for name in names if not name.endswith(".dist-info/RECORD")}
    assert tops == {"gateway", "policies", "receipts", f"ctxgw-{__version__}.dist-info"}
    assert {"gateway/py.typed", "policies/py.typed", "receipts/py.typed"} <= names
    migrations = {f"gateway/migrations/{path.name}" for path in (ROOT / "migrations").glob("*.sql")}
    assert migrations and migrations <= names
    assert not any(name.startswith(("bench/", "tests/")) for name in names)
    console = {
        "gateway/http/console/templates/receipt.html",
        "gateway/http/console/static/console.css",
    }
    assert console <= names  # the console's pages and style sheet are package data


def test_wheel_carries_the_license_and_the_package_version(wheel: zipfile.ZipFile) -> None:
    info = f"ctxgw-{__version__}.dist-info"
    assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    metadata = email.parser.BytesParser().parsebytes(wheel.read(f"{info}/METADATA"))
    assert metadata["Version"] == __version__
    assert metadata["License-Expression"] == "Apache-2.0"


def test_license_is_the_full_apache_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text
    assert "APPENDIX: How to apply the Apache License to your work." in text


def test_installed_metadata_has_the_package_version() -> None:
    # The editable install reads the same source as the wheel (gateway/__init__.py).
    assert importlib.metadata.version("ctxgw") == __version__


def test_healthz_reports_the_version(client: TestClient[Any]) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__}


def test_cli_reports_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ctxgw {__version__}"
