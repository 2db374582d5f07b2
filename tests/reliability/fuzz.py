"""Hostile sidebar messages, generated deterministically, and the checks run after each batch.

:func:`comm_batches` builds the messages (a seeded :class:`random.Random`, no
hypothesis): every message type with wrong-typed, missing, empty, 1 MB and
deeply nested fields, unknown types and non-object data, repeated ``send``
client ids, path-like and SQL/FTS-like strings. Each :class:`Probe` says what
the kernel may answer (``docs/sidebar-protocol.md``): an error ``notice``, the
documented reply (``welcome``, ``sessions``, ``search_results``, ...), or
nothing (``ignore``: a resent client id, ``stop`` with nothing running, a
``set_notebook`` that names no notebook file). A probe's ``junk`` text must
never be archived as a prompt; a valid ``send`` is a prompt and its text must be.

:class:`CommFuzz` sends a batch over a real comm (``tests/kernel/sidebar_wire.py``)
and measures what a person would notice: a ``print(1)`` cell's time to answer,
a ``sessions`` round trip, the archive's ``PRAGMA integrity_check``, files
written outside the notebook's folder and junk archived as a prompt.
``tests/reliability/test_comm_fuzz.py`` asserts it;
``benchmarks/comm_fuzz.py`` writes the summary to ``docs/comm_fuzz.json``.

Deep nesting: jupyter_client encodes a message with :func:`json.dumps`, which
stops near Python's recursion limit (about 990 levels), so 500 levels go
through the client's encoder and 5,000 levels are written as JSON by hand
(:class:`Raw`). A kernel whose JSON decoder has the same limit drops that
message before loom sees it (ipykernel logs "Invalid Message"); a decoder
without it hands loom the value, which answers with a notice. Both are fine.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kernel.sidebar_wire import Wire

SEED = 17
MB = 1_048_576
DEEP = 500  # through jupyter_client's own encoder
DEEPEST = 5_000  # hand-written JSON
STALL = 120.0  # seconds: "never a stall" — a hang guard, not a timing goal (a busy 2-core
# machine took over 30 s for one list_files probe while a suite and stress-ng ran beside it)

NOTICE = "notice"
IGNORE = "ignore"
REPLIES = frozenset({"notice", "welcome", "sessions", "search_results", "history"})
"""What the kernel sends to one front in answer to its message (a broadcast
``session_changed`` answers ``new``, ``fork`` and ``resume``)."""
ANSWERS = REPLIES | {"session_changed"}

PATH_LIKE = (
    "../../etc/passwd",
    "../../../../../../../../etc/passwd",
    "/etc/passwd",
    "~",
    "~/.ssh/id_rsa",
    "..",
    "/",
    "..\\..\\windows\\win.ini",
    "file:///etc/passwd",
    "nb.ipynb/../../escape.ipynb",
    "../escape.ipynb",
    "%2e%2e%2fetc%2fpasswd",
    "etc/passwd\x00.ipynb",
)
SQL_LIKE = (
    '"; DROP TABLE conversation_turns; --',
    "' OR 1=1 --",
    "NEAR(",
    "NEAR(okapi word, 2)",
    "*",
    "okapi*",
    "OR",
    "AND NOT",
    '"unbalanced',
    "'",
    '"',
    "(",
    ")",
    "content:okapi",
    "^okapi",
    "{okapi word}",
    "okapi -word",
    "%",
    "_%",
    "\\",
    "turns_fts MATCH 'x'",
    "okapi OR",
)
WRONG_STR: tuple[Any, ...] = (None, 0, 1.5, True, [], {}, ["a"], {"a": 1})
WRONG_OPTIONAL_STR: tuple[Any, ...] = (None, 0, 1.5, True, [], {})
WRONG_INT: tuple[Any, ...] = (None, "1", 1.5, True, [], {}, "")
WRONG_OPTIONAL_INT: tuple[Any, ...] = ("1", 1.5, True, [], {})
WRONG_DECISION: tuple[Any, ...] = (None, "ALLOW", "yes", 1, True, [], "")

# field -> its kind, per message type (docs/sidebar-protocol.md)
FIELDS: dict[str, dict[str, str]] = {
    "hello": {
        "protocol": "int?",
        "notebook_path": "str?",
        "since_seq": "int?",
        "client": "str?",
        "server_root": "str?",
    },
    "send": {"client_id": "str", "text": "str"},
    "cancel_queued": {"client_id": "str"},
    "stop": {},
    "approve": {"request_id": "str", "decision": "decision"},
    "load_more": {"before_turn": "int"},
    "sessions": {},
    "resume": {"session": "str"},
    "new": {},
    "fork": {"at_turn": "int?"},
    "search": {"query": "str"},
    "set_notebook": {"path": "str", "server_root": "str?"},
}
WRONG = {
    "str": WRONG_STR,
    "str?": WRONG_OPTIONAL_STR,
    "int": WRONG_INT,
    "int?": WRONG_OPTIONAL_INT,
    "decision": WRONG_DECISION,
}
# what a valid message of the type is answered with (with the base fields below)
VALID_ANSWER: dict[str, frozenset[str]] = {
    "hello": frozenset({"welcome"}),
    "send": frozenset({IGNORE}),  # a prompt: broadcast turn events, no reply
    "cancel_queued": frozenset({IGNORE}),
    "stop": frozenset({IGNORE}),
    "approve": frozenset({NOTICE}),  # "That approval was already answered."
    "load_more": frozenset({"history"}),
    "sessions": frozenset({"sessions"}),
    "resume": frozenset({NOTICE}),  # no such session
    "new": frozenset({"session_changed"}),
    "fork": frozenset({"session_changed", NOTICE}),
    "search": frozenset({"search_results"}),
    "set_notebook": frozenset({IGNORE}),  # names no notebook file on this machine
}


@dataclass(frozen=True)
class Raw:
    """A message's ``data`` as JSON text written by hand (deeper than the client encodes)."""

    text: str


