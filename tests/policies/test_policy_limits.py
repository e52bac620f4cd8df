"""Bad input in bounded time: size, rule count, nesting, node count, alias bombs, garbage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from policies import PolicyLintError, lint, load_bundle
from policies.lint_conditions import MAX_CONDITION_NODES
from policies.lint_rules import MAX_RULES
from policies.loader import MAX_SOURCE_BYTES

HEAD = "apiVersion: ctxgw/v1\nkind: PolicyBundle\nmetadata: {name: x}\nspec:\n  default_decision: allow\n  rules:\n"


@contextmanager
def within(seconds: float) -> Iterator[None]:
    # Generous bounds: the point is "bounded", not a benchmark, and CI machines are shared.
    start = time.perf_counter()
    yield
    assert time.perf_counter() - start < seconds


def _codes(source: str | bytes) -> list[str]:
    return [issue.code for issue in lint(source)]


def test_ten_megabytes_is_refused_before_parsing() -> None:
    big = "a: " + "x" * (10 * 1024 * 1024)
    with within(0.5):
        assert _codes(big) == ["P001"]
        assert _codes(big.encode()) == ["P001"]
    # Multi-byte text is measured in bytes, not characters.
    assert _codes("a: " + "é" * (MAX_SOURCE_BYTES // 2 + 1)) == ["P001"]


def test_ten_thousand_rules() -> None:
    source = HEAD + "".join(f"    - {{id: r{i}, effect: allow}}\n" for i in range(10_000))
    with within(5):
        issues = lint(source)
    assert [str(i) for i in issues] == [
        f"<policy>:7:5: P031 spec.rules has 10000 rules; at most {MAX_RULES}"
    ]


def test_the_rule_limit_itself_is_fine() -> None:
    source = HEAD + "".join(
        f"    - {{id: r{i}, effect: deny, reason: r, when: {{field: memory.namespace, op: eq, value: n{i}}}}}\n"
        for i in range(MAX_RULES)
    )
    with within(5):
        assert len(load_bundle(source).bundle.rules) == MAX_RULES


def test_deep_yaml_nesting() -> None:
    with within(1):
        assert _codes("a: " + "[" * 100_000 + "]" * 100_000) == ["P003"]
        assert _codes("a: " + "{a: " * 5_000 + "1" + "}" * 5_000) == ["P006"]
        assert _codes("a:\n" + "".join("  " * i + "- \n" for i in range(1, 200))) == ["P006"]


def test_deep_and_wide_conditions() -> None:
    leaf = "{field: memory.namespace, op: eq, value: hr}"
    rule = "    - {{id: r, effect: deny, reason: r, when: {}}}\n"
    with within(1):
        # 12 levels: the condition limit; 200 levels: the YAML nesting limit comes first.
        assert _codes(HEAD + rule.format("{not: " * 12 + leaf + "}" * 12)) == ["P048"]
        assert _codes(HEAD + rule.format("{not: " * 200 + leaf + "}" * 200)) == ["P006"]
    wide = ", ".join(
        "{field: memory.tokens, op: gt, value: 1}" for _ in range(MAX_CONDITION_NODES + 5)
    )
    assert _codes(
        HEAD + f"    - {{id: r, effect: deny, reason: r, when: {{any: [{wide}]}}}}\n"
    ) == ["P049"]


def test_too_many_nodes() -> None:
    with within(3):
        assert _codes("a: [" + "1," * 400_000 + "1]") == ["P013"]


def test_alias_bomb_is_refused_at_the_first_anchor() -> None:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
        for i in range(8)
    )
    with within(0.5):
        issues = lint(bomb)
    assert {issue.code for issue in issues} == {"P004"}
    assert str(issues[-1]).endswith("alias *a is not allowed")


def _regex_rule(pattern: str) -> str:
    return (
        HEAD
        + "    - {id: r, effect: deny, reason: r, when: {field: memory.content, op: regex,"
        + f" value: '{pattern}'}}}}\n"
    )


def test_catastrophic_regex_is_accepted_because_re2_is_linear() -> None:
    """`(a+)+$` is exponential for a backtracking engine on "aaa…a!", so a bundle may only hold
    it because patterns run on RE2. That it is RE2 that judges them shows in what it refuses:
    a backreference, which only a backtracking engine can run. And the catastrophic pattern
    decides the catastrophic input, right, at once."""
    from policies import evaluate
    from tests.policies.policy_helpers import NOW, memory

    refused = lint(_regex_rule(r"(a)\1"))
    assert [issue.code for issue in refused] == ["P044"], refused
    assert "RE2 cannot compile it" in refused[0].message
    bundle = load_bundle(_regex_rule("(a+)+$")).bundle
    hostile = [memory("m1", content="a" * 100_000 + "!"), memory("m2", content="a" * 100_000)]
    outcomes = evaluate(bundle, {}, hostile, NOW).outcomes
    assert [o.outcome for o in outcomes] == ["admit", "deny"]


@pytest.mark.parametrize(
    "source",
    [
        "{{{{",
        "- - - - :",
        "a: b: c",
        "key: 'unterminated",
        "\t\tindent: tabs",
        "%YAML 9.9\n---\na: 1",
        "a: !<tag:yaml.org,2002:binary> AAAA",
        "? [complex, key]\n: value",
        b"\xef\xbb\xbfapiVersion: ctxgw/v1",  # a BOM is fine; the rest is just incomplete
        "a: 1\n...\n---\nb: 2",
    ],
)
def test_malformed_yaml_is_reported_never_raised(source: str | bytes) -> None:
    with within(0.5):
        issues = lint(source)
    assert issues and all(issue.line >= 1 and issue.col >= 1 for issue in issues)
    with pytest.raises(PolicyLintError):
        load_bundle(source)


def test_issue_count_is_bounded() -> None:
    source = HEAD + "".join(f"    - {{id: r{i}, effect: dny}}\n" for i in range(900))
    issues = lint(source)
    assert len(issues) == 201
    assert issues[-1].code == "P090" and issues[-1].message == "700 more issues not shown"
