"""``python -m receipts verify EXPORT.jsonl --keyring KEYRING.json [options]``
``python -m receipts public-keyring FULL.json [-o PUBLIC.json] [--force]``

``verify`` verifies an export offline: no server, no database. Every receipt's Ed25519 signature
is required, and its HMAC signature too when the keyring holds HMAC secrets; no option waives
either. Exit status: 0 valid, 1 invalid (the error code is printed), 2 usage error (bad
arguments, unreadable file, unusable keyring).

``public-keyring`` derives the keyring to hand to auditors from the gateway's full one: every
Ed25519 public key, no HMAC secret (`receipts.keyfiles.public_keyring`). It writes to standard
output, or to a new file (mode 0644; ``--force`` replaces one). Exit status: 0 written, 2 usage
error (unreadable or unusable keyring, file exists).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from receipts.checkpoint import Checkpoint
from receipts.dsse import b64encode
from receipts.errors import KeyringError, MalformedError, VerificationError
from receipts.extract import ExtractFilter, verify_extract
from receipts.keyfiles import public_keyring, write_public_file
from receipts.keyring import Keyring
from receipts.verify import VerifyReport, verify_export

__all__ = ["main"]

EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = _parser()
    args = parser.parse_args(argv)  # exits 2 on bad usage
    if args.command == "public-keyring":
        return _public_keyring(args, out)
    return _verify(args, out)


def _public_keyring(args: argparse.Namespace, out: TextIO) -> int:
    try:
        keyring = Keyring.load(args.keyring)
        data = public_keyring(keyring)
        if args.output is None:
            out.write(data.decode("utf-8"))
            return EXIT_VALID
        write_public_file(args.output, data, overwrite=args.force)
    except FileExistsError:
        print(f"receipts: {args.output} exists (pass --force to replace it)", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, KeyringError) as exc:
        print(f"receipts: {exc}", file=sys.stderr)
        return EXIT_USAGE
    ids = ", ".join(f"{key.key_id} ({key.status})" for key in keyring.ed25519)
    print(
        f"wrote {args.output}: Ed25519 public keys {ids}; no HMAC secret, no private key",
        file=out,
    )
    return EXIT_VALID


def _verify(args: argparse.Namespace, out: TextIO) -> int:
    try:
        keyring = Keyring.load(args.keyring)
        checkpoint = None if args.checkpoint is None else args.checkpoint.read_text("utf-8")
        bundle = None if args.bundle is None else args.bundle.read_bytes()
        export = args.export.open("rb")
    except (OSError, UnicodeDecodeError, KeyringError) as exc:
        print(f"receipts: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with export:
            if args.full is not None:
                where = ExtractFilter(
                    args.agent_id, args.kind, args.memory_id, args.since, args.until
                )
                with args.full.open("rb") as full:
                    report = verify_extract(
                        list(_lines(export)), list(_lines(full)), keyring, where
                    )
            else:
                report = verify_export(
                    _lines(export),
                    keyring,
                    checkpoint_text=checkpoint,
                    bundle=bundle,
                    receipt_id=args.receipt,
                    tenant_id=args.tenant,
                    origin=args.origin,
                    allow_unanchored=args.allow_unanchored,
                )
    except VerificationError as exc:
        print(f"INVALID {exc}", file=out)
        return EXIT_INVALID
    except ValueError as exc:
        print(f"receipts: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in describe(report):
        print(line, file=out)
    return EXIT_VALID


def describe(report: VerifyReport) -> list[str]:
    """The human report of a successful verification."""
    if report.receipts == 0:
        lines = ["VALID  export holds no receipts"]
    else:
        lines = [
            f"VALID  tenant {report.tenant_id}: {_plural(report.receipts, 'receipt')}, "
            f"seq {report.first_seq}..{report.last_seq}",
            "  signatures  " + _describe_signatures(report),
            "  chain       " + _describe_chain(report),
        ]
    lines.append("  checkpoint  " + _describe_checkpoint(report, report.checkpoint))
    trusted = report.trusted_checkpoint
    if trusted is not None and trusted != report.checkpoint:
        lines.append(
            f"  trusted     checkpoint of size {trusted.size} is consistent with the export"
        )
    if report.receipt is not None:
        check = report.receipt
        bundle = "bundle sha256 matches" if check.bundle_checked else "bundle not checked"
        lines.append(f"  receipt     {check.receipt_id} at seq {check.seq}: {bundle}")
    return lines


def _describe_signatures(report: VerifyReport) -> str:
    """Which signatures were required and checked on every receipt, and which were not."""
    if report.hmac_checked:
        return f"ok: Ed25519 and HMAC on every receipt ({', '.join(report.keyids)})"
    line = f"ok: Ed25519 on every receipt ({', '.join(report.keyids)}); HMAC not checked"
    if report.unchecked_keyids:
        line += f" ({', '.join(report.unchecked_keyids)})"
    return line + ": the keyring holds no HMAC secret (a public keyring)"


def _describe_chain(report: VerifyReport) -> str:
    """What the chain check covered: the links between consecutive seqs, and for a filtered
    export the gaps, which only inclusion proofs stand for (the chain cannot cross them)."""
    start = (
        "seq 1 links to genesis"
        if report.first_seq == 1
        else f"starts at seq {report.first_seq} (earlier receipts not exported)"
    )
    if report.gaps == 0:
        if report.receipts == 1:
            return f"a single receipt: {start}"
        return (
            f"gapless: seq {report.first_seq}..{report.last_seq}, every prev links to the seq "
            f"before, " + ("back to genesis" if report.first_seq == 1 else start)
        )
    return (
        f"{_plural(report.links, 'prev link')} between consecutive seqs checked; "
        f"{_plural(report.gaps, 'gap')} ({_plural(report.unexported, 'receipt')} not exported) "
        f"covered by inclusion proofs, not by the chain; {start}"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _describe_checkpoint(report: VerifyReport, checkpoint: Checkpoint | None) -> str:
    if checkpoint is None:
        return "none given: inclusion in the signed log NOT verified"
    head = f"{checkpoint.origin} size {checkpoint.size} root {b64encode(checkpoint.root)}: "
    if report.complete:
        head += "the export is that log, root recomputed"
    else:
        head += f"{report.proven} exported receipts proven by inclusion proofs (an extract)"
    newer = report.receipts - report.proven
    if newer > 0:
        head += f"; {newer} newer receipts not yet covered"
    return head


def _lines(export: Iterator[bytes]) -> Iterator[str]:
    for raw in export:
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedError("export line is not UTF-8") from exc


def _instant(text: str) -> datetime:
    instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if instant.tzinfo is None:
        raise argparse.ArgumentTypeError("give an instant with its offset (…Z or …+00:00)")
    return instant


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m receipts", description="Verify ctxgw receipts offline."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="verify an export (JSONL)")
    verify.add_argument("export", type=Path, metavar="EXPORT.jsonl")
    verify.add_argument("--keyring", type=Path, required=True, metavar="KEYRING.json")
    verify.add_argument(
        "--checkpoint", type=Path, metavar="FILE", help="a checkpoint you trust (signed note)"
    )
    verify.add_argument("--bundle", type=Path, metavar="FILE", help="the delivered bundle")
    verify.add_argument("--receipt", metavar="ID", help="the receipt the bundle belongs to")
    verify.add_argument("--tenant", metavar="ID", help="expected tenant (default: the export's)")
    verify.add_argument("--origin", metavar="ORIGIN", help="checkpoint origin (ctxgw/<tenant>)")
    verify.add_argument(
        "--allow-unanchored",
        action="store_true",
        help="accept an export without its end line (no checkpoint: nothing anchors it); "
        "signatures are required all the same",
    )
    verify.add_argument(
        "--full",
        type=Path,
        metavar="FULL.jsonl",
        help="the whole log: check that EXPORT (filtered) holds every receipt its filter selects",
    )
    verify.add_argument("--agent-id", help="with --full: the extract's agent filter")
    verify.add_argument("--kind", help="with --full: the extract's kind filter")
    verify.add_argument("--memory-id", help="with --full: the extract's memory filter")
    verify.add_argument("--since", type=_instant, help="with --full: issued at or after")
    verify.add_argument("--until", type=_instant, help="with --full: issued before")
    public = commands.add_parser(
        "public-keyring",
        help="derive the keyring to hand to auditors: Ed25519 public keys, no HMAC secret",
    )
    public.add_argument("keyring", type=Path, metavar="FULL.json", help="the gateway's keyring")
    public.add_argument(
        "-o", "--output", type=Path, metavar="PUBLIC.json", help="write here (default: stdout)"
    )
    public.add_argument("--force", action="store_true", help="replace an existing output file")
    return parser


if __name__ == "__main__":
    sys.exit(main())
