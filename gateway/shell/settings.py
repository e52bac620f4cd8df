"""Settings, read once from `GATEWAY_*` variables in the entry point and passed down, frozen.

Every invalid value is collected and reported together, by variable name, so that a
misconfigured deployment is fixed in one round trip rather than one error at a time.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from gateway.domain.principal import ROLES
from gateway.shell.logs import LOG_FORMATS, LogFormat

__all__ = [
    "EmbedderName",
    "ExtractorName",
    "Network",
    "Settings",
    "SettingsError",
    "load_settings",
]

EmbedderName = Literal["hash", "sentence-transformers", "openai"]
_EMBEDDERS: tuple[EmbedderName, ...] = ("hash", "sentence-transformers", "openai")
SummarizerName = Literal["extractive", "openai"]
_SUMMARIZERS: tuple[SummarizerName, ...] = ("extractive", "openai")
ExtractorName = Literal["rules", "rules+semantic", "openai"]
_EXTRACTORS: tuple[ExtractorName, ...] = ("rules", "rules+semantic", "openai")

T = TypeVar("T")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# Who may scrape /metrics unless told otherwise: this machine only.
LOOPBACK: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)


class SettingsError(Exception):
    """One or more `GATEWAY_*` variables are invalid; `problems` names each one."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        lines = [f"  {name}: {message}" for name, message in sorted(self.problems.items())]
        super().__init__("invalid settings:\n" + "\n".join(lines))


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None = None
    # A read replica (a streaming standby) that serves the receipts' list, reads, verification
    # (once a replayed checkpoint covers the receipt) and export pages; keys are still looked up
    # on the primary (their rate buckets are written), and proofs and checkpoints stay there
    # (they may sign a new checkpoint).
    read_database_url: str | None = None
    data_dir: Path = Path(".ctxgw")
    host: str = "127.0.0.1"
    port: int = 8080
    migrate_on_start: bool = True
    pool_min_size: int = 2
    pool_max_size: int = 10
    max_body_bytes: int = 1024 * 1024
    max_content_bytes: int = 64 * 1024
    tokenizer: str = "cl100k_base"
    embedder: EmbedderName = "hash"
    embedding_dim: int = 384
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_api_key: str | None = None
    openai_model: str = "text-embedding-3-small"
    openai_timeout_seconds: float = 30.0
    summarizer: SummarizerName = "extractive"
    summarizer_base_url: str | None = None  # None: GATEWAY_OPENAI_BASE_URL
    summarizer_model: str = "gpt-4o-mini"
    # Compile (ARCHITECTURE §12): the extractors a compile may name (the first is the default),
    # the similarity rule's Jaccard threshold, and how long a running job's heartbeat may be
    # silent before another worker takes it over.
    extractors: tuple[ExtractorName, ...] = ("rules",)
    extractor_base_url: str | None = None  # None: GATEWAY_OPENAI_BASE_URL
    extractor_model: str = "gpt-4o-mini"
    supersede_jaccard: float = 0.6
    # The assembler new bundles are built by (`assemble/<day>.<n>`): unset, the newest this
    # gateway builds; pinned, an older one it still builds (to keep a deployment's bundles as
    # they were while a newer version is evaluated by replay). Checked when the runtime starts.
    assembler: str | None = None
    compile_reclaim_seconds: float = 30.0
    budget_base_tokens: int = 4000
    budget_role_offsets: Mapping[str, int] = field(default_factory=dict)
    receipt_keyring: Path | None = None
    receipt_ed25519_key: Path | None = None
    checkpoint_interval_seconds: float = 5.0
    # Slow clients (gateway.http.slow_clients): time for a request's headers, then its body.
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 30.0
    log_level: str = "INFO"
    log_format: LogFormat = "text"
    metrics_allow: tuple[Network, ...] = LOOPBACK
    mcp_origins: tuple[str, ...] = ()  # browser origins /mcp accepts beside loopback pages

    @property
    def embedded(self) -> bool:
        return self.database_url is None

    def default_budget(self, role: str) -> int:
        """The budget used when a request names none: a base plus the role's offset."""
        return max(1, min(128_000, self.budget_base_tokens + self.budget_role_offsets.get(role, 0)))