@dataclass(frozen=True)
class Probe:
    """One message and what may answer it."""

    label: str
    data: Any  # the comm message's ``data`` (or :class:`Raw`)
    answers: frozenset[str]
    junk: str | None = None  # must never become an archived prompt
    prompt: str | None = None  # a valid send: archived verbatim
    client_id: str | None = None  # the prompt's client id


@dataclass(frozen=True)
class Batch:
    """Probes of one kind, checked together."""

    kind: str
    probes: tuple[Probe, ...]


def comm_batches(seed: int = SEED) -> tuple[Batch, ...]:
    """Every batch, in the order they run (same seed, same messages)."""
    rng = random.Random(seed)
    return (
        Batch("wrong types", tuple(_wrong_types(rng))),
        Batch("missing fields", tuple(_missing_fields())),
        Batch("empty", tuple(_empty(rng))),
        Batch("1 MB strings", tuple(_huge(rng))),
        Batch("deep nesting", tuple(_deep(rng))),
        Batch("unknown types", tuple(_unknown_types(rng))),
        Batch("non-object data", tuple(_non_objects())),
        Batch("odd numbers", tuple(_odd_numbers())),
        Batch("repeated client ids", tuple(_repeats(rng))),
        Batch("path-like", tuple(_path_like(rng))),
        Batch("SQL/FTS-like", tuple(_sql_like(rng))),
    )


# -- generators ---------------------------------------------------------------------------


def _base(kind: str, rng: random.Random) -> dict[str, Any]:
    """A valid, harmless message of ``kind`` (its answer is :data:`VALID_ANSWER`)."""
    bases: dict[str, dict[str, Any]] = {
        "hello": {
            "protocol": 1,
            "notebook_path": "",
            "since_seq": None,
            "kernel_session": None,
            "client": "lab",
        },
        "send": {"client_id": _cid(rng), "text": _junk(rng)},
        "cancel_queued": {"client_id": "fuzz-nobody"},
        "approve": {"request_id": "fuzz-no-request", "decision": "deny"},
        "load_more": {"before_turn": 1},
        "resume": {"session": "fuzz-no-such-session"},
        "fork": {"at_turn": None},
        "search": {"query": "okapi"},
        "set_notebook": {"path": "fuzz-missing.ipynb", "server_root": ""},
    }
    return {"type": kind, **bases.get(kind, {})}


def _cid(rng: random.Random) -> str:
    return f"fuzz-{rng.getrandbits(64):016x}"


def _junk(rng: random.Random) -> str:
    """A send text that is never meant to run (its message is malformed elsewhere)."""
    return f"fuzz junk {rng.getrandbits(48):012x}"


def _probe(label: str, data: dict[str, Any], answers: frozenset[str]) -> Probe:
    """A probe; a malformed send's text is junk (never archived)."""
    junk = data.get("text") if data.get("type") == "send" else None
    return Probe(label, data, answers, junk=junk if isinstance(junk, str) else None)


