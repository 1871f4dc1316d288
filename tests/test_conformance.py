"""streamspark against the Quix Streams API reference: every user-facing name, same path, same signature.

The reference is the pydoc-markdown dump ``shared/spec/seeds/quix-streams-api-reference.md`` (next to
the checkout; ``STREAMSPARK_API_REFERENCE`` points elsewhere). Each ``<a id="quixstreams.x.y.Name">``
anchor is followed by a ``##``/``###``/``####`` heading and, for classes and functions, a fenced
signature. ``quixstreams.X`` is looked up as ``streamspark.X`` (a module imports, a name resolves on
its module or class) and, where the reference gives a signature, ours must match it.

What is compared (the normalisation):

- Parameters: names, order, kinds (positional-only, positional-or-keyword, ``*args``,
  keyword-only, ``**kwargs``) and defaults. Annotations and return types are not compared.
- Ours may add keyword-only parameters with defaults that the reference does not have (e.g.
  ``Application(spark_master=...)``): no call written against the reference can tell. Any other
  extra, missing, renamed or reordered parameter is a difference.
- ``self`` is not written in the reference and ``cls`` is: both are dropped on both sides.
  ``Class.__init__`` is compared with the class's call signature (``inspect.signature(cls)``), so a
  dataclass or a hand-written ``__init__`` compare alike.
- Defaults, by the form of the reference's default:
  * a literal (number, string, bytes, bool, None, or a tuple/list/dict of them) compares by value;
    equal int and float match (``30`` and ``30.0``), other types must be the same (``True`` is not ``1``);
  * a call -- an environment read or ``timedelta(...)`` -- compares by the source text of our default,
    whitespace and quotes normalised; ``getenv("X")``, ``os.getenv("X")`` and ``os.environ.get("X")``
    are the same read;
  * a name or dotted name (``json.dumps``, ``str``, ``TopicType.REGULAR``, ``LOGGER_NAME``) is
    evaluated in the module that defines ours and must be that same object (else the source text
    decides);
  * a private name (``_default_error_cb``) is a callable no user can name: ours must default to a
    callable.
- ``@property`` in the reference: ours is a property, or a declared attribute (class annotation,
  dataclass or pydantic field); a method there is a mismatch, and so is a property where the
  reference has a method.
- Entries without a signature (enum members, type aliases) must exist.

Three tables keep the rest explicit and shrink as the project grows: ``EXCLUDED`` (names no user
imports, or that another component replaces for good), ``NOT_BUILT_YET`` (features still to come)
and ``PENDING_IN_OTHER_AREAS`` (known differences owned by other packages). The tables name
reference entries by prefix: an entry covers that name and everything below it.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import json
import os
import re
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, Optional

import pytest

_SIDE = Path(__file__).resolve().parents[2] / "shared" / "spec" / "seeds" / "quix-streams-api-reference.md"
REFERENCE = Path(os.environ.get("STREAMSPARK_API_REFERENCE", _SIDE))

#: Names no user imports, or replaced by another component for good -> the reason.
EXCLUDED: dict[str, str] = {
    "quixstreams.platforms": "the Quix Cloud vendor platform: not supported",
    "quixstreams.internal_consumer": "the buffered consumer loop: Spark's Kafka source replaces it",
    "quixstreams.internal_producer": "the checkpoint producer: the Spark sink path replaces it",
    "quixstreams.checkpointing.checkpoint": "checkpoints: Spark Structured Streaming's checkpoints replace them",
    "quixstreams.processing": "the per-message processing context: replaced by Spark",
    "quixstreams.state.rocksdb": "RocksDB stores: Spark's state store replaces them",
    "quixstreams.state.memory": "in-memory stores: Spark's state store replaces them",
    "quixstreams.state.recovery": "changelog recovery: Spark's checkpointed state replaces it",
    "quixstreams.state.manager": "the store manager: Spark's state store replaces it",
    "quixstreams.state.metadata": "store markers and key layout: Spark's state store replaces them",
    "quixstreams.state.serialization": "key encoding of the RocksDB stores: replaced by Spark",
    "quixstreams.state.base.store": "store base class: Spark's state store replaces it",
    "quixstreams.state.base.partition": "store partition base class: Spark's state store replaces it",
    "quixstreams.state.base.transaction": "store transactions: Spark's state store replaces them",
    "quixstreams.state.base.state.TransactionState": "State over a store transaction: replaced by Spark",
    "quixstreams.state.types.WindowedPartitionTransaction": "window store transactions: replaced by Spark",
    "quixstreams.state.types.PartitionRecoveryTransaction": "recovery transactions: replaced by Spark",
    "quixstreams.sinks.base.manager": "the application's sink registry: the engine drives sinks",
    "quixstreams.sources.base.manager.SourceManager.register": "takes the producer settings, not live "
    "clients: each source builds its own clients in its own process",
    "quixstreams.dataframe.joins.lookups.quix_configuration_service": "the Quix Configuration Service "
    "lookup: needs the Quix Cloud vendor platform, not supported",
    "quixstreams.dataframe.registry": "the application's dataframe registry: the Spark plan replaces it",
    "quixstreams.dataframe.windows.sliding.SlidingWindow.process_window": "per-message window step over "
    "a store transaction: windows run in Spark",
    "quixstreams.dataframe.windows.count_based.CountWindow.process_window": "per-message window step over "
    "a store transaction: windows run in Spark",
    "quixstreams.core.stream.functions": "the step classes behind Stream's composition: internal",
    "quixstreams.utils.stream_id": "an internal helper module (no public names)",
    "quixstreams.utils.settings": "pydantic-settings base class: internal",
    "quixstreams.utils.pickle": "an internal copier helper",
    "quixstreams.utils.dicts": "an internal helper",
    "quixstreams.utils.printing": "print_table's internal renderer",
    "quixstreams.models.messages": "an internal module (no public names)",
    "quixstreams.runtracker": "Application.run's internal stop-condition tracker: the engine's runner "
    "counts outputs and idle time",
    "quixstreams.kafka.configuration.ConnectionConfig.settings_customise_sources": "the pydantic-settings "
    "hook that stops environment reads: ConnectionConfig is a plain pydantic model and never reads them",
}

#: Features not built yet -> the reason (issue: sources/joins/schema formats). Remove as they land.
NOT_BUILT_YET: dict[str, str] = {}

#: Known differences in packages other components own -> what differs. Each entry must still
#: differ (a fixed one fails test_pending_entries_still_differ until it is removed here).
PENDING_IN_OTHER_AREAS: dict[str, str] = {}

#: Import paths users write that the reference's pages do not list: names a package re-exports
#: (its package page is empty), e.g. ``from quixstreams import State``, and the import of the
#: data lake sink page (seeds/quix-ts-datalake-sink.txt).
PACKAGE_EXPORTS: dict[str, tuple[str, ...]] = {
    "quixstreams": ("Application", "message_context", "MessageContext", "State"),
    "quixstreams.sinks.core.quix_ts_datalake_sink": ("QuixTSDataLakeSink",),
    "quixstreams.state": ("State",),
    "quixstreams.kafka": ("ConnectionConfig", "Producer"),
    "quixstreams.sinks": ("BaseSink", "BatchingSink", "SinkBatch", "SinkBackpressureError"),
    "quixstreams.sinks.community.file": ("FileSink", "InvalidFormatError", "JSONFormat", "ParquetFormat"),
    "quixstreams.sinks.community.file.formats": ("Format", "JSONFormat", "ParquetFormat", "resolve_format"),
    "quixstreams.sinks.community.file.destinations": (
        "Destination",
        "LocalDestination",
        "S3Destination",
        "AzureFileDestination",
    ),
}


# --- the reference ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Entry:
    """One anchor of the reference: a module, a class, a function/method, a property or an attribute."""

    name: str  # quixstreams.a.b.Class.member
    module: str  # quixstreams.a.b
    kind: str  # module | class | function | property | attribute
    node: ast.FunctionDef | None = None

    @property
    def path(self) -> tuple[str, ...]:
        """The attribute path below the module (empty for a module)."""
        rest = self.name[len(self.module) + 1 :]
        return tuple(rest.split(".")) if rest else ()

    @property
    def ours(self) -> str:
        return "streamspark" + self.name[len("quixstreams") :]


_ANCHOR = re.compile(r'<a id="(?P<id>[^"]+)"></a>\s*\n\s*(?P<level>#{2,4}) [^\n]*\n(?:\s*```python\n(?P<code>.*?)```)?', re.S)


def _parse_signature(code: str) -> ast.FunctionDef | ast.ClassDef:
    tree = ast.parse(code.strip() + ":\n    ...")
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef | ast.ClassDef), code
    return node


def _decorator_names(node: ast.FunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.add(ast.unparse(target).rsplit(".", 1)[-1])
    return names


@cache
def reference_entries() -> tuple[Entry, ...]:
    return parse_reference(REFERENCE.read_text(encoding="utf-8"))


def parse_reference(text: str) -> tuple[Entry, ...]:
    """The entries of a pydoc-markdown page, in page order."""
    anchors = list(_ANCHOR.finditer(text))
    modules = {m["id"] for m in anchors if m["level"] == "##"}
    entries = []
    for m in anchors:
        name = m["id"]
        if m["level"] == "##":
            entries.append(Entry(name, name, "module"))
            continue
        module = max((mod for mod in modules if name.startswith(mod + ".")), key=len)
        if m["code"] is None:
            entries.append(Entry(name, module, "attribute"))
            continue
        node = _parse_signature(m["code"])
        if isinstance(node, ast.ClassDef):
            entries.append(Entry(name, module, "class"))
        elif "property" in _decorator_names(node):
            entries.append(Entry(name, module, "property"))
        else:
            entries.append(Entry(name, module, "function", node))
    return tuple(entries)


def _covered(name: str, table: dict[str, Any]) -> str | None:
    """The table key covering ``name`` (the name itself or a parent), if any."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in table:
            return key
    return None


