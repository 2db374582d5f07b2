"""A suite of notebook tasks: folders holding ``task.yaml`` (DESIGN §17, names pinned).

::

    name: clean-sales                 # unique in the suite
    setup: ["import pandas as pd", "df = pd.read_csv('sales.csv')"]   # cells run first
    prompt: "Drop the test rows and save the result as df_clean"       # or a list: one turn each
    magic: cowork                     # cowork | delegate
    approval: auto                    # the session's mode for the task
    check: "assert len(df_clean) == 97"   # run in the kernel after the last turn
    timeout_s: 300

Extensions (optional, beyond §17's keys):

``restart_before: [2]``
    Restart the kernel before these turns (1-based): Loom is loaded again and the setup
    cells run again, so the turn starts from the archive alone (an earlier session).
``new_session_before: [2]``
    Start a new conversation (``%cowork new``) before these turns.
``notebook: ["cell source", ...]``
    The harness plays a page holding a notebook with these code cells (over the ``loom``
    comm, as the sidebar does), so the cell tools work; before ``check`` runs the kernel
    gets ``notebook_cells``, the cells' sources as the page holds them then.

Every other file in the task's folder is copied beside the notebook.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from loom_jupyter.errors import LoomError

__all__ = ["TASK_FILE", "Magic", "SuiteError", "Task", "builtin_folder", "load_suite", "load_task"]

TASK_FILE = "task.yaml"
Magic = Literal["cowork", "delegate"]
Approval = Literal["ask", "auto", "read-only"]
_KEYS = frozenset(
    {"name", "setup", "prompt", "magic", "approval", "check", "timeout_s"}
    | {"restart_before", "new_session_before", "notebook"}
)
DEFAULT_TIMEOUT_S = 300.0


class SuiteError(LoomError):
    """A suite or a task.yaml that cannot be read; the message names the file and the key."""


@dataclass(frozen=True, kw_only=True)
class Task:
    """One task of a suite, as its ``task.yaml`` says."""

    name: str
    folder: Path
    prompts: tuple[str, ...]
    check: str
    setup: tuple[str, ...] = ()
    magic: Magic = "cowork"
    approval: Approval = "auto"
    timeout_s: float = DEFAULT_TIMEOUT_S
    restart_before: frozenset[int] = frozenset()
    new_session_before: frozenset[int] = frozenset()
    notebook: tuple[str, ...] | None = None

    def files(self) -> list[Path]:
        """The task folder's other files (copied beside the notebook)."""
        return sorted(p for p in self.folder.iterdir() if p.name != TASK_FILE)


def builtin_folder() -> Path:
    """The suite shipped in the package."""
    return Path(__file__).with_name("builtin")


def load_suite(suite: str | Path) -> list[Task]:
    """The tasks of ``suite`` (a folder of task folders, one task folder, or ``builtin``),
    sorted by name; raises :class:`SuiteError` naming what is wrong."""
    folder = builtin_folder() if str(suite) == "builtin" else Path(suite)
    if not folder.is_dir():
        raise SuiteError(f"{suite}: no such folder (give a folder of tasks, or `builtin`)")
    if (folder / TASK_FILE).is_file():
        return [load_task(folder)]
    tasks = [load_task(sub) for sub in sorted(folder.iterdir()) if (sub / TASK_FILE).is_file()]
    if not tasks:
        raise SuiteError(f"{folder}: no task folders (each holds a {TASK_FILE})")
    _unique([t.name for t in tasks], folder)
    return sorted(tasks, key=lambda t: t.name)


def load_task(folder: Path) -> Task:
    """The task in ``folder/task.yaml``."""
    import yaml

    path = folder / TASK_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise SuiteError(f"{path}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: must be a mapping of keys (name, prompt, check, ...)")
    return _task(path, data)


def _task(path: Path, data: dict[Any, Any]) -> Task:
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise SuiteError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {_known()})")
    prompt = data.get("prompt")
    prompts = [prompt] if isinstance(prompt, str) else prompt
    notebook = data.get("notebook")
    return Task(
        name=_text(path, data, "name", required=True),
        folder=path.parent,
        prompts=tuple(_texts(path, "prompt", prompts, required=True)),
        check=_text(path, data, "check", required=True),
        setup=tuple(_texts(path, "setup", data.get("setup", []))),
        magic=_choice(path, data, "magic", Magic, "cowork"),
        approval=_choice(path, data, "approval", Approval, "auto"),
        timeout_s=_seconds(path, data.get("timeout_s", DEFAULT_TIMEOUT_S)),
        restart_before=_turns(path, data, "restart_before", len(prompts or [])),
        new_session_before=_turns(path, data, "new_session_before", len(prompts or [])),
        notebook=None if notebook is None else tuple(_texts(path, "notebook", notebook)),
    )


def _known() -> str:
    return ", ".join(sorted(_KEYS))


def _text(path: Path, data: dict[Any, Any], key: str, *, required: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str) or (required and not value.strip()):
        raise SuiteError(f"{path}: `{key}` must be a non-empty string")
    return value


def _texts(path: Path, key: str, value: Any, *, required: bool = False) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SuiteError(f"{path}: `{key}` must be a string or a list of strings")
    if required and not value:
        raise SuiteError(f"{path}: `{key}` must not be empty")
    return value


def _choice(path: Path, data: dict[Any, Any], key: str, kind: Any, default: str) -> Any:
    value = data.get(key, default)
    if value not in get_args(kind):
        raise SuiteError(f"{path}: `{key}` must be one of {', '.join(get_args(kind))}")
    return value


def _seconds(path: Path, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise SuiteError(f"{path}: `timeout_s` must be a positive number of seconds")
    return float(value)


def _turns(path: Path, data: dict[Any, Any], key: str, count: int) -> frozenset[int]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= count for v in value
    ):
        raise SuiteError(f"{path}: `{key}` must list turn numbers from 2 to {count}")
    return frozenset(value)


def _unique(names: list[str], folder: Path) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise SuiteError(f"{folder}: two tasks are named {name!r} (names are unique)")
        seen.add(name)
