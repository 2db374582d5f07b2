"""A fork server for test kernels: each kernel forks from a process that has already
imported ipykernel and the anthropic SDK, instead of paying those imports (about 4 s of
CPU) again.

A test suite starts one zygote (``python -m loom_jupyter.testing.kernel_zygote SOCKET
MODULE...``), puts its socket in ``TESTS_KERNEL_ZYGOTE`` and a ``python3`` kernelspec
naming the ``loom-test-zygote`` provisioner first on ``JUPYTER_PATH``
(:func:`write_kernelspec`). Every kernel jupyter_client then starts with that spec — a
test's own, nbclient's, a Jupyter server's, ``loom-jupyter eval``'s — asks the zygote,
which forks; the child becomes what ``python -m ipykernel_launcher -f FILE`` would be: a
new session, the launcher's standard streams, its folder, its environment and argv, the
folder first on ``sys.path``. Loom itself is never preloaded: ``%load_ext`` runs as in a
cold kernel.

Whenever the zygote cannot stand in exactly (no zygote, another interpreter or
``PYTHON*`` setting, other arguments, an independent kernel) the kernel starts the usual
way. The provisioner reports the kernel's real exit status (the zygote reaps it) and
signals its process group, as :class:`LocalProvisioner` does with a ``Popen``.
"""

from __future__ import annotations

import array
import contextlib
import errno
import gc
import importlib
import json
import os
import runpy
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jupyter_client.provisioning.local_provisioner import LocalProvisioner

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["SOCKET_ENV", "ZygoteProvisioner", "cold_kernels", "serving", "write_kernelspec"]

SOCKET_ENV = "TESTS_KERNEL_ZYGOTE"
PROVISIONER = "loom-test-zygote"
LAUNCHER = ("-m", "ipykernel_launcher")
# What Python reads at start-up: a kernel whose environment sets them differently from the
# zygote's would not be the process a cold start gives, so it starts cold.
_STARTUP_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONSTARTUP",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
)


def write_kernelspec(folder: Path) -> Path:
    """A copy of the environment's ``python3`` kernelspec under ``folder/kernels``, started
    by the zygote's provisioner; put ``folder`` first on ``JUPYTER_PATH``. Returns its folder."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    copy = folder / "kernels" / "python3"
    shutil.copytree(spec.resource_dir, copy)
    data = spec.to_dict()
    data.setdefault("metadata", {})["kernel_provisioner"] = {"provisioner_name": PROVISIONER}
    (copy / "kernel.json").write_text(json.dumps(data, indent=1))
    return copy


@contextlib.contextmanager
def serving(folder: Path, modules: Sequence[str]) -> Iterator[None]:
    """A zygote that has imported ``modules``, for the kernels this process and its children
    start with the ``python3`` spec while the block runs (the spec is written in ``folder``).
    A zygote that ended before the block did is an error, with what it wrote."""
    write_kernelspec(folder / "jupyter")
    address, log = str(folder / "zygote.sock"), folder / "zygote.log"
    command = [sys.executable, "-m", __name__, address, *modules]
    with log.open("w") as errors:
        zygote = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    assert zygote.stdout is not None
    saved = {name: os.environ.get(name) for name in (SOCKET_ENV, "JUPYTER_PATH")}
    try:
        if zygote.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the kernel zygote did not start:\n{log.read_text()[-2000:]}")
        path = [str(folder / "jupyter"), *filter(None, [saved["JUPYTER_PATH"]])]
        os.environ.update({SOCKET_ENV: address, "JUPYTER_PATH": os.pathsep.join(path)})
        yield
    finally:
        _restore(saved)
        ended = zygote.poll()
        zygote.terminate()
        zygote.wait()
        zygote.stdout.close()
    if ended is not None:  # the kernels after that started cold
        raise RuntimeError(f"the kernel zygote ended early:\n{log.read_text()[-2000:]}")


@contextlib.contextmanager
def cold_kernels() -> Iterator[None]:
    """Kernels started in the block start the usual way (for tests of what a fresh process
    imports, or of how long it takes)."""
    saved = {SOCKET_ENV: os.environ.pop(SOCKET_ENV, None)}
    try:
        yield
    finally:
        _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# -- the launcher's side ----------------------------------------------------------------


class ZygoteProvisioner(LocalProvisioner):
    """:class:`LocalProvisioner`, with the kernel forked by the zygote when it can."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        forked = _fork_kernel(cmd, kwargs)
        if forked is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = cast("subprocess.Popen[bytes]", forked)  # what LocalProvisioner calls
        self.pid = self.pgid = forked.pid  # the child made its own session before it was named
        self.cwd = kwargs.get("cwd") or str(Path.cwd())
        return self.connection_info


