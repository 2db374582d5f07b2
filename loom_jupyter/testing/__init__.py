"""Test helpers shipped with loom_jupyter, for our tests and yours.

- :class:`FakeAnthropic` — a fake Anthropic Messages API on 127.0.0.1 for the
  real ``anthropic`` SDK (see :mod:`loom_jupyter.testing.fake_anthropic` for
  the script format, faults and the ``python -m`` form).
- :mod:`loom_jupyter.testing.pytest_plugin` — the ``fake_anthropic`` pytest
  fixture; enable it with
  ``pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]`` in a conftest.py.
- :class:`loom_jupyter.models.scripted.ScriptedModel` — a Model that answers
  from a script, without any HTTP.

Standard library only at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_jupyter.testing.fake_anthropic import FakeAnthropic, RecordedRequest

__all__ = ["FakeAnthropic", "RecordedRequest"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `python -m loom_jupyter.testing.fake_anthropic`
    # does not find the module already loaded by its own package.
    if name in __all__:
        from loom_jupyter.testing import fake_anthropic

        return getattr(fake_anthropic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
