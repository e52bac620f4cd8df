"""Lint: golden vectors (bad YAML in, `file:line:col: CODE message` lines out) and the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from policies import LintIssue, PolicyLintError, lint, load_bundle
from policies.issues import CODES
from tests.policies.policy_helpers import loaded

VECTORS = Path(__file__).parent / "vectors" / "lint"


def _render(issue: LintIssue) -> str:
    return str(issue) + ("" if issue.severity == "error" else " (warning)")


@pytest.mark.parametrize("vector", sorted(VECTORS.glob("*.yaml")), ids=lambda p: p.stem)
def test_golden_lint_vectors(vector: Path) -> None:
    expected = vector.with_suffix(".expected").read_text("utf-8").splitlines()
    found = [_render(issue) for issue in lint(vector.read_bytes(), vector.name)]
    assert found == expected


def test_every_vector_code_is_documented() -> None:
    for expected in VECTORS.glob("*.expected"):
        for line in expected.read_text("utf-8").splitlines():
            code = line.split(": ", 1)[1].split(" ", 1)[0]
            assert code in CODES, line


def test_issue_string_is_file_line_col_code_message() -> None:
    issue = LintIssue("b.yaml", 3, 7, "P020", "unknown key 'x'")
    assert str(issue) == "b.yaml:3:7: P020 unknown key 'x'"


def test_load_bundle_raises_with_every_issue() -> None:
    source = (VECTORS / "unknown_keys.yaml").read_text("utf-8")
    with pytest.raises(PolicyLintError) as caught:
        load_bundle(source, "unknown_keys.yaml")
    assert len(caught.value.errors) == 7
    assert all(str(issue).startswith("unknown_keys.yaml:") for issue in caught.value.issues)
    assert "did you mean 'default_decision'?" in str(caught.value)


def test_warnings_do_not_stop_a_bundle_from_loading() -> None:
    result = load_bundle((VECTORS / "warnings.yaml").read_bytes(), "warnings.yaml")
    assert [issue.code for issue in result.warnings] == ["P101", "P102", "P103"]
    assert all(issue.severity == "warning" for issue in result.warnings)


def test_good_bundle_has_no_findings_and_fills_defaults() -> None:
    result = load_bundle((VECTORS / "good.yaml").read_bytes(), "good.yaml")
    assert result.warnings == ()
    bundle = result.bundle
    assert (bundle.mode, bundle.combining, bundle.on_error) == ("enforce", "deny-overrides", "deny")
    assert [(r.id, r.stage) for r in bundle.rules] == [("need-purpose", "request"), ("hr", "admit")]
    assert result.digest.startswith("sha256:") and len(result.digest) == 71


def test_quoted_words_are_fine_where_unquoted_ones_are_traps() -> None:
    quoted = loaded(
        '- {id: r, effect: deny, reason: r, when: {field: memory.namespace, op: in, value: ["no", "on"]}}'
    )
    assert quoted.bundle.rules[0].when is not None
    issues = lint(
        "apiVersion: ctxgw/v1\nkind: PolicyBundle\nmetadata: {name: x}\n"
        "spec: {default_decision: allow, mode: off}\n"
    )
    assert [issue.code for issue in issues] == ["P010"]


def test_bytes_must_be_utf8() -> None:
    issues = lint(b"apiVersion: ctxgw/v1\nkind: \xff\n", "latin.yaml")
    assert [str(issue) for issue in issues] == [
        "latin.yaml:2:7: P002 source is not valid UTF-8: invalid start byte"
    ]


def test_lone_surrogates_are_not_text() -> None:
    assert [str(i) for i in lint("a: 1\nb: \ud800", "s.yaml")] == [
        "s.yaml:2:4: P002 source is not valid Unicode: a lone surrogate"
    ]


def test_empty_source_is_one_finding() -> None:
    assert [issue.code for issue in lint("")] == ["P009"]
    assert [issue.code for issue in lint("# only a comment\n")] == ["P009"]
    assert [issue.code for issue in lint("just a string\n")] == ["P022"]


def test_control_characters_are_a_syntax_error() -> None:
    issues = lint("apiVersion: ctxgw/v1\nkind: Policy\x00Bundle\n", "nul.yaml")
    assert [(issue.line, issue.code) for issue in issues] == [(2, "P003")]


def test_a_suite_is_not_a_bundle() -> None:
    issues = lint(
        "apiVersion: ctxgw/v1\nkind: PolicyTestSuite\nmetadata: {name: x}\nspec: {default_decision: allow}\n"
    )
    assert [issue.code for issue in issues] == ["P023"]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ('"2026-01-01"', "P047"),  # a date is not a timestamp
        ('"2026-01-01T00:00:00"', "P047"),  # no offset
        ('"yesterday"', "P047"),
        ("2026-01-01T00:00:00+02:00", None),
        ('"2026-01-01 00:00:00Z"', None),
    ],
)
def test_timestamps_need_an_offset(value: str, code: str | None) -> None:
    source = (
        "apiVersion: ctxgw/v1\nkind: PolicyBundle\nmetadata: {name: x}\nspec:\n"
        "  default_decision: allow\n  rules:\n"
        f"    - {{id: r, effect: deny, reason: r, when: {{field: memory.created_at, op: lt, value: {value}}}}}\n"
    )
    assert [issue.code for issue in lint(source)] == ([code] if code else [])


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("30d", True),
        ("12h", True),
        ("90m", True),
        ("45s", True),
        ("2w", True),
        ("0d", False),
        ("1.5h", False),
        ("30 d", False),
        ("30", False),
        ("-1d", False),
        ("10000000d", False),
    ],
)
def test_durations(value: str, ok: bool) -> None:
    source = (
        "apiVersion: ctxgw/v1\nkind: PolicyBundle\nmetadata: {name: x}\nspec:\n"
        "  default_decision: allow\n  rules:\n"
        f'    - {{id: r, effect: deny, reason: r, when: {{field: memory.created_at, op: older_than, value: "{value}"}}}}\n'
    )
    assert [issue.code for issue in lint(source)] == ([] if ok else ["P046"])