def _wrong_types(rng: random.Random) -> list[Probe]:
    probes = []
    for kind, fields in FIELDS.items():
        for name, spec in fields.items():
            for value in WRONG[spec]:
                data = {**_base(kind, rng), name: value}
                probes.append(_probe(f"{kind}.{name}={_show(value)}", data, frozenset({NOTICE})))
    for value in (0, [], {"a": 1}):  # kernel_session is read leniently: not a string = none
        data = {**_base("hello", rng), "kernel_session": value}
        probes.append(_probe(f"hello.kernel_session={_show(value)}", data, VALID_ANSWER["hello"]))
    return probes


def _missing_fields() -> list[Probe]:
    rng = random.Random(0)
    probes = []
    for kind, fields in FIELDS.items():
        base = _base(kind, rng)
        for name, spec in fields.items():
            if not spec.endswith("?") and name in base:
                data = {k: v for k, v in base.items() if k != name}
                probes.append(_probe(f"{kind} without {name}", data, frozenset({NOTICE})))
        untyped = {k: v for k, v in base.items() if k != "type"}
        probes.append(_probe(f"{kind} fields without type", untyped, frozenset({NOTICE})))
    return probes


def _empty(rng: random.Random) -> list[Probe]:
    text = frozenset({NOTICE})
    return [
        Probe("send.text=''", {"type": "send", "client_id": _cid(rng), "text": ""}, text, junk=""),
        Probe(
            "send.text=blank",
            {"type": "send", "client_id": _cid(rng), "text": " \n\t "},
            text,
            junk=" \n\t ",
        ),
        Probe("send both ''", {"type": "send", "client_id": "", "text": ""}, text, junk=""),
        _probe(
            "cancel_queued.client_id=''",
            {"type": "cancel_queued", "client_id": ""},
            frozenset({IGNORE}),
        ),
        _probe("approve.request_id=''", {**_base("approve", rng), "request_id": ""}, text),
        _probe("approve.decision=''", {**_base("approve", rng), "decision": ""}, text),
        _probe("resume.session=''", {"type": "resume", "session": ""}, text),
        _probe("search.query=''", {"type": "search", "query": ""}, frozenset({"search_results"})),
        _probe("set_notebook.path=''", {"type": "set_notebook", "path": ""}, frozenset({IGNORE})),
        _probe("hello.notebook_path=''", {**_base("hello", rng)}, VALID_ANSWER["hello"]),
        _probe("hello.client=''", {**_base("hello", rng), "client": ""}, VALID_ANSWER["hello"]),
        _probe("type=''", {"type": ""}, text),
        _probe("data={}", {}, text),
        _probe("stop (nothing runs)", {"type": "stop"}, frozenset({IGNORE})),
        _probe("sessions", {"type": "sessions"}, VALID_ANSWER["sessions"]),
        _probe("new", {"type": "new"}, VALID_ANSWER["new"]),
    ]


def _huge(rng: random.Random) -> list[Probe]:
    """Every string field at 1 MB: each message is over the protocol's size limit."""
    big = "x" * MB
    refused = frozenset({NOTICE})
    probes = [
        Probe(
            "send.text=1 MB",
            {"type": "send", "client_id": _cid(rng), "text": big},
            refused,
            junk=big,
        ),
        Probe(
            "send.client_id=1 MB",
            {"type": "send", "client_id": big, "text": "fuzz 1 MB id"},
            refused,
            junk="fuzz 1 MB id",
        ),
        _probe("type=1 MB", {"type": big}, refused),
        _probe("sessions.extra=1 MB", {"type": "sessions", "extra": big}, refused),
        _probe("search.query=1 MB words", {"type": "search", "query": _words(rng, MB)}, refused),
        _probe(
            "set_notebook.path=1 MB .ipynb",
            {"type": "set_notebook", "path": big + ".ipynb"},
            refused,
        ),
        _probe("hello.notebook_path=1 MB", {**_base("hello", rng), "notebook_path": big}, refused),
        _probe("hello.server_root=1 MB", {**_base("hello", rng), "server_root": big}, refused),
        _probe("1 MB key", {"type": "sessions", big: 1}, refused),
    ]
    for kind, name in (
        ("cancel_queued", "client_id"),
        ("approve", "request_id"),
        ("approve", "decision"),
        ("resume", "session"),
        ("search", "query"),
        ("hello", "client"),
        ("set_notebook", "server_root"),
    ):
        probes.append(_probe(f"{kind}.{name}=1 MB", {**_base(kind, rng), name: big}, refused))
    return probes


