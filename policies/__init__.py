"""ctxgw policy engine: YAML policy bundles, linted, evaluated, digested and tested.

Pure: no framework, database, clock or randomness (`now` is passed in); it imports neither
`gateway` nor `receipts`.

    load_bundle(source, filename) -> LoadedBundle      lint + compile; raises PolicyLintError
    lint(source, filename) -> tuple[LintIssue, ...]     every finding, never raises
    evaluate(bundle, request, memories, now) -> Evaluation
    judge_request(bundle, request, now) -> RequestJudgement   the request stage, once;
                                                        .judge(memories) -> Judgement
    judge(bundle, request, memories, now) -> Judgement  verdicts now; .texts(...) redacts what may
                                                        be shown, .evaluation(...) records what was
    canonical_bytes(bundle) / bundle_digest(bundle) / load_canonical(canonical)
    run_suite(path) -> SuiteResult, junit_xml(results) -> str
    default_bundle() -> LoadedBundle                    the shipped allow-by-default bundle

Errors: PolicyLintError (carries `issues`, each `file:line:col: CODE message`). evaluate raises
only on misuse (a naive `now`: ValueError; a memory without a string memory_id: TypeError).
"""

from policies.conditions import AllOf, AnyOf, Condition, Evidence, FieldCondition, Not
from policies.decisions import Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.digest import bundle_digest, canonical_bytes, load_canonical, normalize
from policies.evaluate import RequestJudgement, evaluate, judge, judge_request
from policies.issues import LintIssue, PolicyLintError
from policies.judgement import Judgement, Verdicts
from policies.lint import LoadedBundle, lint, load_bundle
from policies.model import Bundle, Rule
from policies.shipped import default_bundle, shipped_bundle
from policies.suite import CaseResult, SuiteResult, junit_xml, run_suite

__all__ = [
    "AllOf",
    "AnyOf",
    "Bundle",
    "CaseResult",
    "Condition",
    "Decision",
    "Evaluation",
    "Evidence",
    "FieldCondition",
    "Judgement",
    "LintIssue",
    "LoadedBundle",
    "MemoryOutcome",
    "Not",
    "Outcome",
    "PolicyLintError",
    "Redaction",
    "Refusal",
    "RequestJudgement",
    "Rule",
    "SuiteResult",
    "Verdicts",
    "bundle_digest",
    "canonical_bytes",
    "default_bundle",
    "evaluate",
    "judge",
    "judge_request",
    "junit_xml",
    "lint",
    "load_bundle",
    "load_canonical",
    "normalize",
    "run_suite",
    "shipped_bundle",
]
