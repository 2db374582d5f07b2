"""``loom-jupyter eval``: measure Loom on notebook tasks, and compare runs (DESIGN §17).

A suite is a folder of tasks (``task.yaml`` each, :mod:`~loom_jupyter.eval.tasks`) or
``builtin`` (shipped in ``builtin/``). :mod:`~loom_jupyter.eval.runner` runs each trial in
a fresh folder and a fresh real kernel (:mod:`~loom_jupyter.eval.kernel`, with a notebook
page when the task holds one: :mod:`~loom_jupyter.eval.page`);
:mod:`~loom_jupyter.eval.measure` reads its numbers from the archive;
:mod:`~loom_jupyter.eval.results` is RESULTS (JSON); :mod:`~loom_jupyter.eval.compare`
sets a run against a baseline; :mod:`~loom_jupyter.eval.table` and
:mod:`~loom_jupyter.eval.report` draw them for the terminal and as HTML.
"""