def _words(rng: random.Random, size: int) -> str:
    words = ("okapi", "word", "OR", "NEAR", "kernel", "frame", "\u00e9t\u00e9", "x*")
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def _nested(depth: int) -> Any:
    """``depth`` levels of alternating lists and objects around a string."""
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _deep(rng: random.Random) -> list[Probe]:
    deep = _nested(DEEP)
    notice = frozenset({NOTICE})
    probes = [
        _probe(f"{kind}.{name}={DEEP} levels", {**_base(kind, rng), name: deep}, notice)
        for kind, fields in FIELDS.items()
        for name in fields
    ]
    probes.append(_probe(f"type={DEEP} levels", {"type": deep}, notice))
    probes.append(Probe(f"data={DEEP} levels", deep, notice))
    probes.append(
        _probe(
            f"sessions.extra={DEEP} levels",
            {"type": "sessions", "x": deep},
            frozenset({"sessions"}),
        )
    )
    either = frozenset({NOTICE, IGNORE})  # dropped by the kernel's JSON decoder, or refused
    deepest = "[" * DEEPEST + "]" * DEEPEST
    for kind, name in (("send", "text"), ("search", "query"), ("hello", "notebook_path")):
        rest = {k: v for k, v in _base(kind, rng).items() if k != name}
        raw = Raw(f'{json.dumps(rest)[:-1]}, "{name}": {deepest}}}')
        probes.append(Probe(f"{kind}.{name}={DEEPEST} levels (raw JSON)", raw, either))
    probes.append(Probe(f"data={DEEPEST} levels (raw JSON)", Raw(deepest), either))
    return probes


def _unknown_types(rng: random.Random) -> list[Probe]:
    names: list[Any] = [
        "SEND",
        "send ",
        " hello",
        "Sessions",
        "__proto__",
        "constructor",
        "hello\x00",
        "../../etc/passwd",
        "💥",
        "search; DROP TABLE x",
        "welcome",
        "notice",
        "turn_done",
        "comm_close",
        "execute_request",
        "sessions\n",
        "nul\u0000l",
        123,
        1.5,
        None,
        True,
        [],
        {},
        ["send"],
    ]
    names += [f"fuzz-{rng.getrandbits(32):08x}" for _ in range(4)]
    probes = [_probe(f"type={_show(n)}", {"type": n}, frozenset({NOTICE})) for n in names]
    probes.append(_probe("no type key", {"client_id": _cid(rng), "text": "x"}, frozenset({NOTICE})))
    return probes


def _non_objects() -> list[Probe]:
    values: list[Any] = [None, [], "send", "", 0, 1.5, True, [{"type": "sessions"}], ["hello"]]
    return [Probe(f"data={_show(v)}", v, frozenset({NOTICE})) for v in values]


def _as_float(number: int) -> frozenset[str]:
    """What else may answer a number past 64 bits: a kernel whose jupyter_client reads JSON
    with orjson gets it as a float, which an integer field refuses with a notice."""
    return frozenset({NOTICE}) if abs(number) >= 2**64 else frozenset()


def _odd_numbers() -> list[Probe]:
    answered = frozenset({"history", NOTICE})
    probes = [
        _probe(f"load_more.before_turn={n}", {"type": "load_more", "before_turn": n}, answered)
        for n in (-1, 0, 1, 2**31, 2**63, 10**30)
    ]
    probes += [
        _probe(
            f"hello.since_seq={n}",
            {**_base("hello", random.Random(n)), "since_seq": n},
            frozenset({"welcome"}) | _as_float(n),
        )
        for n in (-1, 10**9, 2**63, 10**30)
    ]
    probes += [
        _probe(
            f"fork.at_turn={n}", {"type": "fork", "at_turn": n}, VALID_ANSWER["fork"] | _as_float(n)
        )
        for n in (-1, 0, 10**30)
    ]
    for version in (0, 2, 10**30):  # another protocol: the notice, and nothing else until...
        rng = random.Random(version)
        refused = frozenset({NOTICE})
        probes.append(
            _probe(
                f"hello.protocol={version}", {**_base("hello", rng), "protocol": version}, refused
            )
        )
        probes.append(_probe(f"sessions after protocol {version}", _base("sessions", rng), refused))
        probes.append(_probe(f"send after protocol {version}", _base("send", rng), refused))
        probes.append(
            _probe("...a hello the kernel speaks", _base("hello", rng), VALID_ANSWER["hello"])
        )
    return probes


