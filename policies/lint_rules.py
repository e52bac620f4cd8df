"""Reading a PolicyBundle document: top-level keys, metadata, spec, and each rule.

Every problem is logged at its node and reading carries on, so one run reports all of them.
A `Bundle` is returned only when nothing was an error.
"""

from __future__ import annotations

import re
from typing import Final, cast, get_args

from policies.conditions import Condition
from policies.issues import IssueLog
from policies.lint_conditions import parse_condition
from policies.loader import MapNode, Node, ScalarNode
from policies.model import (
    API_VERSION,
    DEFAULT_STAGE,
    DETECTOR_NAMES,
    Bundle,
    Combining,
    DefaultDecision,
    Effect,
    Mode,
    Rule,
    Stage,
    WithheldCount,
)
from policies.schema import Checker, did_you_mean

__all__ = ["MAX_RULES", "build_bundle", "read_header"]

MAX_RULES = 1000
MAX_COUNT = 1_000_000_000

_RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_TOP_KEYS = ("apiVersion", "kind", "metadata", "spec")
_METADATA_KEYS = ("name", "revision", "description")
_SPEC_KEYS = ("mode", "combining", "default_decision", "on_error", "withheld_count", "rules")
_RULE_KEYS = (
    "id",
    "stage",
    "effect",
    "mode",
    "reason",
    "when",
    "detectors",
    "max_items",
    "max_tokens",
)
_MODES: Final = get_args(Mode)
_DECISIONS: Final = get_args(DefaultDecision)


def read_header(checker: Checker, root: Node, kind: str, keys: tuple[str, ...]) -> MapNode | None:
    """The top-level mapping of a `ctxgw/v1` document of `kind`, with its keys checked."""
    top = checker.mapping(root, "the document", keys, required=keys)
    if top is None:
        return None
    version, found_kind = top.get("apiVersion"), top.get("kind")
    if version is not None:
        checker.choice(version, "apiVersion", (API_VERSION,))
    if found_kind is not None:
        checker.choice(found_kind, "kind", (kind,))
    return top


def build_bundle(root: Node, log: IssueLog) -> Bundle | None:
    checker = Checker(log)
    top = read_header(checker, root, "PolicyBundle", _TOP_KEYS)
    if top is None:
        return None
    meta_node, spec_node = top.get("metadata"), top.get("spec")
    meta = {} if meta_node is None else _metadata(checker, meta_node)
    if spec_node is None:
        return None
    spec = checker.mapping(spec_node, "spec", _SPEC_KEYS, required=("default_decision",))
    if spec is None:
        return None
    settings = {
        key: _optional_choice(checker, spec, key, options, default)
        for key, options, default in (
            ("mode", _MODES, "enforce"),
            ("combining", get_args(Combining), "deny-overrides"),
            ("default_decision", _DECISIONS, None),
            ("on_error", _DECISIONS, "deny"),
            ("withheld_count", get_args(WithheldCount), "hidden"),
        )
    }
    rules_node = spec.get("rules")
    rules = () if rules_node is None else _rules(checker, rules_node, settings)
    if log.has_errors or rules is None:
        return None
    return Bundle(
        name=meta["name"],
        revision=meta.get("revision", ""),
        description=meta.get("description", ""),
        mode=cast(Mode, settings["mode"]),
        combining=cast(Combining, settings["combining"]),
        default_decision=cast(DefaultDecision, settings["default_decision"]),
        on_error=cast(DefaultDecision, settings["on_error"]),
        withheld_count=cast(WithheldCount, settings["withheld_count"]),
        rules=rules,
    )


def _metadata(checker: Checker, node: Node) -> dict[str, str]:
    meta = checker.mapping(node, "metadata", _METADATA_KEYS, required=("name",))
    found: dict[str, str] = {}
    if meta is None:
        return found
    for key, limit in (("name", 128), ("revision", 64), ("description", 2000)):
        value_node = meta.get(key)
        if value_node is not None:
            text = checker.string(value_node, f"metadata.{key}", max_len=limit)
            if text is not None:
                found[key] = text
    if found.get("name") == "":
        checker.error(node, "P023", "metadata.name must not be empty")
    return found


def _optional_choice(
    checker: Checker, mapping: MapNode, key: str, options: tuple[str, ...], default: str | None
) -> str | None:
    node = mapping.get(key)
    if node is None:
        return default
    return checker.choice(node, f"spec.{key}", options)


def _rules(
    checker: Checker, node: Node, settings: dict[str, str | None]
) -> tuple[Rule, ...] | None:
    items = checker.sequence(node, "spec.rules")
    if items is None:
        return None
    if len(items.items) > MAX_RULES:
        checker.error(node, "P031", f"spec.rules has {len(items.items)} rules; at most {MAX_RULES}")
        return None
    rules: list[Rule] = []
    seen: dict[str, ScalarNode] = {}
    for index, item in enumerate(items.items):
        rule = _rule(checker, item, f"spec.rules[{index}]", settings["mode"])
        id_node = item.get("id") if isinstance(item, MapNode) else None
        if isinstance(id_node, ScalarNode) and id_node.tag == "str":
            first = seen.setdefault(id_node.text, id_node)
            if first is not id_node:
                checker.error(
                    id_node,
                    "P030",
                    f"duplicate rule id '{id_node.text}' (first defined at {first.line}:{first.col})",
                )
        if rule is not None:
            rules.append(rule)
    if len(rules) != len(items.items):
        return None
    if settings["combining"] == "first-applicable":
        _warn_unreachable(checker, items.items, rules)
    return tuple(rules)


