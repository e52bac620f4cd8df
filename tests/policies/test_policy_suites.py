"""Policy test suites and the CLI: shipped suites pass, exit codes 0/3/4, junit output."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest

from policies import PolicyLintError, junit_xml, run_suite
from policies.cli import main_lint, main_test

BUNDLES = Path(__file__).parents[2] / "policies" / "bundles"
REPO = Path(__file__).parents[2]

BUNDLE = """\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: suite-test}
spec:
  default_decision: allow
  rules:
    - {id: deny-hr, effect: deny, reason: HR only, when: {field: memory.namespace, op: eq, value: hr}}
    - {id: pii, effect: redact, detectors: [email]}
"""

SUITE = """\
apiVersion: ctxgw/v1
kind: PolicyTestSuite
metadata: {name: tmp-suite}
spec:
  bundle: bundle.yaml
  now: "2026-11-29T12:00:00Z"
  requests:
    agent: {role: agent, purpose: support}
  memories:
    - {memory_id: hr, namespace: hr, heading: h, content: c, labels: []}
    - {memory_id: mail, namespace: eng, heading: h, content: "ann@example.com", labels: []}
  cases:
    - name: hr is denied
      request: agent
      expect:
        outcomes:
          hr: {outcome: deny, rule_id: deny-hr}
          mail:
            outcome: admit
            redacted_content: "[redacted:email]"
            redactions: [{field: content, detector: email, count: 1}]
