"""What the client raises. Every error subclasses `ClientError`:

    ClientError
    ├── ProblemError                 the gateway answered an RFC 9457 problem (code, status, errors)
    │   ├── InvalidRequestError      400, 422: `errors` names every bad field
    │   ├── UnauthenticatedError     401: the key is missing, unknown or revoked
    │   ├── ForbiddenError           403: the key's role, namespaces or purposes do not allow it
    │   │   └── PolicyRefusedError   403 policy_refused: `receipt_id` is the refusal's receipt
    │   ├── NotFoundError            404: absent, or another tenant's
    │   ├── ConflictError            409: the state does not allow it
    │   ├── RateLimitedError         429: retried while attempts last (Retry-After honoured)
    │   └── UnavailableError         503: retried likewise; nothing was disclosed (fail closed)
    ├── UnexpectedResponseError      an answer that is not the contract: an error without a
    │                                problem body, or a success body that does not decode
    └── ConnectionFailedError        no answer at all (after the retries), from httpx's error

Switch on `code` (stable), never on `detail` (prose).
"""

from __future__ import annotations

from msgspec import UNSET

from gateway.responses.problems import FieldProblem, Problem

__all__ = [
    "ClientError",
    "ConflictError",
    "ConnectionFailedError",
    "ForbiddenError",
    "InvalidRequestError",
    "NotFoundError",
    "PolicyRefusedError",
    "ProblemError",
    "RateLimitedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnexpectedResponseError",
    "problem_error",
]


class ClientError(Exception):
    """The base of everything the client raises."""


class ProblemError(ClientError):
    """An RFC 9457 problem the gateway answered; `problem` is the whole body."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.status} {problem.code}: {problem.detail}")
        self.problem = problem

    @property
    def status(self) -> int:
        return self.problem.status

    @property
    def code(self) -> str:
        return self.problem.code

    @property
    def detail(self) -> str:
        return self.problem.detail

    @property
    def errors(self) -> tuple[FieldProblem, ...]:
        """Every bad field of a validation problem; empty for the others."""
        return () if self.problem.errors is UNSET else tuple(self.problem.errors)


class InvalidRequestError(ProblemError):
    pass


class UnauthenticatedError(ProblemError):
    pass


class ForbiddenError(ProblemError):
    pass


class PolicyRefusedError(ForbiddenError):
    @property
    def receipt_id(self) -> str | None:
        """The refusal's receipt (None when the gateway could not write it)."""
        receipt_id = self.problem.receipt_id
        return None if receipt_id is UNSET else receipt_id


class NotFoundError(ProblemError):
    pass


class ConflictError(ProblemError):
    pass


class RateLimitedError(ProblemError):
    pass


class UnavailableError(ProblemError):
    pass


class UnexpectedResponseError(ClientError):
    """An answer outside the contract; `status` and the start of the body say what came."""

    def __init__(self, status: int, reason: str, body: bytes) -> None:
        excerpt = body[:200].decode("utf-8", "replace")
        super().__init__(f"{status}: {reason}: {excerpt!r}")
        self.status = status
        self.reason = reason
        self.body = body


class ConnectionFailedError(ClientError):
    """No answer from the gateway; the httpx error is the `__cause__`."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: InvalidRequestError,
    401: UnauthenticatedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidRequestError,
    429: RateLimitedError,
    503: UnavailableError,
}


def problem_error(problem: Problem) -> ProblemError:
    """The typed error for a problem body."""
    if problem.code == "policy_refused":
        return PolicyRefusedError(problem)
    return _BY_STATUS.get(problem.status, ProblemError)(problem)
