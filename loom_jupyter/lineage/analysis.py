"""What one execution's code reads, sets and changes in place, read with :mod:`ast`.

:func:`analyze` finds the names a cell's code reads before setting them, the names it
binds, the names it changes in place (``df.drop(..., inplace=True)``, ``lst.append(x)``,
``d["k"] = v``, ``model.fit``) and, **by heuristics** (:mod:`loom_jupyter.effects`),
whether it touches files, the network, a subprocess or randomness. Pure: no I/O.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.effects import CONSENT_EFFECTS, RANDOM_CALLS, code_effects

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["MUTATING_METHODS", "CodeFacts", "analyze"]

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
_IGNORED_READS = frozenset(dir(builtins)) | {"get_ipython", "In", "Out", "_", "__", "___"}

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


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