def _repeats(rng: random.Random) -> list[Probe]:
    """A prompt, then its client id again and again: the resends are never run."""
    probes: list[Probe] = []
    for round_ in range(2):
        cid = _cid(rng)
        text = f"fuzz prompt {round_}: repeated client id"
        probes.append(_send(text, cid))
        for again in range(10):
            resend = f"fuzz resend {round_}.{again} {rng.getrandbits(32):08x}"
            probes.append(
                Probe(
                    f"send again #{again}",
                    {"type": "send", "client_id": cid, "text": resend},
                    frozenset({IGNORE}),
                    junk=resend,
                )
            )
        probes.append(
            _probe(
                "cancel_queued of it",
                {"type": "cancel_queued", "client_id": cid},
                frozenset({IGNORE}),
            )
        )
    return probes


def _send(text: str, cid: str) -> Probe:
    data = {"type": "send", "client_id": cid, "text": text}
    return Probe(f"send {text[:24]!r}", data, frozenset({IGNORE}), prompt=text, client_id=cid)


def _strings_everywhere(rng: random.Random, strings: tuple[str, ...]) -> list[Probe]:
    """Each string in every string field a person's front may send."""
    probes = []
    for value in strings:
        cases = (
            ("hello", "notebook_path", VALID_ANSWER["hello"]),
            ("hello", "server_root", VALID_ANSWER["hello"]),
            ("set_notebook", "path", frozenset({IGNORE})),
            ("resume", "session", frozenset({NOTICE})),
            ("search", "query", frozenset({"search_results"})),
            ("cancel_queued", "client_id", frozenset({IGNORE})),
            ("approve", "request_id", frozenset({NOTICE})),
        )
        for kind, name, answers in cases:
            data = {**_base(kind, rng), name: value}
            if kind == "hello" and name == "server_root":
                data["notebook_path"] = "fuzz.ipynb"
            probes.append(_probe(f"{kind}.{name}={_show(value)}", data, answers))
    return probes


def _path_like(rng: random.Random) -> list[Probe]:
    probes = _strings_everywhere(rng, PATH_LIKE)
    probes += [_send(f"fuzz prompt: {p}", _cid(rng)) for p in ("../../etc/passwd", "~/.ssh")]
    return probes


def _sql_like(rng: random.Random) -> list[Probe]:
    probes = _strings_everywhere(rng, SQL_LIKE)
    texts = ('fuzz prompt: "; DROP TABLE conversation_turns; --', "fuzz prompt: NEAR( okapi*")
    probes += [_send(text, _cid(rng)) for text in texts]
    return probes


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


# -- running a batch against a kernel -----------------------------------------------------


@dataclass
class Answer:
    """What one probe got back."""

    probe: Probe
    outcome: str  # the first reply's type, or "ignore"
    seconds: float
    notices: list[str] = field(default_factory=list)

    @property
    def expected(self) -> bool:
        return self.outcome in self.probe.answers


@dataclass
class BatchReport:
    """One batch's answers and the checks after it."""

    kind: str
    answers: list[Answer]
    print_seconds: float = 0.0
    print_output: str = ""
    sessions_seconds: float = 0.0
    integrity: str = ""
    stray_files: list[str] = field(default_factory=list)
    junk_archived: list[str] = field(default_factory=list)
    prompts_missing: list[str] = field(default_factory=list)
    late_replies: list[str] = field(default_factory=list)

    @property
    def unexpected(self) -> list[str]:
        return [
            f"{a.probe.label}: got {a.outcome} {a.notices[:1]}, expected {sorted(a.probe.answers)}"
            for a in self.answers
            if not a.expected
        ]

    def count(self, outcome: str) -> int:
        return sum(a.outcome == outcome for a in self.answers)

    @property
    def worst_answer(self) -> float:
        return max((a.seconds for a in self.answers), default=0.0)


