"""Running PolicyTestSuite files: evaluate each case at the pinned `now`, compare, report.

`run_suite` raises PolicyLintError when the suite or its bundle does not lint (the CLI's exit
code 3); otherwise it returns a SuiteResult whose cases pass or list their failures (exit 4).
Reading files is the only I/O; there is no clock, so reports are byte-for-byte reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from policies.decisions import Evaluation, MemoryOutcome, Redaction
from policies.evaluate import evaluate
from policies.issues import IssueLog, LintIssue, PolicyLintError
from policies.lint import LoadedBundle, load_bundle
from policies.loader import parse_yaml
from policies.schema import Checker, did_you_mean
from policies.suite_format import MISSING, CaseSpec, Expectation, SuiteSpec, read_suite

__all__ = ["CaseResult", "SuiteResult", "junit_lint_xml", "junit_xml", "run_suite"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    name: str
    line: int
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True, slots=True)
class SuiteResult:
    name: str
    path: str
    bundle_path: str
    bundle_digest: str
    cases: tuple[CaseResult, ...]

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    @property
    def failed(self) -> int:
        return sum(1 for case in self.cases if not case.passed)


def run_suite(path: Path) -> SuiteResult:
    """Run one suite file. Raises PolicyLintError (suite or bundle) and OSError (unreadable)."""
    log = IssueLog(str(path))
    root = parse_yaml(path.read_bytes(), log)
    spec = None if root is None else read_suite(root, Checker(log))
    if spec is None or log.has_errors:
        raise PolicyLintError(log.issues())
    bundle_path = path.parent / spec.bundle
    try:
        source = bundle_path.read_bytes()
    except OSError as exc:
        node = spec.bundle_node
        log.report(node.line, node.col, "P000", f"cannot read bundle {spec.bundle}: {exc.strerror}")
        raise PolicyLintError(log.issues()) from None
    loaded = load_bundle(source, str(bundle_path))
    _check_rule_ids(spec, loaded, log)
    if log.has_errors:
        raise PolicyLintError(log.issues())
    cases = tuple(_run_case(spec, case, loaded) for case in spec.cases)
    return SuiteResult(spec.name, str(path), str(bundle_path), loaded.digest, cases)


def _check_rule_ids(spec: SuiteSpec, loaded: LoadedBundle, log: IssueLog) -> None:
    known = [rule.id for rule in loaded.bundle.rules]
    for case in spec.cases:
        named: list[tuple[object, int, int]] = [(case.refused, case.line, case.col)]
        for expectation in case.expectations:
            where = (expectation.line, expectation.col)
            for key in ("rule_id", "rule_id_if_enforced"):
                named.append((expectation.checks.get(key), *where))
            decisions = expectation.checks.get("decisions")
            if isinstance(decisions, list):
                named.extend((rule_id, *where) for rule_id in decisions)
        for rule_id, line, col in named:
            if isinstance(rule_id, str) and rule_id not in known:
                hint = did_you_mean(rule_id, known)
                log.report(line, col, "P060", f"case '{case.name}': no rule '{rule_id}'{hint}")


def _run_case(spec: SuiteSpec, case: CaseSpec, loaded: LoadedBundle) -> CaseResult:
    memories = [spec.memories[memory_id] for memory_id in case.memory_ids]
    evaluation = evaluate(loaded.bundle, case.request, memories, spec.now)
    failures: list[str] = []
    if case.refused is not MISSING:
        got = None if evaluation.refused is None else evaluation.refused.rule_id
        if got != case.refused:
            failures.append(f"refused: expected {_show(case.refused)}, got {_show(got)}")
    for expectation in case.expectations:
        outcome = evaluation.outcome_for(expectation.memory_id)
        failures.extend(_compare(expectation, outcome, evaluation))
    return CaseResult(case.name, case.line, tuple(failures))


def _compare(expectation: Expectation, outcome: MemoryOutcome, evaluation: Evaluation) -> list[str]:
    failures: list[str] = []
    prefix = expectation.memory_id
    for key, want in sorted(expectation.checks.items()):
        expected: object = want
        if key == "decisions":
            got: object = sorted({d.rule_id for d in evaluation.decisions if d.memory_id == prefix})
            expected = sorted({str(item) for item in want}) if isinstance(want, list) else want
        elif key.startswith("redactions"):
            got = _redaction_set(getattr(outcome, key), want)
            expected = _expected_redactions(want)
        else:
            got = getattr(outcome, key)
        if got != expected:
            failures.append(f"{prefix}: {key}: expected {_show(expected)}, got {_show(got)}")
    return failures


def _expected_redactions(expected: object) -> list[tuple[object, ...]]:
    items = expected if isinstance(expected, list) else []
    return sorted(
        tuple(item[k] for k in ("field", "detector", "count") if k in item)
        for item in items
        if isinstance(item, dict)
    )


def _redaction_set(actual: tuple[Redaction, ...], expected: object) -> list[tuple[object, ...]]:
    # Counts are compared only where the expectation states them.
    items = expected if isinstance(expected, list) else []
    with_count = {
        (i.get("field"), i.get("detector")) for i in items if isinstance(i, dict) and "count" in i
    }
    return sorted(
        (r.field, r.detector, r.count)
        if (r.field, r.detector) in with_count
        else (r.field, r.detector)
        for r in actual
    )


def _show(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, tuple):
        return "/".join(str(item) for item in value)
    return repr(value) if isinstance(value, str) and len(value) > 40 else str(value)


def junit_xml(results: SuiteResult | list[SuiteResult]) -> str:
    """JUnit XML for CI. No timestamps or durations: the same results give the same bytes."""
    suites = [results] if isinstance(results, SuiteResult) else list(results)
    tests = sum(len(s.cases) for s in suites)
    failures = sum(s.failed for s in suites)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="ctxgw policy tests" tests="{tests}" failures="{failures}" errors="0">',
    ]
    for suite in suites:
        lines.append(
            f'  <testsuite name={_attr(suite.name or suite.path)} tests="{len(suite.cases)}"'
            f' failures="{suite.failed}" errors="0" skipped="0" time="0"'
            f" file={_attr(suite.path)}>"
        )
        lines.append("    <properties>")
        lines.append(f'      <property name="bundle" value={_attr(suite.bundle_path)}/>')
        lines.append(f'      <property name="digest" value={_attr(suite.bundle_digest)}/>')
        lines.append("    </properties>")
        for case in suite.cases:
            head = (
                f"    <testcase classname={_attr(suite.name or suite.path)}"
                f" name={_attr(case.name)} file={_attr(suite.path)}"
                f' line="{case.line}" time="0"'
            )
            if case.passed:
                lines.append(head + "/>")
                continue
            message = _attr(case.failures[0])
            body = _xml_text("\n".join(case.failures))
            lines.append(head + ">")
            lines.append(
                f'      <failure message={message} type="PolicyTestFailure">{body}</failure>'
            )
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def junit_lint_xml(path: str, issues: Sequence[LintIssue]) -> str:
    """JUnit XML for a suite that could not run: one test case in error, listing the findings."""
    body = _xml_text("\n".join(str(issue) for issue in issues))
    first = _attr(str(issues[0]) if issues else "lint error")
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<testsuites name="ctxgw policy tests" tests="1" failures="0" errors="1">',
            f'  <testsuite name={_attr(path)} tests="1" failures="0" errors="1" skipped="0"'
            f' time="0" file={_attr(path)}>',
            f'    <testcase classname={_attr(path)} name="lint" file={_attr(path)} time="0">',
            f'      <error message={first} type="PolicyLintError">{body}</error>',
            "    </testcase>",
            "  </testsuite>",
            "</testsuites>",
            "",
        ]
    )


def _xml_text(text: str) -> str:
    return _xml_safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_safe(text: str) -> str:
    # XML 1.0 admits no control characters but tab, newline and carriage return.
    return "".join(c if c >= " " or c in "\t\n\r" else f"\\x{ord(c):02x}" for c in text)


def _attr(text: str) -> str:
    return quoteattr(_xml_safe(text))
