"""What running code does outside the namespace: files, the network, processes, randomness.

:func:`code_effects` judges a piece of Python from its text (``ast``), so a rebuild can
judge each step at replay time instead of believing a stored column (DESIGN §11,
security review F6). It sees through names: ``import os as o``, ``from os import system
as run``, ``sh = os.system`` and ``getattr(os, "system")`` all lead back to ``os.system``.
``os`` and ``shutil`` calls that change files or start processes count, as do
``subprocess``, network modules (``requests``, ``socket``, ``urllib``...) and code built at
run time (``exec``, ``eval``, ``__import__``). A heuristic: code can always hide more; the
person reads every step before a rebuild runs it.
"""

from __future__ import annotations

import ast
from typing import Literal

__all__ = ["CONSENT_EFFECTS", "RANDOM_CALLS", "SideEffect", "code_effects", "dotted"]

SideEffect = Literal[
    "writes files", "reads files", "network", "subprocess", "randomness", "runs built code"
]
CONSENT_EFFECTS: frozenset[str] = frozenset(
    {"writes files", "network", "subprocess", "runs built code"}
)
"""Effects that change the world outside the namespace: a rebuild asks before running them."""

_FILE_WRITE_CALLS = frozenset(
    {
        "to_csv",
        "to_parquet",
        "to_excel",
        "to_json",
        "to_pickle",
        "to_feather",
        "to_hdf",
        "to_sql",
        "to_netcdf",
        "savefig",
        "save",
        "savez",
        "savetxt",
        "dump",
        "write_text",
        "write_bytes",
        "mkdir",
        "unlink",
        "remove",
        "rmtree",
        "rename",
        "copy",
        "copyfile",
        "move",
        "makedirs",
        "touch",
    }
)
_FILE_READ_CALLS = frozenset(
    {
        "read_csv",
        "read_parquet",
        "read_excel",
        "read_json",
        "read_pickle",
        "read_feather",
        "read_hdf",
        "read_sql",
        "read_table",
        "load",
        "loadtxt",
        "genfromtxt",
        "read_text",
        "read_bytes",
        "imread",
        "glob",
        "listdir",
        "scandir",
        "walk",
    }
)
_NETWORK_MODULES = frozenset(
    {"requests", "urllib", "httpx", "socket", "http", "aiohttp", "ftplib", "smtplib", "boto3"}
)
_NETWORK_CALLS = frozenset({"urlopen", "urlretrieve", "get", "post", "put", "delete", "request"})
_SUBPROCESS_MODULES = frozenset({"subprocess"})
_SUBPROCESS_CALLS = frozenset({"system", "popen", "run", "check_output", "check_call", "call"})
_RANDOM_MODULES = frozenset({"random", "secrets", "uuid"})
RANDOM_CALLS = frozenset(
    {
        "rand",
        "randn",
        "randint",
        "random",
        "choice",
        "shuffle",
        "sample",
        "normal",
        "uniform",
        "permutation",
        "default_rng",
        "uuid4",
        "integers",
    }
)
_RANDOM_ROOTS = frozenset({"rng", "generator", "torch"})
_SEED_CALLS = frozenset({"seed", "manual_seed", "set_seed"})
# Generators made from a seed (``default_rng(7)``): what they draw repeats.
_SEEDED_MAKERS = frozenset({"default_rng", "RandomState", "Random", "Generator", "PRNGKey"})
_OS_PROCESS_CALLS = frozenset(
    {
        "system",
        "popen",
        "fork",
        "forkpty",
        "kill",
        "killpg",
        "startfile",
        "posix_spawn",
        "posix_spawnp",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "spawnl",
        "spawnle",
        "spawnlp",
        "spawnlpe",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
    }
)
_OS_FILE_CALLS = frozenset(
    {
        "remove",
        "unlink",
        "rename",
        "renames",
        "replace",
        "rmdir",
        "removedirs",
        "mkdir",
        "makedirs",
        "chmod",
        "lchmod",
        "chown",
        "lchown",
        "symlink",
        "link",
        "truncate",
        "ftruncate",
        "write",
        "writev",
        "pwrite",
        "open",
        "fdopen",
        "mkfifo",
        "mknod",
        "utime",
        "putenv",
        "unsetenv",
        "chdir",
    }
)
_SHUTIL_HARMLESS = frozenset({"which", "disk_usage", "get_terminal_size"})
_BUILT_CODE = frozenset({"exec", "eval", "compile", "__import__"})


