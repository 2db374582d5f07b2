"""Where a variable came from: what one execution read and set (issue 21, DESIGN §11).

Pure values and functions, no I/O: :func:`analyze` reads a cell's code with
:mod:`ast` — the names it reads before setting them, the names it binds, the names
it changes in place (``df.drop(..., inplace=True)``, ``lst.append(x)``,
``d["k"] = v``) and, **by heuristics**, whether it touches files, the network, a
subprocess or randomness. The recorder adds what the kernel saw (the namespace diff)
and :func:`fingerprint` of small values; :class:`ExecutionRecord` is the archived row
and :func:`plan_rebuild` the smallest ordered slice that makes a set of names again.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.effects import CONSENT_EFFECTS, RANDOM_CALLS, SideEffect, code_effects

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "CONSENT_EFFECTS",
    "CodeFacts",
    "ExecutionRecord",
    "ExecutionSource",
    "Provenance",
    "RebuildPlan",
    "SideEffect",
    "analyze",
    "execution_record",
    "fingerprint",
    "plan_rebuild",
    "trace",
]


ExecutionSource = Literal["cell", "run_python", "run_cell", "rebuild"]
"""What ran the code: the person's cell, the agent's tools, or a rebuild's replay."""

# Methods that change their object in place (lists, dicts, sets, frames, estimators).
MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "sort",
        "reverse",
        "add",
        "discard",
        "setdefault",
        "popitem",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
        "appendleft",
        "extendleft",
        "popleft",
        "rotate",
        "fit",
        "partial_fit",
        "set_index_inplace",
        "resize",
        "fill",
        "shuffle",
    }
)
# Methods that draw from a generator object and so advance its state.
_DRAW_METHODS = RANDOM_CALLS | frozenset(
    {
        "standard_normal",
        "exponential",
        "poisson",
        "binomial",
        "beta",
        "gamma",
        "lognormal",
        "multivariate_normal",
        "bytes",
        "gauss",
        "randrange",
        "getrandbits",
        "choices",
        "triangular",
    }
)
_GENERATOR_TYPES = frozenset({"Generator", "RandomState", "Random", "SystemRandom"})
_IGNORED_READS = frozenset(dir(builtins)) | {"get_ipython", "In", "Out", "_", "__", "___"}

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FINGERPRINT_CELLS = 100_000  # arrays and frames up to this many cells are hashed whole
_FINGERPRINT_TEXT = 10_000  # strings, bytes and small containers up to this repr length


@dataclass(frozen=True)
class CodeFacts:
    """What :func:`analyze` found in one execution's code (static, so a guess where noted)."""

    reads: tuple[str, ...] = ()  # names used before the code sets them
    sets: tuple[str, ...] = ()  # names the code binds (assign, def, import, for, with)
    mutates: tuple[str, ...] = ()  # names changed in place (a call, a subscript, an attribute)
    effects: tuple[str, ...] = ()  # heuristic SideEffect labels
    parsed: bool = True  # False: not Python we could read (a cell magic); reads unknown
    draws: tuple[str, ...] = ()  # names whose draw-like methods ran (``rng.normal()``)

    @property
    def needs_consent(self) -> bool:
        """Whether re-running it changes the world outside the namespace (a heuristic)."""
        return any(effect in CONSENT_EFFECTS for effect in self.effects)


@dataclass(frozen=True, kw_only=True)
class ExecutionRecord:
    """One archived execution: the person's cell or the agent's code, as it ran."""

    id: int
    source: ExecutionSource
    code: str
    reads: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()  # bound (by the code or seen new in the namespace diff)
    mutates: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    duration_s: float = 0.0
    error: str | None = None
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    parsed: bool = True
    session_id: str | None = None
    turn: int | None = None
    execution_count: int | None = None
    cell_id: str | None = None
    kernel_run: str = ""
    created_at: str = ""
    late: bool = False  # run before Loom loaded, recorded at load: no timing, no namespace diff

    @property
    def label(self) -> str:
        """``cell [7]``, ``run_python (turn 3)``: where it ran, for tables."""
        if self.source == "cell":
            cell = f"cell [{self.execution_count}]" if self.execution_count else "cell"
            return f"{cell} (before Loom loaded)" if self.late else cell
        return f"{self.source} (turn {self.turn})" if self.turn is not None else self.source

    @property
    def needs_consent(self) -> bool:
        """Whether re-running it changes files, the network or runs a subprocess (heuristic)."""
        return any(effect in CONSENT_EFFECTS for effect in self.effects)

    def changes(self, name: str) -> bool:
        """Whether this execution bound or changed ``name``."""
        return name in self.sets or name in self.mutates


