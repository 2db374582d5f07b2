"""Kill -9 trials in the suite: a dead kernel never splits the conversation or loses a prompt.

``benchmarks/kill_trials.py`` holds the trial machinery (and runs 100 by hand);
here 10 trials run under default settings and every one must hold. The timing
figure (text kept within about a second of the kill) is the benchmark's alone;
this asserts the ordering facts: whatever the person saw streaming is in the
archive from its first words, and what is kept is exactly what was streamed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from types import ModuleType

pytestmark = pytest.mark.kernel


def _load_trials() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "kill_trials.py"
    spec = importlib.util.spec_from_file_location("kill_trials", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kill_trials"] = module
    spec.loader.exec_module(module)
    return module


def test_ten_kills_at_random_moments_lose_nothing_and_resume_the_same_session() -> None:
    trials = _load_trials().run_trials(10, seed=11)
    assert len(trials) == 10
    assert {t.moment for t in trials} == {"stream", "tool", "between"}
    for trial in trials:
        assert trial.prompts_lost == 0, trial
        assert trial.integrity == "ok", trial
        assert trial.same_session, trial
        assert trial.first_request_valid, trial
        assert trial.state_says_kernel_died, trial
        assert trial.kept_is_prefix, trial
    for trial in (t for t in trials if t.moment == "stream"):
        assert trial.shown_chars > 0, trial  # the kill came while the answer streamed
        assert trial.kept_chars > 0, trial  # ...and the archive had its words already
        assert "died during a turn" in trial.banner, trial
        assert "partial answer" in trial.banner, trial
    for trial in (t for t in trials if t.moment == "tool"):
        assert "run_python did not finish" in trial.banner, trial
