"""`ctxgw policy test|lint PATH`, as plain functions the gateway CLI (or `python -m policies`)
calls. Output goes to stdout; the return value is the exit code:

    0  everything passed (lint: no errors; warnings are printed but do not fail)
    3  a lint or compile error, in a bundle or a suite, or a file that cannot be read
    4  a policy test failed

PATH may be a file or a directory: `test` then runs every `*.test.yaml` below it, `lint` checks
every other `*.yaml`/`*.yml` (bundles).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from policies.issues import LintIssue, PolicyLintError
from policies.lint import lint
from policies.suite import SuiteResult, junit_lint_xml, junit_xml, run_suite

__all__ = ["EXIT_FAILED", "EXIT_INVALID", "EXIT_OK", "main_lint", "main_test"]

EXIT_OK = 0
EXIT_INVALID = 3
EXIT_FAILED = 4
_SUITE_SUFFIX = ".test.yaml"


def main_test(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ctxgw policy test", description="Run policy test suites."
    )
    parser.add_argument("path", type=Path, help="a *.test.yaml suite, or a directory of them")
    parser.add_argument("--format", choices=("text", "junit"), default="text")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    suites = _files(args.path, suites=True)
    if not suites:
        print(f"{args.path}: P000 no *{_SUITE_SUFFIX} suite found")
        return EXIT_INVALID
    results: list[SuiteResult] = []
    for path in suites:
        try:
            results.append(run_suite(path))
        except PolicyLintError as exc:
            issues: Sequence[LintIssue] = exc.issues
        except OSError as exc:
            issues = [LintIssue(str(path), 1, 1, "P000", f"cannot read file: {exc.strerror}")]
        else:
            continue
        if args.format == "junit":
            print(junit_lint_xml(str(path), issues), end="")
        else:
            _print_issues(issues)
        return EXIT_INVALID
    if args.format == "junit":
        print(junit_xml(results), end="")
    else:
        for result in results:
            _print_result(result)
    return EXIT_OK if all(result.passed for result in results) else EXIT_FAILED


def main_lint(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="ctxgw policy lint", description="Lint policy bundles.")
    parser.add_argument("path", type=Path, help="a bundle file, or a directory of them")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    bundles = _files(args.path, suites=False)
    if not bundles:
        print(f"{args.path}: P000 no bundle found")
        return EXIT_INVALID
    failed = False
    for path in bundles:
        try:
            source = path.read_bytes()
        except OSError as exc:
            print(f"{path}:1:1: P000 cannot read file: {exc.strerror}")
            failed = True
            continue
        issues = lint(source, str(path))
        _print_issues(issues)
        errors = [issue for issue in issues if issue.severity == "error"]
        failed = failed or bool(errors)
        if not errors:
            print(f"{path}: ok")
    return EXIT_INVALID if failed else EXIT_OK


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:  # --help, or a usage error (argparse exits 2)
        return exc.code if isinstance(exc.code, int) else 2


def _files(path: Path, *, suites: bool) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = [*path.rglob("*.yaml"), *path.rglob("*.yml")]
    return sorted(p for p in found if p.name.endswith(_SUITE_SUFFIX) == suites)


def _print_issues(issues: Sequence[LintIssue]) -> None:
    for issue in issues:
        print(str(issue) if issue.severity == "error" else f"{issue} (warning)")


def _print_result(result: SuiteResult) -> None:
    print(f"{result.path}: bundle {result.bundle_path} {result.bundle_digest}")
    for case in result.cases:
        print(f"  {'ok  ' if case.passed else 'FAIL'} {case.name}")
        for failure in case.failures:
            print(f"       {failure}")
    passed = len(result.cases) - result.failed
    print(f"  {passed} passed, {result.failed} failed")