def analyze(code: str) -> CodeFacts:
    """The names ``code`` reads, sets and changes in place, and its likely side effects.

    IPython lines (``!ls``, ``%time x = 1``) are read as far as possible: a shell line
    counts as a subprocess; a line magic is skipped. Code that does not parse (a cell
    magic, a syntax error) gives ``parsed=False`` and no names.
    """
    source, shell = _plain_python(code)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return CodeFacts(effects=("subprocess",) if shell else (), parsed=False)
    scan = _Scan()
    scan.statements(tree.body)
    effects = code_effects(tree)
    if shell and "subprocess" not in effects:
        effects.append("subprocess")
    return CodeFacts(
        reads=tuple(scan.reads),
        sets=tuple(scan.sets),
        mutates=tuple(name for name in scan.mutates if name not in scan.sets),
        effects=tuple(effects),
        draws=tuple(scan.draws),
    )


def fingerprint(value: Any) -> str | None:
    """A short hash of a small value, to tell a rebuilt value from the original; else None.

    Numbers, short strings and bytes, small containers of them: their ``repr``. NumPy
    arrays and pandas objects: shape, dtype and (up to 100,000 cells) their bytes.
    Anything else, or anything too big to hash cheaply: None (no check).
    """
    try:
        text = _fingerprint_text(value)
    except Exception:  # a value's own repr or hash may fail; then there is no check
        return None
    if text is None:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _fingerprint_text(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, int, float, complex)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (str, bytes)):
        return f"{type(value).__name__}:{value!r}" if len(value) <= _FINGERPRINT_TEXT else None
    module = type(value).__module__.split(".", 1)[0]
    if module == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype"):
        head = f"ndarray:{value.shape}:{value.dtype}"
        if value.size > _FINGERPRINT_CELLS or value.dtype == object:
            return head
        return head + ":" + hashlib.sha256(value.tobytes()).hexdigest()
    if module == "pandas" and hasattr(value, "shape"):
        dtypes = getattr(value, "dtypes", getattr(value, "dtype", ""))
        head = f"{type(value).__name__}:{value.shape}:{dtypes!s}"
        size = 1
        for dim in value.shape:
            size *= int(dim)
        if size > _FINGERPRINT_CELLS:
            return head
        import pandas  # already loaded: the value is a pandas object

        hashed = pandas.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
        return head + ":" + hashlib.sha256(hashed).hexdigest()
    if isinstance(value, (tuple, list, dict, set, frozenset)) and len(value) <= 1_000:
        text = repr(sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value)
        if len(text) <= _FINGERPRINT_TEXT and " at 0x" not in text:
            return f"{type(value).__name__}:{text}"
    return None


def _plain_python(code: str) -> tuple[str, bool]:
    """``code`` with IPython's ``!`` and ``%`` lines made ``pass``; whether it had ``!``."""
    lines: list[str] = []
    shell = False
    for line in code.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("!"):
            shell = True
            lines.append(indent + "pass")
        elif stripped.startswith("%") and not stripped.startswith("%%"):
            lines.append(indent + "pass")
        else:
            lines.append(line)
    return "\n".join(lines), shell