@dataclass
class ForkedKernel:
    """The ``Popen`` view of a kernel the zygote forked: its exit status arrives on the
    connection that asked for it."""

    pid: int
    link: socket.socket
    returncode: int | None = None
    stdin: None = None
    stdout: None = None
    stderr: None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(block=False)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            self._read(block=True, timeout=timeout)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _read(self, *, block: bool, timeout: float | None = None) -> None:
        ready, _, _ = select.select([self.link], [], [], timeout if block else 0)
        if not ready:
            return
        data = self.link.recv(64)
        if data.startswith(b"exit "):
            self.returncode = int(data.split()[1])
        elif not _alive(self.pid):  # the zygote is gone: the kernel's own liveness says
            self.returncode = -1
        if self.returncode is not None:
            self.link.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _fork_kernel(cmd: list[str], kwargs: dict[str, Any]) -> ForkedKernel | None:
    """Ask the zygote for the kernel ``cmd`` describes; ``None`` to start it the usual way."""
    address = os.environ.get(SOCKET_ENV)
    if not address or tuple(cmd[1:3]) != LAUNCHER or kwargs.get("independent"):
        return None
    env = dict(kwargs.get("env") or os.environ)
    env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launch_kernel sets it
    request = {
        "argv": cmd,
        "env": env,
        "cwd": str(kwargs.get("cwd") or Path.cwd()),
        "launcher": os.getpid(),
    }
    streams = [_fd(kwargs.get("stdout"), 1), _fd(kwargs.get("stderr"), 2)]
    if None in streams:  # a pipe or DEVNULL asked for: subprocess's own business
        return None
    link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        link.connect(address)
        message = json.dumps(request).encode() + b"\n"
        socket.send_fds(link, [message], [fd for fd in streams if fd is not None])
        answer = _line(link)
    except OSError:
        link.close()
        return None
    if not answer.startswith("pid "):
        link.close()
        return None
    return ForkedKernel(int(answer.split()[1]), link)


def _fd(stream: Any, default: int) -> int | None:
    """The descriptor the kernel's stream goes to (inherited when not given); ``None`` for
    subprocess's ``PIPE``/``DEVNULL``."""
    if stream is None:
        return default
    if isinstance(stream, int):
        return stream if stream >= 0 else None
    return int(stream.fileno())


