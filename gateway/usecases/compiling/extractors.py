"""Extractors: turn episodes into facts (ARCHITECTURE §12). Pluggable and versioned: every
memory a compile writes names its extractor as `name/version`.

`rules` (`gateway.core.extraction`) is the default: deterministic, no model, its newest version
(`RULES`) under the name `rules`, and every version kept (`EXTRACTS`) under `rules/<version>` as
well, so a compile job stored with an earlier version (or a request naming one) runs with it.
`rules+semantic` is `rules` with the gateway's embedder joining attribute phrases alike in
meaning though not in words ("rent", "apartment costs"); its version names the embedding
model (`2026-12-06.1+<model>`), since the facts it finds depend on it. `openai` asks an
OpenAI-compatible chat model for JSON facts and validates its answer against a schema
(`_ModelFacts`): an answer that is not exactly that fails the job with `extractor_failed` and
nothing of the chunk is written. Its version is the model's name (as the chat summarizer's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, Protocol

import httpx
import msgspec
from msgspec import Meta

from gateway.core.extraction import EXTRACTS, RULES, Episode, Fact, Known, PhraseSimilarity
from gateway.core.supersession import CLAIM_KEY
from gateway.domain.errors import GatewayError
from gateway.embedding import Embedder, EmbeddingError
from gateway.shell.settings import Settings

__all__ = [
    "EXTRACTION_INSTRUCTIONS",
    "EXTRACTION_PROMPT",
    "EXTRACTION_SCHEMA",
    "Extractor",
    "ExtractorError",
    "OpenAIChatExtractor",
    "RulesExtractor",
    "build_extractors",
    "embedder_similarity",
]


class ExtractorError(GatewayError):
    """An extractor could not turn episodes into facts (a model unreachable, or its answer not
    the schema's): the compile job fails with this error and its chunk writes nothing."""

    code = "extractor_failed"


class Extractor(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    async def extract(self, episodes: Sequence[Episode], known: Sequence[Known]) -> list[Fact]:
        """The facts of `episodes`, given the scope's live claims before them (`known`: what
        an update that does not name its claim may refer to); raises `ExtractorError` (the
        job fails, nothing written)."""
        ...

    async def aclose(self) -> None: ...


def embedder_similarity(embedder: Embedder) -> PhraseSimilarity:
    """Attribute phrases' likeness by `embedder`: the cosine of their unit vectors, each phrase
    embedded once per process. Deterministic for one model: `rules+semantic` names the model
    in its version. An embedder that fails fails the compile (`ExtractorError`)."""
    vectors: dict[str, list[float]] = {}

    def vector(phrase: str) -> list[float]:
        if phrase not in vectors:
            try:
                vectors[phrase] = embedder.embed([phrase])[0]
            except EmbeddingError as exc:
                raise ExtractorError(f"the embedder could not compare phrases: {exc}") from exc
        return vectors[phrase]

    def similar(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(vector(a), vector(b), strict=True))

    return similar


@dataclass(frozen=True, slots=True)
class RulesExtractor:
    name: str = RULES[0]
    version: str = RULES[1]
    # Attribute phrases alike in meaning though not in words, when an embedder is configured.
    similar: PhraseSimilarity | None = None

    async def extract(self, episodes: Sequence[Episode], known: Sequence[Known]) -> list[Fact]:
        extract = EXTRACTS[self.version.partition("+")[0]]
        if self.similar is None:
            return extract(episodes, known, None)
        # The similarity asks the embedder, which may wait on a server: off the event loop.
        return await asyncio.to_thread(extract, episodes, known, self.similar)

    async def aclose(self) -> None:
        return None


# The model path's contract, versioned: the prompt (`EXTRACTION_INSTRUCTIONS`, sent as the
# system message; the user message is the chunk's turns, one per line, `<n>. <role>: <text>`,
# numbered from 0) and the answer's JSON schema (`EXTRACTION_SCHEMA`, the `_ModelFacts` below).
# Any change to either bytes is a new `EXTRACTION_PROMPT` version; a test pins both by digest
# (tests/gateway/test_compile_openai_replay.py). A job's extractor names the model
# (`openai/<model>`): the prompt a model answered is the one of the gateway that ran the job.
EXTRACTION_PROMPT = ("facts", "2026-12-02.1")
EXTRACTION_INSTRUCTIONS = (
    "You extract durable facts from numbered conversation turns between a user and an "
    "assistant. Only what the user states as true, or what the assistant confirms it did. No "
    "questions, hedges, plans not yet made, reported speech or things that used to be true. "
    'Answer with JSON only: {"facts": [{"turn": <number>, "type": "semantic" or "procedural", '
    '"heading": <short line>, "content": <the fact in plain words>, "confidence": <0..1>, '
    '"claim_key": <"owner.attribute" in lowercase when the fact has one value, else null>, '
    '"value": <the value as stated, or null>}]}.'
)


class _ModelFact(msgspec.Struct, forbid_unknown_fields=True):
    turn: Annotated[int, Meta(ge=0)]
    type: Literal["semantic", "procedural"]
    heading: Annotated[str, Meta(min_length=1, max_length=200)]
    content: Annotated[str, Meta(min_length=1, max_length=4000)]
    confidence: Annotated[float, Meta(ge=0.0, le=1.0)]
    claim_key: Annotated[str, Meta(pattern=CLAIM_KEY.pattern)] | None = None
    value: Annotated[str, Meta(max_length=200)] | None = None


class _ModelFacts(msgspec.Struct, forbid_unknown_fields=True):
    facts: Annotated[list[_ModelFact], Meta(max_length=1000)]


_DECODE = msgspec.json.Decoder(_ModelFacts)
# The JSON Schema (2020-12) of an answer, for servers that take one (vLLM's guided decoding,
# llama.cpp's grammar, OpenAI's `json_schema` response format) and for the documentation.
EXTRACTION_SCHEMA: dict[str, object] = msgspec.json.schema(_ModelFacts)


class OpenAIChatExtractor:
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout_seconds: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        from gateway.summarizing.chat import ChatCompletions

        self._chat = ChatCompletions(
            base_url,
            model,
            api_key,
            what="extractor",
            error=ExtractorError,
            timeout_seconds=timeout_seconds,
            transport=transport,
        )

    @property
    def version(self) -> str:
        return self._chat.model

    async def extract(self, episodes: Sequence[Episode], known: Sequence[Known]) -> list[Fact]:
        # `known` is not sent: the model reads the turns alone, as it was tested.
        del known
        if not episodes:
            return []
        turns = "\n".join(f"{i}. {e.role}: {e.text}" for i, e in enumerate(episodes))
        text = await self._chat.complete(
            EXTRACTION_INSTRUCTIONS, turns, response_format={"type": "json_object"}
        )
        try:
            answer = _DECODE.decode(text)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ExtractorError(f"the extractor's answer is not the facts schema: {exc}") from exc
        facts: list[Fact] = []
        for index, fact in enumerate(answer.facts):
            if fact.turn >= len(episodes):
                raise ExtractorError(
                    f"the extractor's fact {index} names turn {fact.turn} of {len(episodes)}"
                )
            episode = episodes[fact.turn]
            facts.append(
                Fact(
                    memory_type=fact.type,
                    heading=fact.heading,
                    content=f"On {episode.occurred_at.date().isoformat()}: {fact.content}",
                    confidence=fact.confidence,
                    claim_key=fact.claim_key,
                    valid_from=episode.occurred_at,
                    sources=episode.sources,
                    value=fact.value,
                )
            )
        return facts

    async def aclose(self) -> None:
        await self._chat.aclose()


def build_extractors(settings: Settings, embedder: Embedder) -> Mapping[str, Extractor]:
    """The extractors `GATEWAY_EXTRACTORS` configures, by name, in its order (first: default):
    `rules`, `rules+semantic` (with `embedder`), and `openai` at `GATEWAY_EXTRACTOR_BASE_URL`
    (default `GATEWAY_OPENAI_BASE_URL`); with `rules`, each of its versions as
    `rules/<version>` too, and `rules+semantic` by its full name as well."""
    built: dict[str, Extractor] = {}
    for name in settings.extractors:
        if name == "rules":
            built[name] = RulesExtractor()
        elif name == "rules+semantic":
            similar = embedder_similarity(embedder)
            # Every rules version by its full name too, as `rules/<version>` below.
            kept = {
                f"{name}/{version}+{embedder.model}": RulesExtractor(
                    name, f"{version}+{embedder.model}", similar
                )
                for version in EXTRACTS
            }
            built[name] = kept[f"{name}/{RULES[1]}+{embedder.model}"]
            built.update(kept)
        else:
            built[name] = OpenAIChatExtractor(
                settings.extractor_base_url or settings.openai_base_url,
                settings.extractor_model,
                settings.openai_api_key,
                timeout_seconds=settings.openai_timeout_seconds,
            )
    if "rules" in built:
        # Every rules version by its full name, after the names configured (the first of
        # which stays the default): what a stored job or a request naming one runs with.
        for version in EXTRACTS:
            built[f"rules/{version}"] = RulesExtractor(version=version)
    return built