class _Scan:
    """Walks module-level statements in order, so ``x = 1; y = x`` reads nothing."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.sets: list[str] = []
        self.mutates: list[str] = []
        self.draws: list[str] = []
        self._bound: set[str] = set()

    def statements(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in stmt.decorator_list:
                self.load(decorator)
            self.read_all(_free_names(stmt))
            self.bind(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name != "*":
                    self.bind(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(stmt, ast.Assign):
            self.load(stmt.value)
            for target in stmt.targets:
                self.target(target)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.load(stmt.value)
                self.target(stmt.target)
        elif isinstance(stmt, ast.AugAssign):
            self.load(stmt.value)
            if isinstance(stmt.target, ast.Name):
                self.read(stmt.target.id)
                self.bind(stmt.target.id)
            else:
                self.target(stmt.target)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.read(target.id)
                else:
                    self.target(target)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.load(stmt.iter)
            self.target(stmt.target)
            self.statements(stmt.body)
            self.statements(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.load(item.context_expr)
                if item.optional_vars is not None:
                    self.target(item.optional_vars)
            self.statements(stmt.body)
        elif isinstance(stmt, (ast.If, ast.While)):
            self.load(stmt.test)
            self.statements(stmt.body)
            self.statements(stmt.orelse)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.statements(stmt.body)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                if handler.type is not None:
                    self.load(handler.type)
                if handler.name:
                    self.bind(handler.name)
                self.statements(handler.body)
            self.statements(stmt.orelse)  # type: ignore[attr-defined]
            self.statements(stmt.finalbody)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Expr):
            self.load(stmt.value)
        else:  # return, raise, assert, match, global, pass…: read what they use
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    self.statement(child)
                elif isinstance(child, ast.expr):
                    self.load(child)

    def load(self, expr: ast.expr) -> None:
        """Names ``expr`` reads (free names of lambdas and comprehensions too)."""
        for node in _walk_scope(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.read(node.id)
            elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                self.bind(node.target.id)
            elif isinstance(node, _SCOPES):
                self.read_all(_free_names(node))
            elif isinstance(node, ast.Call):
                self.call(node)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            base = _base_name(func.value)
            inplace = any(
                kw.arg == "inplace" and isinstance(kw.value, ast.Constant) and kw.value.value
                for kw in node.keywords
            )
            if base is not None and (func.attr in MUTATING_METHODS or inplace):
                self.mutate(base)
            elif base is not None and func.attr in _DRAW_METHODS and base not in self.draws:
                self.draws.append(base)  # a generator's state advances (if it is one)

    def target(self, target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.target(element)
        elif isinstance(target, ast.Starred):
            self.target(target.value)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.load(target.value)
            if isinstance(target, ast.Subscript):
                self.load(target.slice)
            base = _base_name(target.value)
            if base is not None:
                self.mutate(base)

    def read(self, name: str) -> None:
        if name not in self._bound and name not in self.reads and name not in _IGNORED_READS:
            self.reads.append(name)

    def read_all(self, names: Iterable[str]) -> None:
        for name in names:
            self.read(name)

    def bind(self, name: str) -> None:
        self._bound.add(name)
        if name not in self.sets:
            self.sets.append(name)

    def mutate(self, name: str) -> None:
        self.read(name)
        if name not in self.mutates:
            self.mutates.append(name)


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its descendants, not entering nested scopes (yielded, not walked)."""
    yield node
    if isinstance(
        node,
        (
            ast.Lambda,
            ast.ListComp,
            ast.SetComp,
            ast.DictComp,
            ast.GeneratorExp,
            ast.FunctionDef,
            ast.AsyncFunctionDef,
            ast.ClassDef,
        ),
    ):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_scope(child)