def dotted(expr: ast.expr) -> list[str]:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
    return list(reversed(parts))


def code_effects(tree: ast.Module) -> list[str]:
    found: list[str] = []

    def add(effect: str) -> None:
        if effect not in found:
            found.append(effect)

    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".", 1)[0])
    aliases = _aliases(tree)
    if modules & _NETWORK_MODULES:
        add("network")
    if modules & _SUBPROCESS_MODULES:
        add("subprocess")
    seeded = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts = _resolved(dotted(node.func), aliases)
        if not parts:
            continue
        name, root = parts[-1], parts[0]
        for effect in _module_call(parts, node, aliases):
            add(effect)
        if name == "open" and len(parts) == 1:
            mode = _open_mode(node)
            add("writes files" if any(flag in mode for flag in "wax+") else "reads files")
        elif name in _FILE_WRITE_CALLS and len(parts) > 1 and root not in _RANDOM_MODULES:
            add("writes files")
        elif name in _FILE_READ_CALLS and len(parts) > 1:
            add("reads files")
        network_client = name in _NETWORK_CALLS and root in {"requests", "httpx", "session"}
        if root in _NETWORK_MODULES or name in {"urlopen", "urlretrieve"} or network_client:
            add("network")
        if root in _SUBPROCESS_MODULES or (root == "os" and name in _SUBPROCESS_CALLS):
            add("subprocess")
        if name in _SEED_CALLS or (
            name in _SEEDED_MAKERS and (node.args or any(k.arg == "seed" for k in node.keywords))
        ):
            seeded = True
        elif root in _RANDOM_MODULES or (
            name in RANDOM_CALLS and ("random" in parts[:-1] or root in _RANDOM_ROOTS)
        ):
            add("randomness")
    if seeded and "randomness" in found:
        found.remove("randomness")  # seeded in the same execution: repeatable
    return found


def _open_mode(node: ast.Call) -> str:
    mode: ast.expr | None = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return "r"
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else "w"


def _aliases(tree: ast.Module) -> dict[str, list[str]]:
    """What names stand for: ``o`` -> ``os`` (``import os as o``), ``run`` -> ``os.system``
    (``from os import system as run``), ``sh`` -> ``os.system`` (``sh = os.system``)."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = alias.name.split(".")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = [*node.module.split("."), alias.name]
    for node in ast.walk(tree):  # after the imports: ``sh = o.system`` resolves through ``o``
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            source = _getattr_parts(value, found) or _resolved(dotted(value), found)
            if isinstance(target, ast.Name) and len(source) > 1:
                found[target.id] = source
    return found


def _resolved(parts: list[str], aliases: dict[str, list[str]]) -> list[str]:
    """``parts`` with its first name replaced by what it stands for."""
    if parts and parts[0] in aliases:
        return [*aliases[parts[0]], *parts[1:]]
    return parts


def _getattr_parts(node: ast.expr, aliases: dict[str, list[str]]) -> list[str]:
    """``getattr(os, "system")`` as ``["os", "system"]``; ``getattr(os, name)`` as
    ``["os", "*"]`` (anything of it); else ``[]``."""
    if not (isinstance(node, ast.Call) and dotted(node.func) == ["getattr"] and node.args):
        return []
    base = _resolved(dotted(node.args[0]), aliases)
    if not base:
        return []
    attr = node.args[1] if len(node.args) > 1 else None
    named = isinstance(attr, ast.Constant) and isinstance(attr.value, str)
    return [*base, attr.value if named else "*"]  # type: ignore[union-attr]


def _module_call(
    parts: list[str], node: ast.Call, aliases: dict[str, list[str]]
) -> list[SideEffect]:
    """Effects of calling ``os.*``, ``shutil.*`` or built code, however it was named."""
    if len(parts) == 1 and parts[0] in _BUILT_CODE:
        return ["runs built code"]
    if parts[:2] == ["importlib", "import_module"]:
        return ["runs built code"]
    target = _getattr_parts(node, aliases)
    if target:
        parts = target
    root, name = parts[0], parts[-1]
    if root == "os" and len(parts) == 2 and (name in _OS_PROCESS_CALLS or name == "*"):
        return ["subprocess"] if name != "*" else ["subprocess", "writes files"]
    if root == "os" and len(parts) == 2 and name in _OS_FILE_CALLS:
        return ["writes files"]
    if root == "shutil" and len(parts) == 2 and name not in _SHUTIL_HARMLESS:
        return ["writes files"]
    return []
