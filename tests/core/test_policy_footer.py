"""The sidebar footer's word on the organisation's managed policy (DESIGN §16, issue 43.1):
the approval mode's view (`welcome.approval`, `approval_mode`) carries the policy's line, each
setting it overrides where the person set it, and whether the policy decides the mode.

In process: the policy is read from ``{sys.prefix}/etc/loom/managed.yaml`` with
``sys.prefix`` pointed at a temporary folder (as ``test_policy.py`` does); the real kernels
are in ``tests/kernel/test_managed_policy.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_files import write_policy

from loom_jupyter.host.services.managed import approval_words, decides_approval, managed_report
from loom_jupyter.host.services.trust import TrustKeeper
from loom_jupyter.host.wire import protocol as p
from loom_jupyter.trust import folder_trust

if TYPE_CHECKING:
    from loom_jupyter.trust import FolderTrust


def person(config: str) -> None:
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "loom"
    home.mkdir(parents=True, exist_ok=True)
    (home / "loom.yaml").write_text(config)


def keeper(trust: FolderTrust | None) -> TrustKeeper:
    """A host's trust part before a session opens: the mode as the settings hold it."""

    def never() -> Any:
        raise AssertionError("the view opens nothing")

    found = TrustKeeper(location=None, floor=never, session=lambda: None, opened=never)  # type: ignore[arg-type]
    found.found = trust
    if trust is not None:
        from loom_jupyter.trust import settings_for

        found.settings = settings_for(trust)
    return found


def test_the_view_says_the_policy_and_what_it_overrides_where_the_person_set_it(
    prefix: Path, tmp_path: Path
) -> None:
    policy_file = str(write_policy(prefix, "approval: ask\nmodels: [claude-sonnet-5-5]\n"))
    person("approval: auto\nmodel: claude-opus-5-5\n")
    notebook = tmp_path / "plain" / "nb.ipynb"
    notebook.parent.mkdir()
    view = keeper(folder_trust(notebook)).approval_view()
    assert (view.mode, view.source, view.by_policy) == ("ask", "user", True)
    assert view.managed == (
        f"managed by your organisation ({policy_file}): approval: ask at most; "
        "models: claude-sonnet-5-5"
    )
    assert view.overrides == (
        "approval: auto (your loom.yaml) is not allowed; ask is used (managed by your "
        f"organisation, {policy_file})",
        "model: claude-opus-5-5 (your loom.yaml) is not allowed; claude-sonnet-5-5 is used "
        f"(managed by your organisation, {policy_file})",
    )
    wired = p.encode(p.ApprovalModeMsg(view), seq=1, kernel_session="k", turn=None)
    assert wired["approval"]["by_policy"] is True
    assert wired["approval"]["overrides"] == view.overrides


def test_a_policy_that_leaves_the_mode_alone_is_still_said(prefix: Path, tmp_path: Path) -> None:
    write_policy(prefix, "approval: auto\nweb_search: false\n")
    person("approval: ask\nweb_search: true\n")
    notebook = tmp_path / "plain" / "nb.ipynb"
    notebook.parent.mkdir()
    view = keeper(folder_trust(notebook)).approval_view()
    assert (view.mode, view.source, view.by_policy) == ("ask", "user", False)
    assert view.managed.startswith("managed by your organisation (")
    assert [line.partition(" (")[0] for line in view.overrides] == ["web_search: on"]


def test_a_stricter_mode_the_person_chose_is_theirs_in_every_front(
    prefix: Path, tmp_path: Path
) -> None:
    write_policy(prefix, "approval: ask\n")
    person("approval: auto\n")
    notebook = tmp_path / "plain" / "nb.ipynb"
    notebook.parent.mkdir()
    report = managed_report(folder_trust(notebook))
    assert report is not None
    assert report.approval_overridden
    assert decides_approval("ask", report)
    assert approval_words("ask", "user", report) == "ask (managed by your organisation)"
    assert not decides_approval("read-only", report)  # %cowork approval read-only: theirs
    assert approval_words("read-only", "magic", report) == "read-only (magic)"


def test_no_policy_leaves_the_view_as_a_1_3_kernel_sent_it(prefix: Path, tmp_path: Path) -> None:
    person("approval: auto\n")
    notebook = tmp_path / "plain" / "nb.ipynb"
    notebook.parent.mkdir()
    view = keeper(folder_trust(notebook)).approval_view()
    assert view == p.ApprovalModeView("auto", "user")
    assert (view.managed, view.overrides, view.by_policy) == ("", (), False)


def test_a_broken_policy_is_said_in_the_footer_naming_the_file(prefix: Path) -> None:
    policy_file = str(write_policy(prefix, "approval: sometimes\n"))
    view = keeper(None).approval_view()
    assert (view.mode, view.source, view.by_policy, view.overrides) == ("ask", "default", False, ())
    assert view.managed.startswith(f"{policy_file}: the managed policy cannot be used")
