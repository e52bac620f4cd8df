"""How many calls and data shapes one request passes: `POST /v1/context` and a session step.

What runs. The real app (`create_app`, its lifespan, middleware, routing, dependencies) serves
in process over an ASGI transport (httpx) on the embedded PostgreSQL, with `--memories`
memories of the synthetic corpus in one namespace. Two sessions get the same `--turns` turns.
After warm-up requests (two `/v1/context`, one step on the first session), one `/v1/context`
and one `POST /v1/sessions/{id}/context` on the second session are traced with
`sys.setprofile` (and `threading.setprofile` for the threads the app starts, the executor's),
from just before the client sends the request to just after the answer arrives. Calls made by
tasks that were running before the request started (the checkpointer, the compile worker) are
counted apart, as `background`; the receipt writer task a request wakes is part of the request.

Definitions (one file, run as it is against the gateway before and after the refactoring; the
module names of the older layout are mapped by `MOVED`):

- **Layers** measured: `gateway.usecases`, `gateway.http`, `gateway.shell`, `gateway.domain`,
  `gateway.responses`: the orchestration. A function belongs to the layer of the module that
  defines it, and only code from the project's own files counts (code a decorator generates, such
  as a dataclass's `__init__`, is not a function of the project).
- **Calls**: `distinct` is the number of distinct functions of those layers (module + qualified
  name: methods, nested functions and lambdas included; comprehensions and generator expressions
  are part of the function they are written in) entered while the request is handled; `total`
  counts every entry (a coroutine or generator resumed is not entered again). Calls of functions
  of `gateway.core`, `gateway.store`, `policies`, `receipts` and the other project packages
  (`gateway.embedding`, …) are one count each: their inner loops are not hops.
- **Shapes**: the distinct kinds of value that cross those calls. A value crosses when it is an
  argument (`self` included) or the return or yielded value of a call whose caller or callee is a
  function of the layers, or is bound to a local variable of such a function when it returns or
  suspends. Lists, tuples and sets are looked into, one level. A value is a shape if its class is
  defined in a `gateway.*` module (dataclasses, msgspec Structs, NamedTuples, enums, plain
  classes: services such as `Discloser` are shapes too; core included), or if it is a plain
  non-empty `dict`, which is one shape per key set (`dict{bundle, receipt_id, ...}`). A dict
  keyed by data (ids, turn numbers: any key that is not an identifier, or holds a run of 8
  digits) is a map, not a record: all such are one shape, `dict[map]`. ASGI scopes and messages
  are the server's, not shapes; `**kwargs` dicts are looked into, not counted. Each shape is
  marked `request` when an instance seen was made during the request (it was not among the
  objects `gc` tracked when the request started), else `before` (services, settings). Classes of
  `policies` and `receipts` are listed apart, not counted.

- **Hops**: the distinct functions of those layers entered from a function of another module
  (or from outside the project's code: the server, the event loop, a callback the core calls):
  a call from one module into another, which a reader follows into another file. A module's
  own helpers are not hops.
- **Shapes across modules**: the shapes above an instance of which was made during the request
  and that crossed in functions of more than one module: the values one module hands another
  along the request, not a module's own parts of them.

Output: for each request, the functions of the layers in the order first entered (indented by how
many functions of the layers are above it on the stack, with the function that called it) and
the shapes (kind, made when, the functions where they crossed); JSON in `bench/out/hops-*.json`.
The summary also gives the cross-module calls between project modules and the layer reversals
(a call from `gateway.core`, `gateway.store`, `policies` or `receipts` up into `gateway.usecases`
or `gateway.http`, or from the use cases into the edge), which is what this benchmark measured
before it counted calls and shapes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import enum
import gc
import importlib
import inspect
import logging
import re
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import httpx
import msgspec

from bench.corpus import load_corpus, loaded_database
from bench.harness import embedded_postgres, machine, markdown_table, write_result
from gateway.http.app import create_app

__all__ = ["main"]

NAMESPACE = "hops"
LAYERS = (
    "gateway.usecases",
    "gateway.http",
    "gateway.shell",
    "gateway.domain",
    "gateway.responses",
)
APART = ("gateway.core", "gateway.store", "policies", "receipts")
PROJECT = ("gateway", "policies", "receipts")
# The layout before 2026-12-04 had these modules at the top of `gateway`: the layer each moved to.
MOVED = {
    "gateway.cli": "gateway.shell",
    "gateway.clock": "gateway.shell",
    "gateway.collector": "gateway.shell",
    "gateway.demo": "gateway.shell",
    "gateway.logs": "gateway.shell",
    "gateway.runtime": "gateway.shell",
    "gateway.session_cli": "gateway.shell",
    "gateway.settings": "gateway.shell",
    "gateway.signing": "gateway.shell",
    "gateway.sweep": "gateway.shell",
    "gateway.errors": "gateway.domain",
    "gateway.instant_range": "gateway.domain",
    "gateway.memory": "gateway.domain",
    "gateway.principal": "gateway.domain",
    "gateway.receipt_filter": "gateway.domain",
    "gateway.request_record": "gateway.usecases",
    "gateway.mcp_server": "gateway.client",
}
# The modules this benchmark imports from the gateway, newest layout first.
SETTINGS_MODULES = ("gateway.shell.settings", "gateway.settings")
# Layer ranks for reversals (a call from a lower rank into a higher one).
_RANKS = {"gateway.http": 3, "gateway.usecases": 2, **dict.fromkeys(APART, 1)}
_INLINE = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_DATA_KEY = re.compile(r"\d{8}")
_LOOK_INTO = 64  # items of a list, tuple or set looked at


def layer_of(module: str) -> str | None:
    """The layer (a `LAYERS` or `APART` prefix), `other` for the rest of the project, or None."""
    module = MOVED.get(module, module)
    for prefix in LAYERS + APART:
        if module == prefix or module.startswith(prefix + "."):
            return prefix
    return "other" if module.split(".", 1)[0] in PROJECT else None


@dataclass(frozen=True, slots=True)
class _Code:
    """What the tracer knows of a code object."""

    function: str  # module.qualname
    module: str
    layer: str | None  # None: not the project's own code
    inline: bool  # a comprehension or generator expression
    resumable: bool
    arguments: tuple[str, ...]
    kwargs: str | None


@dataclass
class _Function:
    layer: str
    order: int
    depth: int
    caller: str
    calls: int = 0
    across: bool = False  # entered from another module (or from outside the project's code)


@dataclass
class _Shape:
    kind: str
    module: str
    order: int
    seen: dict[str, set[str]] = field(default_factory=dict)  # function -> how (arg, return, local)
    made: bool = False  # an instance was made during the request
    modules: set[str] = field(default_factory=set)  # the modules of the functions it crossed in


@dataclass
class Recording:
    """One traced request."""

    background: frozenset[asyncio.Task[Any]]
    before: frozenset[int]  # ids of the objects gc tracked when the request started
    functions: dict[str, _Function] = field(default_factory=dict)
    shapes: dict[str, _Shape] = field(default_factory=dict)
    apart: Counter[str] = field(default_factory=Counter)
    background_calls: int = 0
    module_hops: Counter[tuple[str, str]] = field(default_factory=Counter)
    entered: set[FrameType] = field(default_factory=set)


class Tracer:
    """The profile function: inert until `recording` is set."""

    def __init__(self) -> None:
        self.recording: Recording | None = None
        self._codes: dict[CodeType, _Code] = {}
        self._roots = tuple(
            str(Path(importlib.import_module(name).__file__ or "").parent) + "/" for name in PROJECT
        )

    def _code(self, code: CodeType, frame: FrameType) -> _Code:
        known = self._codes.get(code)
        if known is None:
            module = str(frame.f_globals.get("__name__", ""))
            own = code.co_filename.startswith(self._roots)
            count = code.co_argcount + code.co_kwonlyargcount
            varargs = bool(code.co_flags & inspect.CO_VARARGS)
            names = code.co_varnames[: count + varargs]
            kwargs = (
                code.co_varnames[count + varargs]
                if code.co_flags & inspect.CO_VARKEYWORDS
                else None
            )
            known = _Code(
                function=f"{module}.{code.co_qualname}",
                module=module,
                layer=layer_of(module) if own else None,
                inline=code.co_name in _INLINE,
                resumable=bool(code.co_flags & _RESUMABLE),
                arguments=names,
                kwargs=kwargs,
            )
            self._codes[code] = known
        return known

    def _caller(self, frame: FrameType) -> tuple[_Code | None, FrameType | None]:
        """The nearest frame above that is not a comprehension, and what it runs."""
        back = frame.f_back
        while back is not None:
            known = self._code(back.f_code, back)
            if not known.inline:
                return known, back
            back = back.f_back
        return None, None

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        recording = self.recording
        if recording is None or event not in ("call", "return"):
            return
        if _task() in recording.background:
            recording.background_calls += event == "call"
            return
        code = self._code(frame.f_code, frame)
        if code.inline:
            return  # part of the function it is written in, which sees what it makes
        caller, caller_frame = self._caller(frame)
        where = _where(code, caller)
        if event == "return":
            self._returned(recording, code, frame, arg, where)
        else:
            self._called(recording, code, frame, caller, caller_frame, where)

    def _called(
        self,
        recording: Recording,
        code: _Code,
        frame: FrameType,
        caller: _Code | None,
        caller_frame: FrameType | None,
        where: tuple[str, str] | None,
    ) -> None:
        if code.resumable:
            if frame in recording.entered:
                return  # resumed, not entered
            recording.entered.add(frame)
        if code.layer is not None:
            self._entered(recording, code, caller, caller_frame)
        if where is not None:
            for name in code.arguments:
                self._see(recording, frame.f_locals.get(name), where, "arg")
            extra = frame.f_locals.get(code.kwargs) if code.kwargs is not None else None
            for value in extra.values() if isinstance(extra, dict) else ():
                self._see(recording, value, where, "arg")

    def _returned(
        self,
        recording: Recording,
        code: _Code,
        frame: FrameType,
        value: Any,
        where: tuple[str, str] | None,
    ) -> None:
        """A return, or a yield (a coroutine's to the event loop holds no shape)."""
        if where is not None:
            self._see(recording, value, where, "return")
        if code.layer in LAYERS:
            for local in list(frame.f_locals.values()):
                self._see(recording, local, (code.function, code.module), "local")

    def _entered(
        self,
        recording: Recording,
        code: _Code,
        caller: _Code | None,
        caller_frame: FrameType | None,
    ) -> None:
        if caller is not None and caller.layer is not None and caller.module != code.module:
            recording.module_hops[caller.module, code.module] += 1
        if code.layer not in LAYERS:
            recording.apart[code.layer or "?"] += 1
            return
        function = recording.functions.get(code.function)
        if function is None:
            function = recording.functions[code.function] = _Function(
                layer=code.layer or "?",
                order=len(recording.functions),
                depth=self._depth(caller_frame),
                caller=self._name_of_caller(caller, caller_frame),
            )
        function.calls += 1
        function.across |= caller is None or caller.module != code.module

    def _depth(self, frame: FrameType | None) -> int:
        depth = 0
        while frame is not None:
            known = self._code(frame.f_code, frame)
            depth += known.layer in LAYERS and not known.inline
            frame = frame.f_back
        return depth

    def _name_of_caller(self, caller: _Code | None, frame: FrameType | None) -> str:
        if caller is None or frame is None:
            return "(no caller: a worker thread)"
        if caller.layer is not None:
            return caller.function
        if layer_of(caller.module) is not None:  # code a decorator generated
            return f"({caller.function}, generated)"
        return f"({caller.module.split('.', 1)[0]})"

    def _see(self, recording: Recording, value: Any, where: tuple[str, str], how: str) -> None:
        function, in_module = where
        for name, kind, module, instance in _shapes(value):
            shape = recording.shapes.get(name)
            if shape is None:
                shape = recording.shapes[name] = _Shape(kind, module, len(recording.shapes))
            shape.seen.setdefault(function, set()).add(how)
            shape.modules.add(in_module)
            shape.made = shape.made or id(instance) not in recording.before


def _where(callee: _Code, caller: _Code | None) -> tuple[str, str] | None:
    """Where a value crossing a call is seen: the function of the layers on either side, and
    its module."""
    if callee.layer in LAYERS:
        return callee.function, callee.module
    if caller is not None and caller.layer in LAYERS:
        return caller.function, caller.module
    return None


def _task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # a thread without a loop
        return None


def _shapes(value: Any, nested: bool = False) -> Iterator[tuple[str, str, str, object]]:
    """(name, kind, module, the instance) of the shapes a value is (see the module docstring)."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    if module.split(".", 1)[0] in PROJECT:
        yield f"{module}.{kind.__qualname__}", _kind(kind), module, value
    elif kind is dict:
        if value and not _protocol(value):
            yield _dict_shape(value), "dict", "builtins", value
    elif kind in (list, tuple, set, frozenset) and not nested:
        for index, item in enumerate(value):
            if index >= _LOOK_INTO:
                break
            yield from _shapes(item, nested=True)


def _dict_shape(value: dict[Any, Any]) -> str:
    keys = list(value)
    if all(isinstance(k, str) and k.isidentifier() and not _DATA_KEY.search(k) for k in keys):
        return "dict{" + ", ".join(sorted(keys)) + "}"
    return "dict[map]"


def _protocol(value: dict[Any, Any]) -> bool:
    """An ASGI scope or message: the server's, not a shape of the project."""
    said = value.get("type")
    return "asgi" in value or (
        isinstance(said, str) and said.startswith(("http.", "websocket.", "lifespan."))
    )


def _kind(cls: type) -> str:
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if issubclass(cls, msgspec.Struct):
        return "Struct"
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "NamedTuple"
    if issubclass(cls, enum.Enum):
        return "enum"
    if issubclass(cls, BaseException):
        return "exception"
    return "class"


def _first_module(names: tuple[str, ...]) -> Any:
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(f"none of {', '.join(names)}")


async def _trace(
    url: str, key: str, task: str, sentences: tuple[str, ...], turns: int
) -> dict[str, Recording]:
    settings_type = _first_module(SETTINGS_MODULES).Settings
    tracer = Tracer()
    threading.setprofile(tracer)  # threads started from here on (the default executor's)
    try:
        with tempfile.TemporaryDirectory(prefix="ctxgw-bench-hops-") as data_dir:
            settings = settings_type(
                database_url=url,
                data_dir=Path(data_dir),
                migrate_on_start=False,
                log_level="WARNING",
                checkpoint_interval_seconds=3600.0,
            )
            app = create_app(settings)
            async with (
                app.lifespan(),
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app),  # type: ignore[arg-type]
                    base_url="http://hops.test",
                    headers={"Authorization": f"Bearer {key}"},
                ) as client,
            ):
                context = {"task": task, "namespaces": [NAMESPACE], "budget_tokens": 4000}
                warm, traced = [await _session(client, task, sentences, turns) for _ in range(2)]
                for _ in range(2):
                    _ok(await client.post("/v1/context", json=context))
                _ok(await client.post(f"/v1/sessions/{warm}/context", json={}))
                return {
                    "context": await _traced(tracer, client, "/v1/context", context),
                    "session_step": await _traced(
                        tracer, client, f"/v1/sessions/{traced}/context", {}
                    ),
                }
    finally:
        threading.setprofile(None)