def _line(link: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = link.recv(256)
        if not chunk:
            raise ConnectionResetError("the kernel zygote closed the connection")
        data += chunk
    return data.decode().strip()


# -- the zygote --------------------------------------------------------------------------


@dataclass
class _Request:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    launcher: int
    streams: list[int]


class _Zygote:
    """Accepts requests on a Unix socket, forks a kernel for each, reaps them and tells
    each asker its kernel's exit status."""

    def __init__(self, address: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(address)
        self.listener.listen(64)
        self.wake_read, self.wake_write = socket.socketpair()
        self.wake_read.setblocking(False)
        self.wake_write.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_read, selectors.EVENT_READ)
        self.askers: dict[int, socket.socket | None] = {}  # None: the asker has left
        self.environment = {name: os.environ.get(name) for name in _STARTUP_VARIABLES}

    def serve(self) -> None:
        """Run until the process is killed. A forked child leaves through ``_become``."""
        signal.set_wakeup_fd(self.wake_write.fileno())
        signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd says a child ended
        print("ready", flush=True)
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is self.listener:
                    self._accept()
                elif key.fileobj is self.wake_read:
                    self._drain_wakeups()
                    self._reap()
                else:
                    self._forget(key.fileobj)  # type: ignore[arg-type]

    def _accept(self) -> None:
        link, _ = self.listener.accept()
        request = _read_request(link)
        refusal = None if request is None else self._refusal(request)
        if request is None or refusal is not None:
            _send(link, f"cold {refusal or 'unreadable request'}\n")
            link.close()
            return
        pid = self._fork(request, link)
        for fd in request.streams:
            os.close(fd)
        self.askers[pid] = link
        self.selector.register(link, selectors.EVENT_READ)
        _send(link, f"pid {pid}\n")

    def _refusal(self, request: _Request) -> str | None:
        if Path(request.argv[0]).absolute() != Path(sys.executable).absolute():  # a venv's own
            return "another interpreter"
        if tuple(request.argv[1:3]) != LAUNCHER or len(request.streams) != 2:
            return "another command"
        if {name: request.env.get(name) for name in _STARTUP_VARIABLES} != self.environment:
            return "other start-up settings"
        return None

    def _fork(self, request: _Request, link: socket.socket) -> int:
        ready_read, ready_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready_read)
            link.close()
            self._close_all()
            _become(request, ready_write)  # never returns
        os.close(ready_write)
        os.read(ready_read, 1)  # the child has its own session: its group may be signalled
        os.close(ready_read)
        return pid

    def _close_all(self) -> None:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.selector.close()
        for sock in (self.listener, self.wake_read, self.wake_write, *self.askers.values()):
            if sock is not None:
                sock.close()

    def _drain_wakeups(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self.wake_read.recv(512):
                pass

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            link = self.askers.pop(pid, None)
            if link is not None:
                self.selector.unregister(link)
                _send(link, f"exit {os.waitstatus_to_exitcode(status)}\n")
                link.close()

    def _forget(self, link: socket.socket) -> None:
        """The asker closed its end (its process ended): the kernel keeps running."""
        with contextlib.suppress(OSError):
            if link.recv(1):
                return
        self.selector.unregister(link)
        link.close()
        for pid, known in self.askers.items():
            if known is link:
                self.askers[pid] = None


def _send(link: socket.socket, text: str) -> None:
    with contextlib.suppress(OSError):
        link.sendall(text.encode())


def _read_request(link: socket.socket) -> _Request | None:
    fds = array.array("i")
    data = b""
    try:
        while not data.endswith(b"\n"):
            chunk, ancillary, _, _ = link.recvmsg(65536, socket.CMSG_SPACE(16 * fds.itemsize))
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            if not chunk:
                break
            data += chunk
        fields = json.loads(data)
        return _Request(
            argv=[str(a) for a in fields["argv"]],
            env={str(k): str(v) for k, v in fields["env"].items()},
            cwd=str(fields["cwd"]),
            launcher=int(fields["launcher"]),
            streams=list(fds),
        )
    except (OSError, ValueError, KeyError, TypeError):
        for fd in fds:
            os.close(fd)
        return None


def _become(request: _Request, ready: int) -> None:
    """In the forked child: turn into the kernel ``request`` describes, then exit."""
    os.setsid()
    os.write(ready, b"!")
    os.close(ready)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    null = os.open(os.devnull, os.O_RDONLY)
    for target, fd in enumerate([null, *request.streams]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    sys.argv = [request.argv[2], *request.argv[3:]]
    sys.path[0] = str(Path.cwd())  # what `python -m` puts first
    _exit_with(request.launcher)
    runpy.run_module(request.argv[2], run_name="__main__", alter_sys=True)
    sys.exit(0)


def _exit_with(launcher: int) -> None:
    """End the kernel when the process that asked for it ends, as ipykernel does with its
    parent (its own check sees the zygote as the parent)."""
    try:
        handle = os.pidfd_open(launcher)
    except OSError as error:
        if error.errno == errno.ESRCH:
            os._exit(1)
        return

    def watch() -> None:
        select.select([handle], [], [])
        os._exit(1)

    threading.Thread(target=watch, name="launcher-watch", daemon=True).start()


def main(argv: list[str]) -> None:
    """``python -m loom_jupyter.testing.kernel_zygote SOCKET MODULE...``"""
    address, modules = argv[0], argv[1:]
    for module in modules:
        importlib.import_module(module)
    if threading.active_count() != 1:
        raise SystemExit(f"kernel zygote: importing {modules} started a thread; not forking")
    gc.collect()
    gc.freeze()  # the children's collections leave the shared pages alone
    _Zygote(address).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
