"""lineage.analyze and fingerprint: names read, set and changed in place; side effects."""

from __future__ import annotations

import pytest

from loom_jupyter.lineage import analyze, fingerprint


def test_reads_are_names_used_before_the_code_sets_them() -> None:
    facts = analyze("y = x + 1\nz = y * 2\nprint(z)")
    assert facts.reads == ("x",)
    assert facts.sets == ("y", "z")
    assert facts.effects == ()


def test_augmented_assignment_reads_and_sets() -> None:
    facts = analyze("total += step")
    assert facts.reads == ("step", "total")
    assert facts.sets == ("total",)


def test_imports_defs_loops_and_withs_bind() -> None:
    facts = analyze(
        "import numpy as np\nfrom os import path\n"
        "def f(a):\n    return a + scale\n"
        "class C: pass\n"
        "for i in range(n):\n    acc = i\n"
        "with ctx() as fh:\n    pass\n"
    )
    assert set(facts.sets) == {"np", "path", "f", "C", "i", "acc", "fh"}
    assert facts.reads == ("scale", "n", "ctx")


def test_comprehension_and_lambda_variables_are_local() -> None:
    facts = analyze("ys = [v * k for v in xs]\ng = lambda q: q + w")
    assert facts.reads == ("k", "xs", "w")
    assert facts.sets == ("ys", "g")


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("df.drop(columns=['a'], inplace=True)", "df"),
        ("lst.append(3)", "lst"),
        ("d['k'] = 1", "d"),
        ("obj.attr = 2", "obj"),
        ("del cache['x']", "cache"),
        ("model.fit(X, y)", "model"),
        ("frame.loc[frame.a > 0, 'b'] = 0", "frame"),
    ],
)
def test_in_place_changes_count_as_mutations_and_reads(code: str, name: str) -> None:
    facts = analyze(code)
    assert name in facts.mutates
    assert name in facts.reads
    assert name not in facts.sets


def test_a_name_set_then_mutated_is_only_set() -> None:
    facts = analyze("xs = []\nxs.append(1)")
    assert facts.sets == ("xs",)
    assert facts.mutates == ()
    assert facts.reads == ()


@pytest.mark.parametrize(
    ("code", "effect"),
    [
        ("df.to_csv('out.csv')", "writes files"),
        ("open('a.txt', 'w').write('x')", "writes files"),
        ("text = open('a.txt').read()", "reads files"),
        ("df = pd.read_csv('a.csv')", "reads files"),
        ("import requests\nr = requests.get(url)", "network"),
        ("from urllib.request import urlopen\nurlopen(u)", "network"),
        ("import subprocess\nsubprocess.run(['ls'])", "subprocess"),
        ("!ls -la", "subprocess"),
        ("x = np.random.rand(3)", "randomness"),
        ("import random\nx = random.random()", "randomness"),
        ("plt.savefig('fig.png')", "writes files"),
    ],
)
def test_side_effects_are_found_by_heuristics(code: str, effect: str) -> None:
    assert effect in analyze(code).effects


def test_seeded_randomness_is_repeatable() -> None:
    facts = analyze("np.random.seed(0)\nx = np.random.rand(3)")
    assert "randomness" not in facts.effects
    assert facts.effects == ()


def test_consent_is_needed_for_writes_network_and_subprocesses_only() -> None:
    assert analyze("df.to_csv('o.csv')").needs_consent
    assert not analyze("df = pd.read_csv('a.csv')").needs_consent
    assert not analyze("x = np.random.rand(3)").needs_consent


def test_ipython_lines_are_skipped_and_cell_magics_are_not_parsed() -> None:
    facts = analyze("%matplotlib inline\ny = x")
    assert facts.parsed
    assert facts.reads == ("x",)
    assert facts.sets == ("y",)
    broken = analyze("%%bash\necho hi")
    assert not broken.parsed
    assert analyze("def (").parsed is False


def test_builtins_are_not_reads() -> None:
    assert analyze("n = len(range(3))\nprint(n)").reads == ()


def test_fingerprints_of_small_values_are_stable_and_differ() -> None:
    assert fingerprint(3) == fingerprint(3)
    assert fingerprint(3) != fingerprint(3.0)
    assert fingerprint("abc") != fingerprint("abd")
    assert fingerprint([1, 2]) == fingerprint([1, 2])
    assert fingerprint({2, 1}) == fingerprint({1, 2})
    assert fingerprint("x" * 20_000) is None
    assert fingerprint(object()) is None


def test_fingerprints_of_arrays_and_frames() -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    a = np.arange(10)
    assert fingerprint(a) == fingerprint(np.arange(10))
    assert fingerprint(a) != fingerprint(np.arange(1, 11))
    big = np.zeros(200_000)
    assert fingerprint(big) == fingerprint(np.ones(200_000))  # shape and dtype only
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert fingerprint(frame) == fingerprint(frame.copy())
    assert fingerprint(frame) != fingerprint(frame.assign(a=[1, 3]))


def test_a_generator_made_from_a_seed_repeats() -> None:
    from loom_jupyter.lineage import analyze

    assert "randomness" not in analyze("rng = np.random.default_rng(7)").effects
    assert "randomness" not in analyze("r = random.Random(seed=3)\nx = r.random()").effects
    assert "randomness" in analyze("rng = np.random.default_rng()\nx = rng.normal()").effects


def test_drawing_from_a_generator_changes_it_so_a_rebuild_replays_earlier_draws() -> None:
    import random
    from dataclasses import replace

    from loom_jupyter.lineage import execution_record, plan_rebuild

    namespace: dict[str, object] = {"random": random}
    cells = ["gen = random.Random(5)", "first = gen.random()", "second = gen.random()"]
    records = []
    for n, code in enumerate(cells, 1):
        exec(code, namespace)
        made = execution_record(
            code, source="cell", changed=(), namespace=namespace, duration_s=0.1
        )
        records.append(replace(made, id=n))
    assert records[1].mutates == ("gen",)  # the draw advanced the generator
    assert [s.code for s in plan_rebuild(records, ["second"]).steps] == cells  # same draw again
    rows = execution_record(
        "picked = rows.sample()", source="cell", changed=(), namespace={"rows": [1]}, duration_s=0
    )
    assert rows.mutates == ()  # .sample() of something that is no generator changes nothing