def _rule(checker: Checker, node: Node, path: str, bundle_mode: str | None) -> Rule | None:
    mapping = checker.mapping(node, path, _RULE_KEYS, required=("id", "effect"))
    if mapping is None:
        return None
    errors_before = checker.log.error_count
    id_node, effect_node = mapping.get("id"), mapping.get("effect")
    rule_id = None if id_node is None else checker.string(id_node, f"{path}.id")
    if id_node is not None and rule_id is not None and not _RULE_ID.fullmatch(rule_id):
        checker.error(
            id_node, "P032", f"rule id '{rule_id[:40]}' must match [A-Za-z0-9][A-Za-z0-9._:-]*"
        )
        rule_id = None
    effect = (
        None
        if effect_node is None
        else checker.choice(effect_node, f"{path}.effect", list(DEFAULT_STAGE))
    )
    stage = None if effect is None else DEFAULT_STAGE[cast(Effect, effect)]
    stage_node = mapping.get("stage")
    if stage_node is not None:
        given = checker.choice(stage_node, f"{path}.stage", get_args(Stage))
        if given is not None and stage is not None and given != stage:
            checker.error(
                stage_node, "P033", f"effect '{effect}' belongs to stage '{stage}', not '{given}'"
            )
    mode = "enforce"
    if (mode_node := mapping.get("mode")) is not None:
        mode = checker.choice(mode_node, f"{path}.mode", _MODES) or "enforce"
        if bundle_mode == "log_only" and mode == "enforce":
            checker.warning(
                mode_node, "P103", f"{path}: the bundle is log_only, so this rule is log_only too"
            )
    reason = ""
    if (reason_node := mapping.get("reason")) is not None:
        reason = checker.string(reason_node, f"{path}.reason") or ""
    elif effect in ("deny", "require"):
        checker.warning(mapping, "P102", f"{path}: a {effect} rule should say why (reason)")
    when = _when(checker, mapping, path, effect)
    detectors = _detectors(checker, mapping, path, effect)
    limits = _limits(checker, mapping, path, effect)
    if (
        rule_id is None
        or effect is None
        or stage is None
        or checker.log.error_count > errors_before
    ):
        return None
    return Rule(
        id=rule_id,
        effect=cast(Effect, effect),
        stage=stage,
        when=when,
        reason=reason,
        mode=cast(Mode, mode),
        detectors=detectors,
        max_items=limits[0],
        max_tokens=limits[1],
    )


def _when(checker: Checker, mapping: MapNode, path: str, effect: str | None) -> Condition | None:
    node = mapping.get("when")
    if node is None:
        if effect == "require":
            checker.error(mapping, "P021", f"{path}: a require rule needs 'when' (what must hold)")
        return None
    return parse_condition(node, f"{path}.when", checker, request_only=effect == "require")


def _detectors(
    checker: Checker, mapping: MapNode, path: str, effect: str | None
) -> tuple[str, ...]:
    node = mapping.get("detectors")
    if node is None:
        if effect == "redact":
            checker.error(mapping, "P021", f"{path}: a redact rule needs 'detectors'")
        return ()
    if effect != "redact":
        checker.error(node, "P034", f"{path}: 'detectors' only applies to redact rules")
        return ()
    items = checker.sequence(node, f"{path}.detectors", min_items=1)
    names: set[str] = set()
    for index, item in enumerate(() if items is None else items.items):
        name = checker.string(item, f"{path}.detectors[{index}]")
        if name is not None and name not in DETECTOR_NAMES:
            hint = did_you_mean(name, DETECTOR_NAMES)
            checker.error(item, "P052", f"unknown detector '{name}'{hint}")
        elif name is not None:
            names.add(name)
    # Detectors always run in the fixed order, so the model keeps them in that order.
    return tuple(name for name in DETECTOR_NAMES if name in names)


def _limits(
    checker: Checker, mapping: MapNode, path: str, effect: str | None
) -> tuple[int | None, int | None]:
    found: list[int | None] = []
    for key in ("max_items", "max_tokens"):
        node = mapping.get(key)
        if node is not None and effect != "cap":
            checker.error(node, "P034", f"{path}: '{key}' only applies to cap rules")
        found.append(
            None
            if node is None or effect != "cap"
            else checker.integer(node, f"{path}.{key}", 0, MAX_COUNT)
        )
    if effect == "cap" and mapping.get("max_items") is None and mapping.get("max_tokens") is None:
        checker.error(mapping, "P021", f"{path}: a cap rule needs max_items or max_tokens")
    return found[0], found[1]


def _warn_unreachable(checker: Checker, nodes: tuple[Node, ...], rules: list[Rule]) -> None:
    # Under first-applicable an unconditional admit rule decides for every memory; say so about
    # the admit rules after it rather than let an author believe they do something.
    blocker: Rule | None = None
    for node, rule in zip(nodes, rules, strict=True):
        if rule.stage != "admit":
            continue
        if blocker is not None:
            checker.warning(
                node,
                "P101",
                f"rule '{rule.id}' can never match first: '{blocker.id}' before it has no 'when'",
            )
        elif rule.when is None:
            blocker = rule
