"""A straightforward reference evaluation, to check the optimized `evaluate` against.

It follows the semantics in policies/README.md one memory and one rule at a time, with none of
the engine's shortcuts: every condition is called on every memory (no grouping by value, no
column tests), every decision's evidence is explained afresh (no cache), redaction runs every
named detector's pattern over the whole folded text (no prefilter, no RE2 set scan, no window
around the joint of heading and content), and both tracks (actual, and as if every rule were
enforced) are computed independently, each with its own budget walk. Only the compiled
conditions, the detector patterns with their checks, the text folding (policies/textnorm.py)
and the condition on matches across heading and content are shared with the engine: they are
what is being applied, not how.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from policies import Bundle, Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.conditions import Evidence, Result
from policies.detectors import DETECTOR_NAMES, replacement
from policies.fields import CHECKERS, FIELDS, ConditionError, check_value
from policies.model import Rule
from policies.patterns import Step, across_ok, steps
from policies.textnorm import fold, normal_form

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


def _found_plain(data: bytes, step: Step) -> list[tuple[int, int]]:
    """Every match of one detector pass in `data` that passes its check, by the public API."""
    searched = data.upper() if step.upper else data
    found = []
    for match in step.regex.finditer(searched):
        spans = [match.span(group) for group in range(step.regex.groups + 1)]
        if step.check is None or step.check(data, spans):
            found.append(spans[0])
    return found


def _bytes(text: str) -> bytes:
    return fold(text).encode("ascii", "replace")


def _replace_plain(text: str, hits: list[tuple[int, int]], name: str) -> str:
    """`text` with the source spans of the folded spans `hits` replaced by the marker."""
    form = normal_form(text)
    pieces: list[str] = []
    position = 0
    for start, end in hits:
        first, last = form.span(start, end)
        first = max(first, position)
        pieces += (text[position:first], replacement(name))
        position = max(last, first)
    return "".join([*pieces, text[position:]])


def _redact_pair_plain(
    heading: str, content: str, detectors: Sequence[str]
) -> tuple[str, str, list[tuple[str, str, int]]]:
    """The heading and content redacted, and (field, detector, count) per hit: each text on
    its own, then, detector by detector, a match across what is left of the two joined
    (nothing between them, and for api tokens a newline too); no prefilter, no window."""
    counts: dict[tuple[str, str], int] = {}
    texts = {"heading": heading, "content": content}
    named = [(name, step) for name in DETECTOR_NAMES if name in detectors for step in steps(name)]
    for key in ("heading", "content"):
        for name, step in named:
            found = _found_plain(_bytes(texts[key]), step)
            if found:
                texts[key] = _replace_plain(texts[key], found, name)
                counts[key, name] = counts.get((key, name), 0) + len(found)
    for name, step in named:
        for joint in ("", "\n") if name == "api_token" else ("",):
            if _across_plain(texts, name, step, joint):
                for key in ("heading", "content"):
                    counts[key, name] = counts.get((key, name), 0) + 1
    hits = [(key, name, count) for (key, name), count in counts.items()]
    return texts["heading"], texts["content"], hits


def _across_plain(texts: dict[str, str], name: str, step: Step, joint: str) -> bool:
    """Replace the first match across heading and content joined by `joint`, if any."""
    head, body = texts["heading"], texts["content"]
    cut = len(fold(head))
    if not cut or not fold(body):
        return False
    joined = _bytes(fold(head) + joint + fold(body))
    across = [(s, e) for s, e in _found_plain(joined, step) if s < cut < e - len(joint)]
    if not across or not across_ok(name, joined, *across[0]):
        return False
    start, end = across[0]
    first, _ = normal_form(head).span(start, cut)
    _, last = normal_form(body).span(0, end - cut - len(joint))
    texts["heading"] = head[:first] + replacement(name)
    texts["content"] = replacement(name) + body[last:]
    return True


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
                    texts = track.texts
                    texts["heading"], texts["content"], counts = _redact_pair_plain(
                        texts["heading"], texts["content"], rule.detectors
                    )
                    for key, detector, count in counts:
                        got.append(Redaction(key, detector, count))
                        track.counts[key, detector] = track.counts.get((key, detector), 0) + count
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