class CommFuzz:
    """One sidebar comm on a real kernel; runs batches and checks the kernel after each."""

    def __init__(self, wire: Wire, notebook: Path, sandbox: Path) -> None:
        self.wire = wire
        self.notebook = notebook
        self.sandbox = sandbox  # everything the notebook's parents hold, watched for strays
        self.archive = notebook.parent / ".loom" / f"{notebook.name}.sqlite"
        self.comm = ""
        self.junk: set[str] = set()
        self.prompts: dict[str, str] = {}  # client id -> text

    def open(self, hello: dict[str, Any]) -> None:
        """Open the comm and wait for its welcome."""
        self.comm = self.wire.open_comm(hello)
        self._wait_for(0, {"welcome"}, "the welcome")

    def run(self, batch: Batch) -> BatchReport:
        """Send every probe (waiting for its answer), then check the kernel."""
        before = _tree(self.sandbox, self.notebook.parent)
        report = BatchReport(batch.kind, [self.send(probe) for probe in batch.probes])
        report.late_replies = self._late_replies()
        self._wait_idle(batch)
        report.print_seconds, report.print_output = self.print_one()
        report.sessions_seconds = self.sessions_round_trip()
        report.integrity = self.integrity()
        report.stray_files = sorted(_tree(self.sandbox, self.notebook.parent) - before)
        users = self.user_texts()
        report.junk_archived = sorted(_short(j) for j in self.junk if j in users)
        report.prompts_missing = sorted(t for t in self.prompts.values() if t not in users)
        return report

    # -- one probe ---------------------------------------------------------------------

    def send(self, probe: Probe) -> Answer:
        """Send one probe and wait for its answer (or, when none is due, a later reply)."""
        self.junk.update(_junk_texts(probe))
        if probe.prompt is not None and probe.client_id is not None:
            self.prompts[probe.client_id] = probe.prompt
        start = len(self.wire.comm_events(self.comm))
        began = time.monotonic()
        self._post(probe.data)
        if IGNORE in probe.answers:
            return self._ignored(probe, start, began)
        found = self._wait_for(start, ANSWERS, probe.label)
        notices = [e["message"][:200] for e in found if e["type"] == NOTICE]
        return Answer(probe, found[-1]["type"], time.monotonic() - began, notices)

    def _ignored(self, probe: Probe, start: int, began: float) -> Answer:
        """No reply is due: a ``sessions`` round trip shows what (if anything) came first."""
        self._post({"type": "sessions"})
        found = self._wait_for(start, {"sessions"}, f"sessions after {probe.label}")
        seconds = time.monotonic() - began
        replies = [e for e in found[:-1] if e["type"] in ANSWERS]
        outcome = replies[0]["type"] if replies else IGNORE
        notices = [e["message"][:200] for e in replies if e["type"] == NOTICE]
        return Answer(probe, outcome, seconds, notices)

    def _post(self, data: Any) -> None:
        if isinstance(data, Raw):
            content = f'{{"comm_id": "{self.comm}", "data": {data.text}}}'.encode()
            msg = self.wire.kc.session.msg("comm_msg", {})
            msg["content"] = content
            self.wire.kc.shell_channel.send(msg)
        else:
            self.wire.send(self.comm, data)

    def _wait_for(self, start: int, kinds: set[str] | frozenset[str], what: str) -> list[Any]:
        """The comm's events from ``start`` up to the first of ``kinds`` (within STALL)."""

        def arrived() -> list[Any] | None:
            events = self.wire.comm_events(self.comm)[start:]
            for index, event in enumerate(events):
                if event["type"] in kinds:
                    return events[: index + 1]
            return None

        return self.wire.wait(arrived, what, timeout=STALL)

    def _late_replies(self) -> list[str]:
        """Replies that came after the batch's last answer (a probe answered late or twice)."""
        start = len(self.wire.comm_events(self.comm))
        self._post({"type": "sessions"})
        found = self._wait_for(start, {"sessions"}, "the batch's closing sessions")
        return [
            f"{e['type']}: {e.get('message', '')[:120]}" for e in found[:-1] if e["type"] in REPLIES
        ]

    def _wait_idle(self, batch: Batch) -> None:
        """Every prompt of the batch has run to its end."""
        ids = {p.client_id for p in batch.probes if p.prompt is not None}
        if not ids:
            return

        def idle() -> bool:
            events = self.wire.comm_events(self.comm)
            started = {e.get("client_id") for e in events if e["type"] == "turn_started"}
            states = [e for e in events if e["type"] in ("status", "queue")]
            last_status = next((e for e in reversed(states) if e["type"] == "status"), None)
            last_queue = next((e for e in reversed(states) if e["type"] == "queue"), None)
            return (
                ids <= started
                and last_status is not None
                and last_status["state"] == "idle"
                and (last_queue is None or not last_queue["items"])
            )

        try:
            self.wire.wait(idle, "the batch's prompts to finish", timeout=STALL * 4)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; the comm's last events: {self._recent()}") from None

    def _recent(self, count: int = 12) -> list[str]:
        events = self.wire.comm_events(self.comm)[-count:]
        return [f"{e['type']} {str(e.get('state') or e.get('message') or '')[:80]}" for e in events]

    # -- after a batch -------------------------------------------------------------------

    def print_one(self) -> tuple[float, str]:
        """A ``print(1)`` cell: seconds to its execute_reply, and what it printed."""
        began = time.monotonic()
        msg_id = self.wire.execute("print(1)")
        self.wire.wait(lambda: self._shell_reply(msg_id), "print(1)", timeout=STALL)
        seconds = time.monotonic() - began
        # iopub and shell are separate channels: the output is all there once iopub is idle
        self.wire.wait(lambda: self._iopub_idle(msg_id), "print(1)'s output", timeout=STALL)
        out = [
            m["content"]["text"]
            for ch, m in self.wire.log
            if ch == "iopub"
            and m["msg_type"] == "stream"
            and m["parent_header"].get("msg_id") == msg_id
        ]
        return seconds, "".join(out)

    def _iopub_idle(self, msg_id: str) -> bool:
        return any(
            ch == "iopub"
            and m["msg_type"] == "status"
            and m["content"]["execution_state"] == "idle"
            and m["parent_header"].get("msg_id") == msg_id
            for ch, m in self.wire.log
        )

    def _shell_reply(self, msg_id: str) -> dict[str, Any] | None:
        for channel, msg in self.wire.log:
            if channel == "shell" and msg["parent_header"].get("msg_id") == msg_id:
                return dict(msg["content"])
        return None

    def sessions_round_trip(self) -> float:
        """Seconds from a ``sessions`` message to its reply."""
        start = len(self.wire.comm_events(self.comm))
        began = time.monotonic()
        self._post({"type": "sessions"})
        self._wait_for(start, {"sessions"}, "sessions")
        return time.monotonic() - began

    def integrity(self) -> str:
        rows = self._rows("PRAGMA integrity_check")
        return ", ".join(str(r[0]) for r in rows)

    def user_texts(self) -> set[str]:
        return {
            str(r[0])
            for r in self._rows("SELECT content FROM conversation_turns WHERE role = 'user'")
        }

    def _rows(self, sql: str) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True)) as db:
            return db.execute(sql).fetchall()