def load_settings(environ: Mapping[str, str]) -> Settings:
    """Build `Settings` from an environment mapping; raise `SettingsError` listing every bad value."""
    problems: dict[str, str] = {}

    def read(name: str, parse: Callable[[str], T], default: T) -> T:
        raw = environ.get(f"GATEWAY_{name}")
        if raw is None or raw.strip() == "":
            return default
        try:
            return parse(raw.strip())
        except ValueError as exc:
            problems[f"GATEWAY_{name}"] = str(exc)
            return default

    defaults = Settings()
    settings = Settings(
        database_url=read("DATABASE_URL", _database_url, None),
        read_database_url=read("READ_DATABASE_URL", _database_url, None),
        data_dir=read("DATA_DIR", Path, defaults.data_dir),
        host=read("HOST", str, defaults.host),
        port=read("PORT", _int_between(1, 65535), defaults.port),
        migrate_on_start=read("MIGRATE_ON_START", _boolean, defaults.migrate_on_start),
        pool_min_size=read("POOL_MIN_SIZE", _int_between(1, 1000), defaults.pool_min_size),
        pool_max_size=read("POOL_MAX_SIZE", _int_between(1, 1000), defaults.pool_max_size),
        max_body_bytes=read(
            "MAX_BODY_BYTES", _int_between(1024, 64 << 20), defaults.max_body_bytes
        ),
        max_content_bytes=read(
            "MAX_CONTENT_BYTES", _int_between(1, 16 << 20), defaults.max_content_bytes
        ),
        tokenizer=read("TOKENIZER", str, defaults.tokenizer),
        embedder=read("EMBEDDER", _one_of(_EMBEDDERS), defaults.embedder),
        embedding_dim=read("EMBEDDING_DIM", _int_between(8, 4096), defaults.embedding_dim),
        openai_base_url=read("OPENAI_BASE_URL", _http_url, defaults.openai_base_url),
        openai_api_key=read("OPENAI_API_KEY", str, None),
        openai_model=read("OPENAI_MODEL", str, defaults.openai_model),
        openai_timeout_seconds=read(
            "OPENAI_TIMEOUT_SECONDS", _float_between(0.1, 600.0), defaults.openai_timeout_seconds
        ),
        summarizer=read("SUMMARIZER", _one_of(_SUMMARIZERS), defaults.summarizer),
        summarizer_base_url=read("SUMMARIZER_BASE_URL", _http_url, None),
        summarizer_model=read("SUMMARIZER_MODEL", str, defaults.summarizer_model),
        extractors=read("EXTRACTORS", _extractors, defaults.extractors),
        extractor_base_url=read("EXTRACTOR_BASE_URL", _http_url, None),
        extractor_model=read("EXTRACTOR_MODEL", str, defaults.extractor_model),
        supersede_jaccard=read(
            "SUPERSEDE_JACCARD", _float_between(0.05, 1.0), defaults.supersede_jaccard
        ),
        assembler=read("ASSEMBLER", _assembler_version, None),
        compile_reclaim_seconds=read(
            "COMPILE_RECLAIM_SECONDS",
            _float_between(1.0, 3600.0),
            defaults.compile_reclaim_seconds,
        ),
        budget_base_tokens=read(
            "BUDGET_BASE_TOKENS", _int_between(1, 128_000), defaults.budget_base_tokens
        ),
        budget_role_offsets=read("BUDGET_ROLE_OFFSETS", _role_offsets, {}),
        receipt_keyring=read("RECEIPT_KEYRING", Path, None),
        receipt_ed25519_key=read("RECEIPT_ED25519_KEY", Path, None),
        checkpoint_interval_seconds=read(
            "CHECKPOINT_INTERVAL_SECONDS", _float_between(0.1, 3600.0), 5.0
        ),
        header_timeout_seconds=read(
            "HEADER_TIMEOUT_SECONDS", _float_between(0.1, 600.0), defaults.header_timeout_seconds
        ),
        body_timeout_seconds=read(
            "BODY_TIMEOUT_SECONDS", _float_between(0.1, 3600.0), defaults.body_timeout_seconds
        ),
        log_level=read("LOG_LEVEL", _one_of(("DEBUG", "INFO", "WARNING", "ERROR")), "INFO"),
        log_format=read("LOG_FORMAT", _one_of(LOG_FORMATS), defaults.log_format),
        metrics_allow=read("METRICS_ALLOW", _networks, LOOPBACK),
        mcp_origins=read("MCP_ORIGINS", _origins, ()),
    )
    if settings.pool_min_size > settings.pool_max_size:
        problems["GATEWAY_POOL_MIN_SIZE"] = (
            f"must not exceed GATEWAY_POOL_MAX_SIZE ({settings.pool_max_size})"
        )
    if problems:
        raise SettingsError(problems)
    return settings


