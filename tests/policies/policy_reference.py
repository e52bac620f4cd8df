"""A straightforward reference evaluation, to check the optimized `evaluate` against.

It follows the semantics in policies/README.md one memory and one rule at a time, with none of
the engine's shortcuts: every condition is called on every memory (no grouping by value, no
column tests), every decision's evidence is explained afresh (no cache), redaction runs every
named detector's pattern over the text (no prefilter, no RE2 set scan), and both tracks
(actual, and as if every rule were enforced) are computed independently, each with its own
budget walk. Only the compiled conditions and the detector patterns are shared with the engine:
they are what is being applied, not how.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from policies import Bundle, Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.conditions import Evidence, Result
from policies.detectors import _COMPILED, DETECTOR_NAMES, replacement
from policies.fields import CHECKERS, FIELDS, ConditionError, check_value
from policies.model import Rule

_RAISES = (TypeError, ValueError, OverflowError, AttributeError)


def _result(rule: Rule, request: Mapping[str, object], now: datetime, memory: object) -> Result:
    if rule.compiled is None:
        return True
    try:
        return rule.compiled.bind(request, now).result(memory)  # type: ignore[arg-type]
    except _RAISES as exc:
        return ConditionError("E002", f"comparison failed ({type(exc).__name__})")


def _evidence(
    rule: Rule, request: Mapping[str, object], now: datetime, memory: object
) -> tuple[Evidence, ...]:
    if rule.compiled is None:
        return ()
    found: list[Evidence] = []
    rule.compiled.bind(request, now).explain(memory, found)  # type: ignore[arg-type]
    return tuple(found)


def _redact_plain(text: str, detectors: Sequence[str]) -> tuple[str, list[tuple[str, int]]]:
    data = text.encode("utf-8", "surrogatepass")
    counts = []
    for name in DETECTOR_NAMES:
        if name not in detectors:
            continue
        regex, check = _COMPILED[name]
        pieces: list[bytes] = []
        position = 0
        for match in regex.finditer(data):
            spans = [match.span(group) for group in range(regex.groups + 1)]
            if check is None or check(data, spans):
                pieces += (data[position : match.start()], replacement(name).encode())
                position = match.end()
        if pieces:
            data = b"".join([*pieces, data[position:]])
            counts.append((name, len(pieces) // 2))
    return data.decode("utf-8", "surrogatepass"), counts


def _admit(
    bundle: Bundle,
    rules: list[Rule],
    errors: dict[str, ConditionError],
    applies: list[Rule],
    enforced: dict[str, bool],
    everything: bool,
) -> tuple[Outcome, str | None]:
    considered = [rule for rule in rules if everything or enforced[rule.id]]
    if bundle.on_error == "deny":
        for rule in considered:
            if rule.id in errors:
                return "deny", rule.id
    first_allow = None
    for rule in considered:
        if rule not in applies or rule.effect not in ("deny", "allow"):
            continue
        if rule.effect == "deny":
            return "deny", rule.id
        if bundle.combining == "first-applicable":
            return "admit", rule.id
        first_allow = first_allow or rule.id
    default: Outcome = "admit" if bundle.default_decision == "allow" else "deny"
    return ("admit", first_allow) if first_allow else (default, None)


@dataclass
class _Track:
    outcome: Outcome
    rule_id: str | None
    texts: dict[str, str]
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    capped_by: str | None = None

    def redactions(self) -> tuple[Redaction, ...]:
        return tuple(Redaction(f, d, n) for (f, d), n in sorted(self.counts.items()))


def reference_evaluate(  # noqa: C901  the naive reference reads the spec straight through
    bundle: Bundle,
    request: Mapping[str, object],
    memories: Sequence[Mapping[str, object]],
    now: datetime,
    disclosed: Mapping[int, bool] | None = None,
) -> Evaluation:
    """`disclosed`: by position, the memories whose texts are disclosed and whether with their
    content (else the heading alone); None: every text. Undisclosed texts are neither redacted
    nor delivered: they are empty in the outcome."""
    if now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    view = {
        spec.key: check_value(spec.kind, request.get(spec.key))
        for spec in FIELDS.values()
        if spec.scope == "request"
    }
    enforced = {rule.id: bundle.effective_mode(rule) == "enforce" for rule in bundle.rules}
    decisions: list[Decision] = []

    refused: Refusal | None = None
    would_refuse: Rule | None = None
    for rule in bundle.rules:
        if rule.stage != "request" or rule.compiled is None:
            continue
        result = _result(rule, view, now, {})
        error_code = result.code if isinstance(result, ConditionError) else None
        met = bundle.on_error == "allow" if error_code is not None else result is True
        verdict = "proceed" if met else "refuse"
        on = enforced[rule.id]
        decisions.append(
            Decision(
                rule.id,
                rule.stage,
                rule.effect,
                bundle.effective_mode(rule),
                on,
                rule.reason,
                None,
                _evidence(rule, view, now, {}),
                verdict if on else "proceed",
                verdict,
                (),
                error_code,
            )
        )
        if not met:
            refused = refused or (Refusal(rule.id, rule.reason) if on else None)
            would_refuse = would_refuse or rule

    def text(memory: Mapping[str, object], key: str, m: int) -> str:
        value = memory.get(key)
        if disclosed is not None and (
            m not in disclosed or (key == "content" and not disclosed[m])
        ):
            return ""
        return value if isinstance(value, str) else ""

    ids = []
    for memory in memories:
        memory_id = memory.get("memory_id")
        if not isinstance(memory_id, str):
            raise TypeError("every memory needs a string memory_id")
        ids.append(memory_id)
    if refused is not None:
        refused_outcomes = tuple(
            MemoryOutcome(
                i,
                "deny",
                "deny",
                refused.rule_id,
                refused.rule_id,
                text(memory, "heading", m),
                text(memory, "content", m),
            )
            for m, (i, memory) in enumerate(zip(ids, memories, strict=True))
        )
        return Evaluation(bundle.mode, refused, refused_outcomes, tuple(decisions))

    rules = [rule for rule in bundle.rules if rule.stage != "request"]
    deny_on_error = bundle.on_error == "deny"
    per_memory: list[list[Decision]] = []
    tracks: list[tuple[_Track, _Track]] = []
    applies_by_memory: list[list[Rule]] = []

    def decision(
        rule: Rule,
        m: int,
        *outcomes: str,
        hits: tuple[Redaction, ...] = (),
        error: str | None = None,
    ) -> Decision:
        return Decision(
            rule.id,
            rule.stage,
            rule.effect,
            bundle.effective_mode(rule),
            enforced[rule.id],
            rule.reason,
            ids[m],
            _evidence(rule, view, now, memories[m]),
            outcomes[0],
            outcomes[1],
            hits,
            error,
        )

    for m, memory in enumerate(memories):
        raw = {key: memory.get(key) for key in ("heading", "content")}
        bad_text = any(value is not None and not isinstance(value, str) for value in raw.values())
        errors: dict[str, ConditionError] = {}
        applies: list[Rule] = []
        for rule in rules:
            result = _result(rule, view, now, memory)
            if isinstance(result, ConditionError):
                errors[rule.id] = result
            elif result is True or (result is None and rule.effect != "allow"):
                if rule.effect == "redact" and bad_text:
                    errors[rule.id] = ConditionError("E001", "heading or content not a string")
                else:
                    applies.append(rule)
        applies_by_memory.append(applies)

        texts = {key: text(memory, key, m) for key in raw}
        verdicts = [
            _admit(bundle, rules, errors, applies, enforced, everything)
            for everything in (False, True)
        ]
        actual = _Track(*verdicts[0], texts=dict(texts))
        as_if = _Track(*verdicts[1], texts=dict(texts))
        tracks.append((actual, as_if))
        found: list[Decision] = []
        for rule in rules:
            on = enforced[rule.id]
            error = errors.get(rule.id)
            if error is not None:
                no_effect = "unchanged" if rule.effect == "redact" else "admit"
                verdict = "deny" if deny_on_error else no_effect
                found.append(
                    decision(rule, m, verdict if on else no_effect, verdict, error=error.code)
                )
            elif rule in applies and rule.effect in ("deny", "allow"):
                verdict = "admit" if rule.effect == "allow" else "deny"
                found.append(decision(rule, m, verdict if on else "admit", verdict))
        for rule in applies:
            if rule.effect != "redact":
                continue
            hits = []
            for track, applied in ((actual, enforced[rule.id]), (as_if, True)):
                got: list[Redaction] = []
                if applied and track.outcome == "admit":
                    for key in ("heading", "content"):
                        track.texts[key], counts = _redact_plain(track.texts[key], rule.detectors)
                        for detector, count in counts:
                            got.append(Redaction(key, detector, count))
                            track.counts[key, detector] = (
                                track.counts.get((key, detector), 0) + count
                            )
                hits.append(tuple(sorted(got)))
            if hits[0] or hits[1]:
                shown = hits[0] if enforced[rule.id] else hits[1]
                outcomes = ["redact" if h else "unchanged" for h in hits]
                found.append(decision(rule, m, *outcomes, hits=shown))
        per_memory.append(found)

    capped: dict[tuple[int, int], list[bool]] = {}
    for which in (0, 1):
        used: dict[str, list[int]] = {}
        for m, memory in enumerate(memories):
            track = tracks[m][which]
            matching = [
                (index, rule)
                for index, rule in enumerate(rules)
                if rule.effect == "cap"
                and rule in applies_by_memory[m]
                and (which == 1 or enforced[rule.id])
            ]
            if track.outcome != "admit" or not matching:
                continue
            tokens = CHECKERS["int"](memory.get("tokens"))
            for index, rule in matching:
                items, total = used.setdefault(rule.id, [0, 0])
                over_items = rule.max_items is not None and items + 1 > rule.max_items
                over_tokens = rule.max_tokens is not None and not (
                    isinstance(tokens, int) and total + tokens <= rule.max_tokens
                )
                if over_items or over_tokens:
                    track.outcome, track.rule_id = "cap", rule.id
                    capped.setdefault((m, index), [False, False])[which] = True
                    break
            else:
                for _, rule in matching:
                    used[rule.id][0] += 1
                    used[rule.id][1] += tokens if isinstance(tokens, int) else 0
    for (m, index), flags in sorted(capped.items()):
        outcomes = ["cap" if flag else "admit" for flag in flags]
        per_memory[m].append(decision(rules[index], m, *outcomes))

    outcomes_list = []
    for m, (actual, as_if) in enumerate(tracks):
        decisions.extend(per_memory[m])
        if would_refuse is not None:
            if_enforced: tuple[Outcome, str | None, tuple[Redaction, ...]] = (
                "deny",
                would_refuse.id,
                (),
            )
        else:
            if_enforced = (as_if.outcome, as_if.rule_id, as_if.redactions())
        outcomes_list.append(
            MemoryOutcome(
                ids[m],
                actual.outcome,
                if_enforced[0],
                actual.rule_id,
                if_enforced[1],
                actual.texts["heading"],
                actual.texts["content"],
                actual.redactions(),
                if_enforced[2],
            )
        )
    return Evaluation(bundle.mode, None, tuple(outcomes_list), tuple(decisions))