def _junk_texts(probe: Probe) -> set[str]:
    """Every string the probe carries that is not its own valid prompt."""
    values = probe.data.values() if isinstance(probe.data, dict) else [probe.data]
    texts = {v for v in values if isinstance(v, str) and v != probe.prompt}
    return texts | ({probe.junk} if probe.junk is not None else set())


def _tree(root: Path, inside: Path) -> set[str]:
    """Every file and folder under ``root`` that is not under ``inside``."""
    found = set()
    for path in root.rglob("*"):
        if inside != path and inside not in path.parents:
            found.add(str(path.relative_to(root)))
    return found


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text):,} chars)"


WATCHED_OUTSIDE = (Path("/etc/.loom"), Path("/.loom"), Path.home() / ".loom", Path("/tmp/.loom"))
"""Where an archive would land if a path-like message were followed out of the sandbox."""


def outside_archives() -> set[str]:
    """Which of :data:`WATCHED_OUTSIDE` exist (compared before and after the fuzz)."""
    return {str(p) for p in WATCHED_OUTSIDE if p.exists()}


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """The fake Messages API's answer to every prompt (the fuzz's valid sends)."""
    return {"content": [{"type": "text", "text": "Noted."}]}


# -- tool inputs ------------------------------------------------------------------------------

ESCAPING_PATHS = (
    "../../etc/passwd",
    "../../../../../../../../etc/passwd",
    "/etc/passwd",
    "..",
    "/",
)
"""Path-like values that leave the notebook's folder: every file tool must refuse them."""
_WRONG_BY_TYPE: dict[str, tuple[Any, ...]] = {
    "string": (0, 1.5, True, [], {}, ["a"]),
    "integer": ("1", 1.5, True, [], {}, "NaN"),
    "number": ("1", True, [], {}),
    "boolean": ("true", 0, 1, [], {}, "yes"),
    "array": ("a", 0, 1.5, True, {}, None),
}


@dataclass(frozen=True)
class ToolProbe:
    """One odd input for a tool; ``invalid`` inputs break the schema and must be refused."""

    label: str
    input: Any
    invalid: bool
    escapes: bool = False  # a path outside the notebook's folder: must be refused


