"""The organisation's managed policy (DESIGN §16): read from the environment's prefix, the
stricter of two files winning, and nothing the person, a project or a magic sets loosening it.

The policy is read where production reads it: ``{sys.prefix}/etc/loom/managed.yaml`` (the
test points ``sys.prefix`` at a temporary folder; ``/etc/loom`` is not on this machine).
The kernels started from a real environment whose prefix holds the policy are in
``tests/kernel/test_managed_policy.py``.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from policy_files import write_policy

from loom_jupyter.errors import ManagedPolicyError, PolicyRefusedError, RequestRefusedError
from loom_jupyter.policy import ManagedPolicy, TelemetryPolicy, managed_policy, read_policy
from loom_jupyter.settings import Settings
from loom_jupyter.spend import SpendLedger, utc_day
from loom_jupyter.tools.approval import ApprovalPolicy
from loom_jupyter.trust import TrustStore, decide, folder_trust, read_request, settings_for

POLICY = """\
approval: ask
models: [claude-sonnet-5-5, claude-haiku-5-5]
mcp_servers_allowed: [docs]
web_search: false
web_fetch: false
daily_spend_limit_usd: 20
telemetry: {endpoint: http://otel-collector:4318, headers: {x-team: data}, capture_content: false}
"""


def test_every_key_is_read_typed(tmp_path: Path) -> None:
    path = tmp_path / "managed.yaml"
    path.write_text(POLICY)
    policy = read_policy([path])
    assert policy.approval == "ask"
    assert policy.models == ("claude-sonnet-5-5", "claude-haiku-5-5")
    assert policy.mcp_servers_allowed == ("docs",)
    assert (policy.web_search, policy.web_fetch) == (False, False)
    assert policy.daily_spend_limit_usd == 20.0
    assert policy.telemetry == TelemetryPolicy(
        endpoint="http://otel-collector:4318",
        headers=(("x-team", "data"),),
        capture_content=False,
    )
    assert policy.files == (str(path),)


def test_two_files_the_stricter_value_wins_per_key(tmp_path: Path) -> None:
    system, image = tmp_path / "etc.yaml", tmp_path / "prefix.yaml"
    system.write_text(
        "approval: ask\nmodels: [claude-sonnet-5-5, haiku]\nweb_search: true\n"
        "daily_spend_limit_usd: 20\ntelemetry: {capture_content: true, headers: {a: '1'}}\n"
    )
    image.write_text(
        "approval: read-only\nmodels: [claude-haiku-5-5, claude-opus-5-5]\nweb_search: false\n"
        "daily_spend_limit_usd: 5\nmcp_servers_allowed: []\n"
        "telemetry: {endpoint: 'http://c:4318', capture_content: false, headers: {a: '2'}}\n"
    )
    policy = read_policy([system, image])
    assert policy.approval == "read-only"
    assert policy.models == ("claude-haiku-5-5",)  # those both list (an alias is its id)
    assert policy.web_search is False
    assert policy.daily_spend_limit_usd == 5.0
    assert policy.mcp_servers_allowed == ()
    assert policy.telemetry == TelemetryPolicy("http://c:4318", (("a", "1"),), False)
    assert policy.file_of("approval") == str(image)
    assert policy.files == (str(system), str(image))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("approval: [ask\n", "not valid YAML"),
        ("aproval: ask\n", "unknown key(s) aproval"),
        ("approval: sometimes\n", "approval must be one of ask, auto, read-only"),
        ("models: claude-sonnet-5-5\n", "models must be a list of names"),
        ("web_search: maybe\n", "web_search must be true or false"),
        ("daily_spend_limit_usd: lots\n", "daily_spend_limit_usd must be a number"),
        ("telemetry: {endpoint: otel:4318}\n", "telemetry.endpoint must be an http(s) URL"),
        ("telemetry: {sample: 1}\n", "unknown telemetry key(s) sample"),
        ("- approval\n", "expected a mapping"),
    ],
)
def test_a_broken_policy_stops_loom_naming_the_file(prefix: Path, text: str, words: str) -> None:
    path = write_policy(prefix, text)
    with pytest.raises(ManagedPolicyError) as failed:
        managed_policy()
    message = str(failed.value)
    assert message.startswith(f"{path}: the managed policy cannot be used")
    assert words in message
    assert "Loom does not run until your administrator fixes it" in message


def test_a_broken_policy_fails_closed_where_settings_are_resolved(prefix: Path) -> None:
    notebook = prefix.parent / "project" / "nb.ipynb"
    notebook.parent.mkdir()
    tools = ApprovalPolicy("auto")  # a session opened before the file broke
    write_policy(prefix, "approval: sometimes\n")
    with pytest.raises(ManagedPolicyError):
        settings_for(folder_trust(notebook))
    assert tools.mode == "read-only"  # its tool calls: the strictest mode


def test_the_policy_is_read_again_when_the_file_changes(prefix: Path) -> None:
    path = write_policy(prefix, "approval: ask\n")
    assert managed_policy().approval == "ask"
    path.write_text("approval: read-only\nweb_fetch: false\n")
    assert managed_policy().approval == "read-only"
    path.unlink()
    assert not managed_policy().active


def _project(root: Path, config: str) -> Path:
    folder = root / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / "loom.yaml").write_text(config)
    return folder / "nb.ipynb"


def _person(config: str) -> None:
    import os

    home = Path(os.environ["XDG_CONFIG_HOME"]) / "loom"
    home.mkdir(parents=True, exist_ok=True)
    (home / "loom.yaml").write_text(config)


def test_a_persons_looser_config_is_governed_and_said(prefix: Path) -> None:
    write_policy(prefix, POLICY)
    _person(
        "approval: auto\nmodel: claude-opus-5-5\nweb_search: true\nweb_fetch: true\n"
        "delegate_judge_model: claude-opus-5-5\n"
    )
    notebook = prefix.parent / "plain" / "nb.ipynb"
    notebook.parent.mkdir()
    trust = folder_trust(notebook)
    settings = settings_for(trust)
    assert settings.approval == "ask"
    assert settings.model == "claude-sonnet-5-5"
    assert settings.delegate_judge_model == "claude-sonnet-5-5"
    assert (settings.web_search, settings.web_fetch) == (False, False)
    said = [o.text() for o in managed_policy().overrides(settings_for(trust, managed=False))]
    policy_file = str(prefix / "etc" / "loom" / "managed.yaml")
    assert (
        "approval: auto (your loom.yaml) is not allowed; ask is used (managed by your "
        f"organisation, {policy_file})"
    ) in said
    assert any(s.startswith("model: claude-opus-5-5 (your loom.yaml) is not allowed") for s in said)
    assert any(s.startswith("web_search: on (your loom.yaml) is not allowed") for s in said)


def test_env_variables_are_governed(prefix: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_policy(prefix, POLICY)
    monkeypatch.setenv("LOOM_APPROVAL", "auto")
    monkeypatch.setenv("LOOM_MODEL", "opus")
    monkeypatch.setenv("LOOM_WEB_FETCH", "1")
    notebook = prefix.parent / "nb.ipynb"
    settings = settings_for(folder_trust(notebook))
    assert (settings.approval, settings.model, settings.web_fetch) == (
        "ask",
        "claude-sonnet-5-5",
        False,
    )
    said = managed_policy().overrides(settings_for(folder_trust(notebook), managed=False))
    assert {o.key: o.source for o in said} == {
        "approval": "env",
        "model": "env",
        "web_fetch": "env",
    }


def test_a_trusted_projects_looser_values_are_governed(prefix: Path) -> None:
    write_policy(prefix, POLICY)
    notebook = _project(
        prefix.parent,
        "approval: auto\nweb_search: true\nmodel: claude-opus-5-5\n"
        "mcp_servers:\n  docs: {command: python, approval: auto}\n"
        "  rogue: {command: python, approval: auto}\n",
    )
    request = read_request(notebook)
    decide(notebook, "trust", shown=request.digest, with_approval=True, store=TrustStore())
    trust = folder_trust(notebook)
    assert trust.trusted
    assert trust.loosening
    wanted = settings_for(trust, managed=False)
    assert (wanted.approval, wanted.web_search, wanted.model) == ("auto", True, "claude-opus-5-5")
    settings = settings_for(trust)
    assert (settings.approval, settings.web_search, settings.model) == (
        "ask",
        False,
        "claude-sonnet-5-5",
    )
    assert {s.name: s.approval for s in settings.mcp_servers} == {"docs": "ask", "rogue": "ask"}
    sources = {o.key: o.source for o in managed_policy().overrides(wanted)}
    assert sources == {"approval": "project", "web_search": "project", "model": "project"}


def test_a_magic_that_asks_for_more_is_refused_naming_the_file(prefix: Path) -> None:
    path = write_policy(prefix, POLICY)
    notebook = prefix.parent / "nb.ipynb"
    with pytest.raises(PolicyRefusedError, match="approval auto is not allowed"):
        settings_for(folder_trust(notebook), approval="auto")
    with pytest.raises(PolicyRefusedError, match="claude-opus-5-5 is not allowed"):
        settings_for(folder_trust(notebook), model="opus")
    policy = ApprovalPolicy("ask", source="user")
    with pytest.raises(PolicyRefusedError) as refused:
        policy.mode = "auto"  # %cowork approval auto, the sidebar's switch: one door
    assert str(path) in str(refused.value)
    assert "allows at most ask" in str(refused.value)
    policy.mode = "read-only"  # stricter is always fine
    assert policy.mode == "read-only"


def test_a_mode_set_before_the_policy_came_never_reads_looser(prefix: Path) -> None:
    policy = ApprovalPolicy("auto", source="magic")
    assert policy.mode == "auto"
    write_policy(prefix, "approval: ask\n")
    assert policy.mode == "ask"


def test_the_banner_words_list_each_key_in_force(prefix: Path) -> None:
    write_policy(prefix, POLICY)
    summary = managed_policy().summary()
    assert summary.startswith("managed by your organisation (")
    for words in (
        "approval: ask at most",
        "models: claude-sonnet-5-5, claude-haiku-5-5",
        "MCP servers: docs",
        "web_search: off",
        "web_fetch: off",
        "daily spend limit: $20.00 (UTC day)",
        "telemetry: http://otel-collector:4318",
    ):
        assert words in summary


def test_no_policy_changes_nothing(prefix: Path) -> None:
    settings = Settings(approval="auto", web_search=True, model="claude-opus-5-5")
    assert not managed_policy().active
    assert ManagedPolicy().govern(settings) is settings


# -- the spend ledger -----------------------------------------------------------------------


def test_the_ledger_counts_per_utc_day_and_refuses_with_the_figures(tmp_path: Path) -> None:
    ledger = SpendLedger(tmp_path / "state" / "loom" / "spend.sqlite", person="ada")
    evening = datetime.datetime(2026, 3, 1, 22, 30, tzinfo=datetime.timezone.utc)
    ledger.add(12.5, model="claude-sonnet-5-5", now=evening)
    ledger.check(20, policy_file="/etc/loom/managed.yaml", now=evening)  # under: fine
    ledger.add(8.0, model="claude-sonnet-5-5", now=evening)
    with pytest.raises(RequestRefusedError) as refused:
        ledger.check(20, policy_file="/etc/loom/managed.yaml", now=evening)
    assert str(refused.value) == (
        "The daily spend limit is reached: today $20.50 of $20.00 spent; resets at 00:00 UTC "
        "(in 1 h 30 min). Nothing was sent. The limit is set by your organisation's managed "
        "policy (/etc/loom/managed.yaml)."
    )
    morning = evening + datetime.timedelta(hours=2)
    assert utc_day(morning) == "2026-03-02"
    assert ledger.spent_today(morning) == 0.0  # a new UTC day
    other = SpendLedger(ledger.path, person="grace")
    assert other.spent_today(evening) == 0.0  # per person
    assert SpendLedger(ledger.path, person="ada").spent_today(evening) == 20.5  # on disk
    assert oct(ledger.path.stat().st_mode & 0o777) == "0o600"