_ASSEMBLER_VERSION = re.compile(r"assemble/\d{4}-\d{2}-\d{2}\.\d+")


def _assembler_version(raw: str) -> str:
    if not _ASSEMBLER_VERSION.fullmatch(raw):
        raise ValueError(
            f"expected an assembler version such as assemble/2026-12-06.1, got {raw!r}"
        )
    return raw


def _int_between(low: int, high: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"expected an integer, got {raw!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return value

    return parse


def _float_between(low: float, high: float) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return value

    return parse


def _one_of(choices: tuple[T, ...]) -> Callable[[str], T]:
    def parse(raw: str) -> T:
        for choice in choices:
            if raw == choice:
                return choice
        raise ValueError(f"expected one of {', '.join(map(str, choices))}; got {raw!r}")

    return parse


def _extractors(raw: str) -> tuple[ExtractorName, ...]:
    """Parse `rules,openai` (the first is the default of a compile that names none)."""
    parse = _one_of(_EXTRACTORS)
    names = tuple(dict.fromkeys(parse(part.strip()) for part in raw.split(",") if part.strip()))
    if not names:
        raise ValueError("expected at least one extractor")
    return names


def _networks(raw: str) -> tuple[Network, ...]:
    """Parse `127.0.0.1/32,10.0.0.0/8` (addresses or CIDR networks, comma-separated)."""
    networks: list[Network] = []
    for part in (p.strip() for p in raw.split(",")):
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"expected IP networks such as 10.0.0.0/8, got {part!r}") from None
    return tuple(networks)


def _origins(raw: str) -> tuple[str, ...]:
    """Parse `https://app.example.com,http://localhost:5173` (scheme://host[:port] each)."""
    origins = tuple(part.strip().rstrip("/") for part in raw.split(",") if part.strip())
    for origin in origins:
        if not origin.startswith(("http://", "https://")) or "/" in origin.split("://", 1)[1]:
            raise ValueError(f"expected origins such as https://app.example.com, got {origin!r}")
    return origins


def _boolean(raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"expected true or false, got {raw!r}")


def _database_url(raw: str) -> str:
    if not raw.startswith(("postgresql://", "postgres://")):
        raise ValueError("expected a postgresql:// URL")
    return raw


def _http_url(raw: str) -> str:
    if not raw.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return raw.rstrip("/")


def _role_offsets(raw: str) -> dict[str, int]:
    """Parse `agent=0,auditor=2000` into a mapping of role to token offset."""
    offsets: dict[str, int] = {}
    for part in raw.split(","):
        role, sep, amount = part.strip().partition("=")
        if not sep or role not in ROLES:
            raise ValueError(
                f"expected role=tokens pairs for roles {', '.join(ROLES)}; got {part!r}"
            )
        try:
            offsets[role] = int(amount)
        except ValueError:
            raise ValueError(f"offset for {role} must be an integer, got {amount!r}") from None
    return offsets