"""


def _write(tmp_path: Path, suite: str = SUITE, bundle: str = BUNDLE) -> Path:
    (tmp_path / "bundle.yaml").write_text(bundle)
    path = tmp_path / "bundle.test.yaml"
    path.write_text(suite)
    return path


@pytest.mark.parametrize("suite", sorted(BUNDLES.glob("*.test.yaml")), ids=lambda p: p.name)
def test_shipped_suites_pass(suite: Path) -> None:
    result = run_suite(suite)
    assert result.cases, "a shipped suite must test something"
    assert [c.failures for c in result.cases if not c.passed] == []


def test_every_shipped_bundle_has_a_suite() -> None:
    bundles = {
        p.name.removesuffix(".yaml")
        for p in BUNDLES.glob("*.yaml")
        if not p.name.endswith(".test.yaml")
    }
    suites = {p.name.removesuffix(".test.yaml") for p in BUNDLES.glob("*.test.yaml")}
    assert bundles == suites == {"default", "strict"}


def test_passing_suite(tmp_path: Path) -> None:
    result = run_suite(_write(tmp_path))
    assert result.passed and result.name == "tmp-suite"
    assert result.bundle_digest.startswith("sha256:")


def test_failing_case_lists_every_mismatch(tmp_path: Path) -> None:
    suite = SUITE.replace(
        "{outcome: deny, rule_id: deny-hr}", "{outcome: admit, rule_id: nobody-knows}"
    )
    with pytest.raises(PolicyLintError, match="no rule 'nobody-knows'"):
        run_suite(_write(tmp_path, suite))
    suite = SUITE.replace("{outcome: deny, rule_id: deny-hr}", "{outcome: admit, rule_id: pii}")
    result = run_suite(_write(tmp_path, suite))
    assert not result.passed
    assert result.cases[0].failures == (
        "hr: outcome: expected admit, got deny",
        "hr: rule_id: expected pii, got deny-hr",
    )


def test_suite_lint_errors_have_positions(tmp_path: Path) -> None:
    suite = SUITE.replace("request: agent", "request: agnet").replace(
        "outcome: admit", "outcome: admitted"
    )
    with pytest.raises(PolicyLintError) as caught:
        run_suite(_write(tmp_path, suite))
    assert [str(i).split(": ", 1)[1][:4] for i in caught.value.issues] == ["P060", "P023"]
    assert str(caught.value.issues[0]).startswith(f"{tmp_path / 'bundle.test.yaml'}:14:16: P060")


def test_bundle_lint_errors_surface_through_the_suite(tmp_path: Path) -> None:
    with pytest.raises(PolicyLintError) as caught:
        run_suite(_write(tmp_path, bundle=BUNDLE.replace("effect: deny,", "effect: dny,")))
    assert "bundle.yaml:7:" in str(caught.value) and "did you mean 'deny'" in str(caught.value)


def test_missing_bundle_file(tmp_path: Path) -> None:
    path = _write(tmp_path, SUITE.replace("bundle: bundle.yaml", "bundle: nowhere.yaml"))
    with pytest.raises(PolicyLintError, match=r"P000 cannot read bundle nowhere\.yaml"):
        run_suite(path)


class TestCli:
    def test_exit_0_when_all_pass(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main_test([str(_write(tmp_path))]) == 0
        assert "1 passed, 0 failed" in capsys.readouterr().out

    def test_exit_4_on_a_failing_case(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _write(tmp_path, SUITE.replace("outcome: deny", "outcome: cap"))
        assert main_test([str(path)]) == 4
        assert "FAIL hr is denied" in capsys.readouterr().out

    def test_exit_3_on_lint_errors(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _write(
            tmp_path, bundle=BUNDLE.replace("default_decision: allow", "default_decision: no")
        )
        assert main_test([str(path)]) == 3
        out = capsys.readouterr().out
        assert "bundle.yaml:5:21: P010" in out

    def test_exit_3_on_a_missing_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert main_test([str(tmp_path / "absent.test.yaml")]) == 3
        assert main_lint([str(tmp_path / "absent.yaml")]) == 3
        assert "P000" in capsys.readouterr().out

    def test_directory_runs_every_suite(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main_test([str(BUNDLES)]) == 0
        out = capsys.readouterr().out
        assert "default.test.yaml" in out and "strict.test.yaml" in out

    def test_junit_output(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = _write(tmp_path, SUITE.replace("outcome: deny", "outcome: cap"))
        assert main_test([str(path), "--format", "junit"]) == 4
        out = capsys.readouterr().out
        root = ElementTree.fromstring(out)  # noqa: S314 - parsing our own output
        assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "1", "1")
        case = root.find("testsuite/testcase")
        assert case is not None and case.get("name") == "hr is denied" and case.get("line") == "13"
        failure = case.find("failure")
        assert (
            failure is not None and failure.get("message") == "hr: outcome: expected cap, got deny"
        )

    def test_junit_reports_lint_errors_as_an_error_case(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = _write(tmp_path, bundle=BUNDLE.replace("effect: deny,", "effect: dny,"))
        assert main_test([str(path), "--format", "junit"]) == 3
        root = ElementTree.fromstring(capsys.readouterr().out)  # noqa: S314 - our own output
        error = root.find("testsuite/testcase/error")
        assert root.get("errors") == "1" and error is not None
        assert "P023" in (error.get("message") or "") and "did you mean 'deny'" in (
            error.text or ""
        )

    def test_junit_is_deterministic(self) -> None:
        results = [run_suite(path) for path in sorted(BUNDLES.glob("*.test.yaml"))]
        assert junit_xml(results) == junit_xml(
            [run_suite(path) for path in sorted(BUNDLES.glob("*.test.yaml"))]
        )
        root = ElementTree.fromstring(junit_xml(results))  # noqa: S314 - parsing our own output
        assert root.get("failures") == "0" and int(root.get("tests") or 0) >= 10

    def test_lint_command(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main_lint([str(BUNDLES)]) == 0
        out = capsys.readouterr().out
        assert "default.yaml: ok" in out and "strict.yaml: ok" in out and "test.yaml" not in out
        bad = tmp_path / "bad.yaml"
        bad.write_text(BUNDLE.replace("default_decision: allow\n", ""))
        assert main_lint([str(bad)]) == 3
        assert (
            f"{bad}:5:5: P021 spec is missing required key 'default_decision'"
            in capsys.readouterr().out
        )

    def test_lint_warnings_exit_0(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = tmp_path / "warn.yaml"
        path.write_text(BUNDLE.replace(", reason: HR only", ""))
        assert main_lint([str(path)]) == 0
        assert "P102" in capsys.readouterr().out

    def test_usage_errors(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main_test([]) == 2
        assert main_test(["x", "--format", "xml"]) == 2
        capsys.readouterr()

    def test_python_dash_m(self) -> None:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "policies",
                "test",
                str(BUNDLES / "strict.test.yaml"),
                "--format",
                "junit",
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
        done = subprocess.run(
            [sys.executable, "-m", "policies", "explode"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 2


def test_suite_format_example_in_docs_is_valid(tmp_path: Path) -> None:
    from policies import suite_format

    doc = suite_format.__doc__ or ""
    example = textwrap.dedent(doc.split("\n\n", 1)[1].split("\n\nValues are typed")[0])
    (tmp_path / "default.yaml").write_text((BUNDLES / "default.yaml").read_text())
    path = tmp_path / "doc.test.yaml"
    path.write_text(example)
    result = run_suite(path)
    assert result.cases and result.passed
