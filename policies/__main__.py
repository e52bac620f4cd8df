"""`python -m policies test|lint PATH [--format junit]`: the policy CLI without the gateway."""

from __future__ import annotations

import sys

from policies.cli import main_lint, main_test


def main(argv: list[str]) -> int:
    commands = {"test": main_test, "lint": main_lint}
    if not argv or argv[0] not in commands:
        print("usage: python -m policies {test,lint} PATH [--format junit]")
        return 2
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