# --- signatures ---------------------------------------------------------------------------------

_P = inspect.Parameter


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: inspect._ParameterKind
    default: ast.expr | None  # the reference's default expression (None: no default)


def _reference_params(node: ast.FunctionDef) -> list[Param]:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [
        Param(arg.arg, _P.POSITIONAL_ONLY if i < len(a.posonlyargs) else _P.POSITIONAL_OR_KEYWORD, defaults[i])
        for i, arg in enumerate(positional)
    ]
    if a.vararg:
        params.append(Param(a.vararg.arg, _P.VAR_POSITIONAL, None))
    params += [Param(arg.arg, _P.KEYWORD_ONLY, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append(Param(a.kwarg.arg, _P.VAR_KEYWORD, None))
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    return params


def _our_callable(owner: Any, attr: str, is_init: bool) -> tuple[inspect.Signature, Callable[..., Any]]:
    """Our signature (``self``/``cls`` dropped) and the function whose source holds its defaults."""
    if is_init:
        return inspect.signature(owner), owner.__init__
    if inspect.isclass(owner):
        static = inspect.getattr_static(owner, attr)
        if isinstance(static, staticmethod):
            return inspect.signature(static.__func__), static.__func__
        if isinstance(static, classmethod):
            func = static.__func__
        elif inspect.isfunction(static):
            func = static
        else:
            raise _Differs(f"is {type(static).__name__}, not a method")
        sig = inspect.signature(func)
        return sig.replace(parameters=list(sig.parameters.values())[1:]), func
    func = getattr(owner, attr)
    return inspect.signature(func), func


class _Differs(Exception):
    """A difference to report for the entry at hand."""


@cache
def _source_defaults(func: Callable[..., Any]) -> dict[str, ast.expr]:
    """Parameter name -> the default's expression in our source (empty if the source is not at hand)."""
    target = inspect.unwrap(func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError):
        return {}
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if node is None:
        return {}
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    found = {arg.arg: d for arg, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults)}
    found.update({arg.arg: d for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return found


def _class_field_defaults(cls: type) -> dict[str, ast.expr]:
    """Field name -> default expression in a dataclass-like class body (``name: T = default``)."""
    found: dict[str, ast.expr] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in ("builtins", "typing", "abc"):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt in body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                found[stmt.target.id] = stmt.value
    return found


class _EnvReads(ast.NodeTransformer):
    """``os.getenv(x)`` and ``os.environ.get(x)`` -> ``getenv(x)``."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if ast.unparse(node.func) in ("os.getenv", "os.environ.get", "environ.get"):
            node.func = ast.Name("getenv", ast.Load())
        return node


def _text(expr: ast.expr) -> str:
    return ast.unparse(_EnvReads().visit(ast.parse(ast.unparse(expr), mode="eval")))


def _literal(expr: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(expr)
    except ValueError:
        return False, None


def _same_value(ref: Any, ours: Any) -> bool:
    numbers = (int, float)
    if isinstance(ref, numbers) and isinstance(ours, numbers) and not isinstance(ref, bool) and not isinstance(ours, bool):
        return bool(ref == ours)
    return type(ref) is type(ours) and ref == ours


def _eval_in(expr: ast.expr, module: types.ModuleType) -> Any:
    namespace = {**vars(builtins), **vars(module)}
    root = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and root.id not in namespace:
        namespace[root.id] = importlib.import_module(root.id)
    return eval(compile(ast.Expression(expr), "<reference default>", "eval"), namespace)  # noqa: S307


def _default_difference(ref: ast.expr, ours: Any, source: ast.expr | None, module: types.ModuleType) -> str | None:
    ref_text = _text(ref)
    our_text = _text(source) if source is not None else repr(ours)
    is_literal, value = _literal(ref)
    if is_literal:
        return None if _same_value(value, ours) else f"default {our_text}, the reference has {ref_text}"
    has_call = any(isinstance(n, ast.Call) for n in ast.walk(ref))
    if not has_call:
        dotted = ref_text.split(".")
        if dotted[-1].startswith("_") or dotted[0].startswith("_"):
            return None if callable(ours) else f"default {our_text}, the reference has a callable ({ref_text})"
        try:
            if _eval_in(ref, module) is ours:
                return None
        except Exception:  # noqa: BLE001 -- not a name there: the source text decides
            pass
    if source is not None and _text(source) == ref_text:
        return None
    return f"default {our_text}, the reference has {ref_text}"


def _signature_differences(entry: Entry, owner: Any, attr: str) -> list[str]:
    assert entry.node is not None
    is_init = attr == "__init__"
    sig, func = _our_callable(owner, attr, is_init)
    ref_params = _reference_params(entry.node)
    known = {p.name for p in ref_params}
    ours = [p for p in sig.parameters.values() if p.name in known or p.kind is not _P.KEYWORD_ONLY or p.default is _P.empty]
    ref_shape = [(p.name, p.kind) for p in ref_params]
    our_shape = [(p.name, p.kind) for p in ours]
    if ref_shape != our_shape:
        return [f"parameters ({_shape(our_shape)}), the reference has ({_shape(ref_shape)})"]
    sources = dict(_class_field_defaults(owner)) if is_init and inspect.isclass(owner) else {}
    sources.update(_source_defaults(func))
    module = importlib.import_module(inspect.unwrap(func).__module__)
    problems = []
    for ref_param, our_param in zip(ref_params, ours):
        ref_default, our_default = ref_param.default, our_param.default
        if ref_default is None and our_default is _P.empty:
            continue
        if ref_default is None:
            problems.append(f"{our_param.name}: has default {our_default!r}, the reference has none")
        elif our_default is _P.empty:
            problems.append(f"{our_param.name}: no default, the reference has {_text(ref_default)}")
        elif diff := _default_difference(ref_default, our_default, sources.get(our_param.name), module):
            problems.append(f"{our_param.name}: {diff}")
    return problems


def _shape(shape: list[tuple[str, inspect._ParameterKind]]) -> str:
    marks: dict[inspect._ParameterKind, str] = {
        _P.VAR_POSITIONAL: "*",
        _P.VAR_KEYWORD: "**",
        _P.KEYWORD_ONLY: "kw:",
        _P.POSITIONAL_ONLY: "pos:",
    }
    return ", ".join(marks.get(kind, "") + name for name, kind in shape)


# --- checking one entry -------------------------------------------------------------------------


def _declared_attribute(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}) or name in getattr(klass, "__slots__", ()):
            return True
    fields = getattr(cls, "model_fields", None) or getattr(cls, "__dataclass_fields__", None) or {}
    return name in fields


def differences(entry: Entry) -> list[str]:
    """What differs between the reference entry and streamspark (empty: it conforms)."""
    try:
        module = importlib.import_module("streamspark" + entry.module[len("quixstreams") :])
    except ImportError as exc:
        return [f"module does not import ({exc})"]
    if not entry.path:
        return []
    owner: Any = module
    for i, part in enumerate(entry.path[:-1]):
        if not hasattr(owner, part):
            return [f"missing: {'.'.join(entry.path[: i + 1])} is not in {owner.__name__}"]
        owner = getattr(owner, part)
    attr = entry.path[-1]
    label = getattr(owner, "__name__", str(owner))
    try:
        if entry.kind == "property":
            if not inspect.isclass(owner):
                return [f"{label} is not a class"]
            try:
                static = inspect.getattr_static(owner, attr)
            except AttributeError:
                return [] if _declared_attribute(owner, attr) else [f"missing: no {attr} on {label}"]
            if inspect.isfunction(static) or isinstance(static, classmethod | staticmethod):
                return ["is a method, the reference has a property"]
            return []
        if attr == "__init__":
            return _signature_differences(entry, owner, attr)
        if not hasattr(owner, attr) and not (inspect.isclass(owner) and _declared_attribute(owner, attr)):
            return [f"missing: no {attr} in {label}"]
        if entry.kind == "class":
            return [] if inspect.isclass(getattr(owner, attr)) else ["is not a class"]
        if entry.kind == "function":
            if inspect.isclass(owner) and isinstance(inspect.getattr_static(owner, attr), property):
                return ["is a property, the reference has a method"]
            return _signature_differences(entry, owner, attr)
        return []
    except _Differs as exc:
        return [str(exc)]


def checked_entries() -> Iterator[Entry]:
    """The reference entries to check: everything but EXCLUDED and NOT_BUILT_YET."""
    for entry in reference_entries():
        if _covered(entry.name, EXCLUDED) is None and _covered(entry.name, NOT_BUILT_YET) is None:
            yield entry


def _export_differences() -> tuple[int, list[str]]:
    count, problems = 0, []
    for package, names in PACKAGE_EXPORTS.items():
        ours = "streamspark" + package[len("quixstreams") :]
        module = importlib.import_module(ours)
        for name in names:
            count += 1
            if not hasattr(module, name):
                problems.append(f"{package}.{name}: missing: `from {ours} import {name}` fails")
    return count, problems


# --- tests --------------------------------------------------------------------------------------

#: Outside CI a checkout without the reference beside it skips these; in CI they fail without it.
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_file() and not os.environ.get("CI"),
    reason=f"the API reference is not at {REFERENCE} (set STREAMSPARK_API_REFERENCE)",
)


@needs_reference
def test_streamspark_conforms_to_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    """All differences at once, one per line: `quixstreams.name: what differs`."""
    problems: list[str] = []
    checked = pending = 0
    for entry in checked_entries():
        checked += 1
        if _covered(entry.name, PENDING_IN_OTHER_AREAS):
            pending += 1
            continue
        problems += [f"{entry.name}: {p}" for p in differences(entry)]
    exports, export_problems = _export_differences()
    problems += export_problems
    with capsys.disabled():
        print(
            f"\nconformance: {checked + exports} reference names checked ({checked} reference entries,"
            f" {exports} package exports), {pending} pending in other areas,"
            f" {len(reference_entries()) - checked} excluded or not built yet"
        )
    assert not problems, f"{len(problems)} names differ from the reference:\n" + "\n".join(problems)


@needs_reference
def test_pending_entries_still_differ() -> None:
    """A pending entry that now conforms (or names nothing) is to be removed from the table."""
    entries = list(checked_entries())
    stale = []
    for key in PENDING_IN_OTHER_AREAS:
        covered = [e for e in entries if _covered(e.name, {key: None})]
        if not covered or not any(differences(e) for e in covered):
            stale.append(key)
    assert not stale, "conform now (remove from PENDING_IN_OTHER_AREAS): " + ", ".join(stale)


@needs_reference
def test_tables_name_reference_entries() -> None:
    names = {e.name for e in reference_entries()}
    unknown = [
        key
        for table in (EXCLUDED, NOT_BUILT_YET, PENDING_IN_OTHER_AREAS)
        for key in table
        if not any(n == key or n.startswith(key + ".") for n in names)
    ]
    assert not unknown, "not in the reference: " + ", ".join(unknown)


@needs_reference
def test_the_parser_reads_every_kind_of_entry() -> None:
    kinds = {e.kind for e in reference_entries()}
    assert kinds == {"module", "class", "function", "property", "attribute"}
    init = next(e for e in reference_entries() if e.name == "quixstreams.sinks.core.csv.CSVSink.__init__")
    assert init.node is not None
    assert [(p.name, _text(p.default) if p.default else None) for p in _reference_params(init.node)] == [
        ("path", None),
        ("dialect", "'excel'"),
        ("key_serializer", "str"),
        ("value_serializer", "json.dumps"),
    ]


# --- the checker on a page and a module made up here ----------------------------------------------

_PROBE_PAGE = """
<a id="quixstreams.probe"></a>

## quixstreams.probe

<a id="quixstreams.probe.Probe"></a>

### Probe

```python
class Probe()
```

<a id="quixstreams.probe.Probe.__init__"></a>

#### Probe.\\_\\_init\\_\\_

```python
def __init__(path: str,
             retries: int = 5,
             region: Optional[str] = getenv("PROBE_REGION"),
             endpoint: Optional[str] = getenv("PROBE_ENDPOINT"),
             dumps: Callable = json.dumps,
             on_error: Callable = _default_on_error)
```

<a id="quixstreams.probe.Probe.size"></a>

#### Probe.size

```python
@property
def size() -> int
```

<a id="quixstreams.probe.Probe.reset"></a>

#### Probe.reset

```python
@property
def reset() -> int
```

<a id="quixstreams.probe.Probe.TIMEOUT"></a>

#### TIMEOUT

<a id="quixstreams.probe.swap"></a>

#### swap

```python
def swap(b: int, a: int) -> None
```

<a id="quixstreams.probe.Gone"></a>

### Gone

```python
class Gone(Exception)
```
"""


class _Probe:
    TIMEOUT = 1

    def __init__(
        self,
        path: str,
        retries: int = 3,
        region: Optional[str] = os.environ.get("PROBE_REGION"),
        endpoint: Optional[str] = None,
        dumps: Callable[[Any], str] = json.dumps,
        on_error: Callable[[Exception], None] = print,
        *,
        spark_only: int = 0,
    ) -> None:
        self.path = path

    @property
    def size(self) -> int:
        return 0

    def reset(self) -> None:
        pass


def _swap(a: int, b: int) -> None:
    pass


def test_the_checker_reports_each_kind_of_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    probe = types.ModuleType("streamspark.probe")
    probe.Probe = _Probe  # type: ignore[attr-defined]
    probe.swap = _swap  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "streamspark.probe", probe)
    found = {e.name.removeprefix("quixstreams.probe."): differences(e) for e in parse_reference(_PROBE_PAGE)}
    assert found == {
        "quixstreams.probe": [],
        "Probe": [],
        "Probe.__init__": [  # region's env read, dumps and on_error match
            "retries: default 3, the reference has 5",
            "endpoint: default None, the reference has getenv('PROBE_ENDPOINT')",
        ],
        "Probe.size": [],
        "Probe.reset": ["is a method, the reference has a property"],
        "Probe.TIMEOUT": [],
        "swap": ["parameters (a, b), the reference has (b, a)"],
        "Gone": ["missing: no Gone in streamspark.probe"],
    }
