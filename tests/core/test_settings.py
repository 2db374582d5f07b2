"""Settings precedence and clear errors for bad values."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import LoomConfigError
from loom_jupyter.settings import DEFAULT_MODEL, Settings

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def user_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "loom.yaml"
    path.parent.mkdir()
    return path


def test_defaults_without_any_source(tmp_path: Path, user_yaml: Path) -> None:
    settings = Settings.load(tmp_path, env={}, user_config=user_yaml)
    assert settings.model == DEFAULT_MODEL
    assert settings.approval == "ask"
    assert settings.context_budget_tokens == 120_000


def test_precedence_explicit_over_env_over_user_over_notebook(
    tmp_path: Path, user_yaml: Path
) -> None:
    """The person's own values win (DESIGN §12): the project's loom.yaml fills in only what
    they left unset, trusted or not."""
    user_yaml.write_text("model: haiku\nmax_iterations: 7\nshell_timeout_seconds: 3\n")
    (tmp_path / "loom.yaml").write_text("model: opus\nmax_iterations: 9\nmax_file_bytes: 5\n")
    env = {"LOOM_MODEL": "claude-custom", "LOOM_APPROVAL": "auto"}

    for trusted in (False, True):
        from_files = Settings.load(tmp_path, env={}, user_config=user_yaml, trusted=trusted)
        assert (from_files.model, from_files.max_iterations) == ("claude-haiku-5-5", 7)
        assert (from_files.shell_timeout_seconds, from_files.max_file_bytes) == (3.0, 5)
        assert from_files.source_of("model") == "user"
        assert from_files.source_of("max_file_bytes") == "project"

    from_env = Settings.load(tmp_path, env=env, user_config=user_yaml)
    assert (from_env.model, from_env.approval) == ("claude-custom", "auto")
    assert from_env.source_of("approval") == "env"

    explicit = Settings.load(tmp_path, env=env, user_config=user_yaml, approval="read-only")
    assert explicit.approval == "read-only"
    assert explicit.source_of("approval") == "magic"


def test_bad_yaml_names_the_file(tmp_path: Path, user_yaml: Path) -> None:
    (tmp_path / "loom.yaml").write_text("model: [unclosed\n")
    with pytest.raises(LoomConfigError, match=r"loom\.yaml: not valid YAML"):
        Settings.load(tmp_path, env={}, user_config=user_yaml)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("approval: sometimes\n", r"loom\.yaml: approval must be one of ask, auto, read-only"),
        ("max_iterations: many\n", r"loom\.yaml: max_iterations must be a int"),
        ("context_budget_tokens: -5\n", r"context_budget_tokens must be positive"),
        ("colour: blue\n", r"unknown setting 'colour'"),
        ("- a list\n", r"expected a mapping"),
    ],
)
def test_bad_values_name_the_file_and_key(
    tmp_path: Path, user_yaml: Path, text: str, message: str
) -> None:
    (tmp_path / "loom.yaml").write_text(text)
    with pytest.raises(LoomConfigError, match=message):
        Settings.load(tmp_path, env={}, user_config=user_yaml)


def test_bad_env_value_names_the_variable(tmp_path: Path, user_yaml: Path) -> None:
    with pytest.raises(LoomConfigError, match="LOOM_APPROVAL"):
        Settings.load(tmp_path, env={"LOOM_APPROVAL": "yolo"}, user_config=user_yaml)


def test_unknown_explicit_setting_is_refused(tmp_path: Path, user_yaml: Path) -> None:
    with pytest.raises(LoomConfigError, match="unknown setting"):
        Settings.load(tmp_path, env={}, user_config=user_yaml, colour="blue")


def test_empty_yaml_file_is_fine(tmp_path: Path, user_yaml: Path) -> None:
    (tmp_path / "loom.yaml").write_text("")
    assert Settings.load(tmp_path, env={}, user_config=user_yaml).model == DEFAULT_MODEL