def tool_inputs(schema: dict[str, Any], seed: int = SEED) -> list[ToolProbe]:
    """Odd inputs for a tool with input ``schema`` (a closed object schema)."""
    rng = random.Random(seed)
    props: dict[str, Any] = schema.get("properties", {})
    base = _valid_input(schema)
    probes = [ToolProbe(f"input={_show(v)}", v, True) for v in (None, [], "x", 1, [base])]
    probes += [ToolProbe("extra key", {**base, "fuzz_extra": 1}, True)]
    probes += [ToolProbe("deep junk key", {**base, "junk": _nested(DEEP)}, True)]
    for name in schema.get("required", ()):
        probes.append(ToolProbe(f"without {name}", _without(base, name), True))
    for name, prop in props.items():
        probes += _property_probes(base, name, prop, rng)
    return probes


def _property_probes(
    base: dict[str, Any], name: str, prop: dict[str, Any], rng: random.Random
) -> list[ToolProbe]:
    kind = prop.get("type")
    probes = [ToolProbe(f"{name}={_show(v)}", {**base, name: v}, True)
              for v in _WRONG_BY_TYPE.get(str(kind), ())]  # fmt: skip
    probes.append(ToolProbe(f"{name}={DEEP} levels", {**base, name: _nested(DEEP)}, True))
    if kind == "integer":
        for value in (-1, 0, 2**63, 10**30):
            out_of_range = value < prop.get("minimum", value) or value > prop.get("maximum", value)
            probes.append(ToolProbe(f"{name}={value}", {**base, name: value}, out_of_range))
    if kind == "array":
        probes += _array_probes(base, name, prop, rng)
    if kind == "string" and "enum" in prop:
        for value in ("", "SEARCH", "*", '"; DROP TABLE x; --'):
            probes.append(ToolProbe(f"{name}={_show(value)}", {**base, name: value}, True))
    elif kind == "string":
        empty_refused = prop.get("minLength", 0) > 0
        probes.append(ToolProbe(f"{name}=''", {**base, name: ""}, empty_refused))
        probes.append(ToolProbe(f"{name}=1 MB", {**base, name: _words(rng, MB)}, False))
        for value in (*PATH_LIKE, *SQL_LIKE):
            escapes = name == "path" and value in ESCAPING_PATHS
            probes.append(
                ToolProbe(f"{name}={_show(value)}", {**base, name: value}, False, escapes)
            )
    return probes


def _array_probes(
    base: dict[str, Any], name: str, prop: dict[str, Any], rng: random.Random
) -> list[ToolProbe]:
    """Lists of the wrong things, of nothing, of too much, and of hostile strings."""
    item = prop.get("items", {})
    empty_refused = prop.get("minItems", 0) > 0
    blank_refused = item.get("type") == "string" and item.get("minLength", 0) > 0
    cases: list[tuple[str, Any, bool]] = [
        ("[]", [], empty_refused),
        ("[None]", [None], True),
        ("[1, 2]", [1, 2], item.get("type") == "string"),
        ("['']", [""], blank_refused),
        ("[[...]]", [["nested"]], True),
        ("10,000 items", ["x"] * 10_000, False),
        ("[1 MB]", [_words(rng, MB)], False),
        ("path-like items", list(PATH_LIKE), False),
        ("SQL-like items", list(SQL_LIKE), False),
    ]
    cases += [(f"[{_show(value)}]", [value], False) for value in (*PATH_LIKE, *SQL_LIKE)]
    return [ToolProbe(f"{name}={label}", {**base, name: v}, bad) for label, v, bad in cases]


def _valid_input(schema: dict[str, Any]) -> dict[str, Any]:
    """A harmless valid input: the required keys only."""
    props: dict[str, Any] = schema.get("properties", {})
    values = {"path": "notes.txt", "old_string": "alpha", "new_string": "beta", "code": "1 + 1"}
    values |= {"command": "echo fuzz", "source": "1 + 1", "goal": "nothing", "pattern": "alpha"}
    base: dict[str, Any] = {}
    for name in schema.get("required", ()):
        prop = props[name]
        if "enum" in prop:
            base[name] = prop["enum"][0]
        elif prop.get("type") == "array":
            base[name] = ["fuzz"]
        elif prop.get("type") == "string":
            base[name] = values.get(name, "fuzz")
        else:
            base[name] = prop.get("minimum", 1)
    return base


def _without(data: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != name}