def _free_names(scope: ast.AST) -> list[str]:
    """Names a function, class, lambda or comprehension uses but does not bind (in order)."""
    bound: set[str] = set()
    loads: list[str] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not scope:
                bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.split(".", 1)[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return list(dict.fromkeys(name for name in loads if name not in bound))


def _base_name(expr: ast.expr) -> str | None:
    """``df`` of ``df``, ``df.a``, ``df["a"].b``: the variable an access starts from."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


@dataclass(frozen=True)
class RebuildPlan:
    """What :func:`plan_rebuild` found: the executions to run, in order, and what it cannot make."""

    steps: tuple[ExecutionRecord, ...]
    missing: Mapping[str, str]  # name -> why it cannot be rebuilt
    unresolved: tuple[str, ...] = ()  # names the steps read that no archived execution sets

    @property
    def estimated_s(self) -> float:
        """The steps' recorded durations, summed."""
        return sum(step.duration_s for step in self.steps)

    @property
    def consent_steps(self) -> tuple[ExecutionRecord, ...]:
        """Steps that write files, reach the network or run a subprocess (heuristic)."""
        return tuple(step for step in self.steps if step.needs_consent)


def plan_rebuild(
    records: Sequence[ExecutionRecord], names: Iterable[str], present: Iterable[str] = ()
) -> RebuildPlan:
    """The smallest ordered slice of ``records`` (oldest first) that makes ``names`` again.

    For each name: its latest binding execution, then every later one that changed it
    in place; then, transitively, the same for each name those executions read that is
    not in ``present`` (the live namespace), looking only before the execution that
    reads it. Executions that raised are not setters. Steps come back in archive order.
    """
    live = set(present)
    chosen: set[int] = set()
    missing: dict[str, str] = {}
    unresolved: list[str] = []
    done: set[tuple[str, int]] = set()
    wanted = [(name, len(records), True) for name in reversed(dict.fromkeys(names))]
    while wanted:  # a work list, not recursion: chains can be thousands of cells long
        name, before, target = wanted.pop()
        if (name, before) in done:
            continue
        done.add((name, before))
        binder = next(
            (
                i
                for i in range(before - 1, -1, -1)
                if name in records[i].sets and not records[i].error
            ),
            None,
        )
        if binder is None:
            if target:
                failed = any(name in r.sets for r in records[:before])
                missing[name] = (
                    "only executions that raised set it"
                    if failed
                    else "no archived execution sets it"
                )
            elif name not in unresolved:
                unresolved.append(name)
            continue
        for index in range(binder, before):
            record = records[index]
            if index in chosen or not (
                index == binder or (name in record.mutates and not record.error)
            ):
                continue
            chosen.add(index)
            wanted.extend((read, index, False) for read in record.reads if read not in live)
    return RebuildPlan(
        steps=tuple(_judged(records[i]) for i in sorted(chosen)),
        missing=missing,
        unresolved=tuple(unresolved),
    )


def _judged(record: ExecutionRecord) -> ExecutionRecord:
    """``record`` with its effects judged again from its code, now: a stored column alone
    (an archive may come from elsewhere, or from an older, blinder judge) is never believed."""
    fresh = analyze(record.code).effects
    return replace(record, effects=tuple(dict.fromkeys((*record.effects, *fresh))))


@dataclass(frozen=True)
class Provenance:
    """Where ``name`` came from: the execution that last set it, and the chain before it."""

    name: str
    setter: ExecutionRecord | None  # the last to bind or change it; None: ``why`` says why
    chain: RebuildPlan  # every step that makes it, oldest first (the setter among them)
    why: str = ""  # when there is no setter: the reason

    @property
    def depends_on(self) -> tuple[ExecutionRecord, ...]:
        """The chain without the setter itself."""
        return tuple(step for step in self.chain.steps if step is not self.setter)


def trace(records: Sequence[ExecutionRecord], name: str) -> Provenance:
    """The :class:`Provenance` of ``name`` in ``records`` (oldest first)."""
    chain = plan_rebuild(records, [name])
    if name in chain.missing:
        return Provenance(name, None, chain, chain.missing[name])
    setter = next(step for step in reversed(chain.steps) if step.changes(name))
    return Provenance(name, setter, chain)


def execution_record(
    code: str,
    *,
    source: ExecutionSource,
    changed: Iterable[str],
    namespace: Mapping[str, Any],
    duration_s: float,
    error: str | None = None,
    execution_count: int | None = None,
    turn: int | None = None,
    cell_id: str | None = None,
    late: bool = False,
) -> ExecutionRecord:
    """The record of one execution: :func:`analyze` of ``code`` plus what the kernel saw.

    ``changed`` are the names the namespace diff found created or rebound (they count as
    set even when the code hid it, e.g. in ``exec``); fingerprints are taken of the names
    set or changed in place that are in ``namespace`` now.
    """
    facts = analyze(code)
    sets = tuple(dict.fromkeys((*facts.sets, *changed)))
    drawn = [name for name in facts.draws if _is_generator(namespace.get(name))]
    mutates = tuple(dict.fromkeys((*facts.mutates, *drawn)))
    fingerprints: dict[str, str] = {}
    for name in (*sets, *mutates):
        if name in namespace:
            value = fingerprint(namespace[name])
            if value is not None:
                fingerprints[name] = value
    return ExecutionRecord(
        id=0,
        source=source,
        code=code,
        reads=facts.reads,
        sets=sets,
        mutates=tuple(name for name in mutates if name not in sets),
        effects=facts.effects,
        parsed=facts.parsed,
        duration_s=duration_s,
        error=error,
        fingerprints=fingerprints,
        execution_count=execution_count,
        turn=turn,
        cell_id=cell_id,
        late=late,
    )


def _is_generator(value: Any) -> bool:
    """A random generator object (NumPy's or the standard library's): draws change it."""
    kind = type(value)
    return kind.__name__ in _GENERATOR_TYPES and kind.__module__.split(".")[0] in {
        "numpy",
        "random",
    }