async def _session(
    client: httpx.AsyncClient, task: str, sentences: tuple[str, ...], turns: int
) -> str:
    created = await client.post("/v1/sessions", json={"namespace": NAMESPACE, "task": task})
    _ok(created)
    session_id = str(created.json()["session_id"])
    said = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": sentences[n % len(sentences)]}
        for n in range(turns)
    ]
    _ok(await client.post(f"/v1/sessions/{session_id}/turns", json={"turns": said}))
    return session_id


async def _traced(
    tracer: Tracer, client: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> Recording:
    await asyncio.sleep(0.5)  # the warm-up's receipt writer and anything it woke are done
    existing = gc.get_objects()  # held until the end: no id of theirs is reused meanwhile
    recording = Recording(
        background=frozenset(asyncio.all_tasks()) - {asyncio.current_task()},
        before=frozenset(map(id, existing)),
    )
    tracer.recording = recording
    sys.setprofile(tracer)
    try:
        response = await client.post(path, json=body)
    finally:
        sys.setprofile(None)
        tracer.recording = None
    _ok(response)
    recording.entered.clear()
    del existing
    return recording


def _ok(response: httpx.Response) -> None:
    if response.status_code >= 300:
        raise RuntimeError(f"{response.request.url.path}: {response.status_code} {response.text}")


def _summary(recording: Recording) -> dict[str, Any]:
    gateway_shapes = {
        n: s
        for n, s in recording.shapes.items()
        if s.kind == "dict" or s.module.startswith("gateway.")
    }
    apart = sorted(n for n in recording.shapes if n not in gateway_shapes)
    reversals = {
        pair: count
        for pair, count in recording.module_hops.items()
        if _rank(pair[1]) > _rank(pair[0]) > 0
    }
    crossing = [n for n, s in gateway_shapes.items() if s.made and len(s.modules) > 1]
    return {
        "calls_distinct": len(recording.functions),
        "hops": sum(f.across for f in recording.functions.values()),
        "shapes_across": len(crossing),
        "shapes_across_names": crossing,
        "calls_total": sum(f.calls for f in recording.functions.values()),
        "shapes": len(gateway_shapes),
        "shapes_classes": sum(s.kind != "dict" for s in gateway_shapes.values()),
        "shapes_dicts": sum(s.kind == "dict" for s in gateway_shapes.values()),
        "shapes_made": sum(s.made for s in gateway_shapes.values()),
        "calls_by_layer": dict(Counter(f.layer for f in recording.functions.values())),
        "calls_apart": dict(sorted(recording.apart.items())),
        "calls_background": recording.background_calls,
        "policies_receipts_classes": apart,
        "cross_module_calls": sum(recording.module_hops.values()),
        "module_pairs": len(recording.module_hops),
        "reversals": {f"{a} -> {b}": n for (a, b), n in sorted(reversals.items())},
        "functions": [
            {"function": name, **dataclasses.asdict(f)}
            for name, f in sorted(recording.functions.items(), key=lambda i: i[1].order)
        ],
        "shapes_seen": [
            {
                "shape": name,
                "kind": s.kind,
                "module": s.module,
                "made": s.made,
                "seen": {where: sorted(how) for where, how in sorted(s.seen.items())},
            }
            for name, s in sorted(gateway_shapes.items(), key=lambda i: i[1].order)
        ],
    }


_SUMMARY = (
    "request",
    "calls distinct",
    "calls total",
    "shapes",
    "dict key sets",
    "made in the request",
    "hops (into another module)",
    "shapes across modules",
    *(f"{layer} calls" for layer in (*APART, "other")),
)


def _summary_row(name: str, summary: dict[str, Any]) -> list[object]:
    return [
        name,
        summary["calls_distinct"],
        summary["calls_total"],
        summary["shapes"],
        summary["shapes_dicts"],
        summary["shapes_made"],
        summary["hops"],
        summary["shapes_across"],
        *(summary["calls_apart"].get(layer, 0) for layer in (*APART, "other")),
    ]


def _rank(module: str) -> int:
    return _RANKS.get(layer_of(module) or "", 0)


def _short(function: str) -> str:
    return function.removeprefix("gateway.")


def _print(name: str, summary: dict[str, Any]) -> None:
    print(f"\n## {name}\n")
    rows = [
        [
            f["order"] + 1,
            "· " * f["depth"] + _short(f["function"]),
            f["calls"],
            _short(f["caller"]),
        ]
        for f in summary["functions"]
    ]
    print(markdown_table(["#", "function (indent: depth in the layers)", "calls", "caller"], rows))
    print()
    rows = []
    for index, shape in enumerate(summary["shapes_seen"], 1):
        seen = sorted(shape["seen"])
        where = ", ".join(_short(w) for w in seen[:3]) + (
            f" (+{len(seen) - 3})" if seen[3:] else ""
        )
        made = "request" if shape["made"] else "before"
        rows.append([index, _short(shape["shape"]), shape["kind"], made, len(seen), where])
    print(markdown_table(["#", "shape", "kind", "made", "functions", "crosses in"], rows))
    apart = ", ".join(f"{k} {v}" for k, v in summary["calls_apart"].items())
    print(
        f"\ncalls: {summary['calls_distinct']} distinct, {summary['calls_total']} in all "
        f"({', '.join(f'{k} {v}' for k, v in sorted(summary['calls_by_layer'].items()))}); "
        f"shapes: {summary['shapes']} ({summary['shapes_classes']} classes, "
        f"{summary['shapes_dicts']} dict key sets; {summary['shapes_made']} made in the request)\n"
        f"apart: {apart or 'none'}; background tasks {summary['calls_background']}; "
        f"policies/receipts classes: {', '.join(summary['policies_receipts_classes']) or 'none'}\n"
        f"cross-module calls {summary['cross_module_calls']} over {summary['module_pairs']} "
        f"module pairs; reversals: {summary['reversals'] or 'none'}\n"
        f"hops (functions entered from another module): {summary['hops']}; shapes made in the "
        f"request that cross from one module into another: {summary['shapes_across']} "
        f"({', '.join(_short(n) for n in summary['shapes_across_names'])})"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hops", description=__doc__)
    parser.add_argument("--memories", type=int, default=300)
    parser.add_argument("--turns", type=int, default=8, help="turns in the traced session")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    # The request log and httpx log at INFO: kept (the path is the same), but not printed.
    root = logging.getLogger()
    handlers, root.handlers = root.handlers, [logging.NullHandler()]
    with contextlib.ExitStack() as stack:
        stack.callback(setattr, root, "handlers", handlers)
        pg = stack.enter_context(embedded_postgres())
        db = loaded_database(pg, "bench_hops", corpus, namespace=NAMESPACE, memories=args.memories)
        recordings = asyncio.run(
            _trace(db.app_url, db.key, corpus.queries[0], corpus.sentences, args.turns)
        )
        result: dict[str, Any] = {
            "benchmark": "hops",
            "machine": machine(pg),
            "memories": args.memories,
            "turns": args.turns,
            "layers": LAYERS,
            "apart": APART,
        }
    for name, recording in recordings.items():
        result[name] = _summary(recording)
        _print(name, result[name])
    print("\n## summary\n")
    print(markdown_table(_SUMMARY, [_summary_row(name, result[name]) for name in recordings]))
    print(f"\n{write_result('hops', result)}")
    return 0
