from __future__ import annotations

from pathlib import Path

import pytest

from gateway.core.versions import ASSEMBLER, CHAT_UPDATES, UnknownVersionError
from gateway.shell.settings import Settings, SettingsError, load_settings
from gateway.usecases.disclosure.pipeline import assembler_named


def test_defaults_need_no_environment() -> None:
    settings = load_settings({})
    assert settings == Settings()
    assert settings.embedded and settings.data_dir == Path(".ctxgw")


def test_every_bad_value_is_reported_by_name() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            {
                "GATEWAY_PORT": "http",
                "GATEWAY_EMBEDDER": "magic",
                "GATEWAY_DATABASE_URL": "mysql://x",
                "GATEWAY_MAX_BODY_BYTES": "10",
                "GATEWAY_BUDGET_ROLE_OFFSETS": "pilot=5",
            }
        )
    assert set(caught.value.problems) == {
        "GATEWAY_PORT",
        "GATEWAY_EMBEDDER",
        "GATEWAY_DATABASE_URL",
        "GATEWAY_MAX_BODY_BYTES",
        "GATEWAY_BUDGET_ROLE_OFFSETS",
    }
    assert "GATEWAY_PORT" in str(caught.value)


def test_role_budget_offsets() -> None:
    settings = load_settings(
        {"GATEWAY_BUDGET_BASE_TOKENS": "2000", "GATEWAY_BUDGET_ROLE_OFFSETS": "auditor=6000"}
    )
    assert settings.default_budget("agent") == 2000
    assert settings.default_budget("auditor") == 8000


def test_settings_are_frozen() -> None:
    settings = load_settings({})
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_openai_timeout_is_read_and_bounded() -> None:
    assert load_settings({"GATEWAY_OPENAI_TIMEOUT_SECONDS": "2.5"}).openai_timeout_seconds == 2.5
    with pytest.raises(SettingsError) as caught:
        load_settings({"GATEWAY_OPENAI_TIMEOUT_SECONDS": "0"})
    assert set(caught.value.problems) == {"GATEWAY_OPENAI_TIMEOUT_SECONDS"}


def test_the_assembler_may_be_pinned_to_a_version_this_gateway_builds() -> None:
    assert load_settings({}).assembler is None and assembler_named(None) is ASSEMBLER
    pinned = load_settings({"GATEWAY_ASSEMBLER": "assemble/2026-12-06.1"})
    assert assembler_named(pinned.assembler) is CHAT_UPDATES
    # A value of another shape is refused by name; a well-formed version the gateway does not
    # build is refused when the runtime starts (as a SettingsError naming the variable).
    with pytest.raises(SettingsError) as caught:
        load_settings({"GATEWAY_ASSEMBLER": "latest"})
    assert set(caught.value.problems) == {"GATEWAY_ASSEMBLER"}
    with pytest.raises(UnknownVersionError, match="unknown assembler version"):
        assembler_named("assemble/2099-01-01.1")
