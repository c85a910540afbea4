"""Generated bad input: seeded mutations of the presets and of command lines.

Every case is bad by construction (a value no field accepts, a key no table has, a flag
value no flag takes), so each must end with exit status 2, exactly one line on stderr, and
the existing output files untouched with nothing new beside them. The generated cases run
in this process through ``tumble.cli.core.main`` (fast); the heavy ones, and a sample of the
generated ones, also run in one child process under a 3 GB address-space limit and a
generous timeout, which bounds their memory and time.
"""

import contextlib
import copy
import io
import json
import random
import subprocess
import sys
import time

import pytest
from conftest import Ran, refused
import tomli_w

from tumble.cli.core import main
from tumble.scenario import preset_names
from tumble.scenario.files import PRESETS_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SEED = 20261124
N_FILES = 150
N_COMMANDS = 150
#: the child's address space (bytes): a refused input must never need more
CHILD_MEMORY = 3 * 2**30
#: the child's time for all its cases (s): generous, a hang is what it catches
CHILD_TIMEOUT = 300
PRECIOUS = "precious\n"

#: presets whose body is analytic (a mesh preset reads its mesh file first: slower, and
#: meshes are tested in test_meshes.py)
PRESETS = [name for name in preset_names() if 'shape = "mesh"' not in (PRESETS_DIR / f"{name}.toml").read_text()]

# ------------------------------------------------------------------ scenario files

#: no number field takes any of these
BAD_NUMBERS = [float("nan"), float("inf"), float("-inf"), 1e101, -1e101, 10**400, "x", True, [1.0],
               {"a": 1.0}, "x" * 300_000]
#: more that break a field's own rule
BAD_FOR = {
    ("body", "mass"): [-1.0, 0.0], ("body", "size"): [-1.0, 0.0],
    ("solver", "dt"): [-1.0, 0.0, 1e-300, 1e99], ("solver", "duration"): [-1.0, 0.0, 1e99],
    ("solver", "rtol"): [0.0, 1e-300], ("solver", "atol"): [0.0, -1.0],
    ("initial", "angular_velocity"): [2e6],
}
BAD_STRINGS = {"shape": "sphere", "integrator": "leapfrog", "kind": "push", "frame": "space", "unit": "inch",
               "reorthonormalize": "qr"}
REQUIRED = [("body",), ("body", "shape"), ("body", "mass"), ("body", "size")]
TEXT_MUTATIONS = [
    lambda r: "zz = " + "[" * r.choice([33, 100, 1000, 5000]) + "]" * 5000 + "\n",
    lambda r: "zz = " + "{a = " * (d := r.choice([33, 500, 3000])) + "1" + "}" * d + "\n",
    lambda r: ".".join(["a"] * r.choice([33, 1000, 20000])) + " = 1\n",
    lambda r: "zz = 1" + "0" * r.choice([4300, 10000]) + "\n",
    lambda r: 'zz = "unterminated\n',
    lambda r: "= =\n",
    lambda r: "zz = 1\x00\n",
    lambda r: "[body]\n",  # a table defined twice
]


def leaves(node, path=()):
    """Every (path, value) of a parsed TOML document that is not a table or an array of tables."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, path + (key,))
    elif isinstance(node, list) and node and isinstance(node[0], dict):
        for i, value in enumerate(node):
            yield from leaves(value, path + (i,))
    else:
        yield path, node
        if isinstance(node, list):
            for i, value in enumerate(node):
                yield path + (i,), value


def put(doc, path, value):
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def field_of(path):
    """(table, key) of a leaf, list indices and load numbers left out."""
    names = [p for p in path if isinstance(p, str)]
    return tuple(names[:2]) if names[0] != "loads" else ("loads", names[-1])


#: the kinds of mutation, "value" weighted as the most varied
MUTATION_KINDS = ["value", "value", "value", "key", "drop", "table", "length", "text"]


def mutate(rng: random.Random, doc: dict, kind: str | None = None, bad_value=None,
           text_mutation=None) -> tuple[str, str]:
    """(TOML text, what was done) of a scenario made bad by one mutation (of ``kind``, with
    ``bad_value`` or ``text_mutation`` when given, else drawn from ``rng``)."""
    doc = copy.deepcopy(doc)
    kind = kind or rng.choice(MUTATION_KINDS)
    if kind == "value" and bad_value is not None:
        put(doc, ("body", "mass"), bad_value)
        return tomli_w.dumps(doc), f"body.mass = {str(bad_value)[:20]}"
    if kind == "value":
        path, value = rng.choice([(p, v) for p, v in leaves(doc)
                                  if not isinstance(v, list) and p[0] not in ("name", "description")])
        if isinstance(value, str):
            bad = rng.choice([BAD_STRINGS.get(path[-1], 1.0), 1.0])
        elif isinstance(value, bool):
            bad = "yes"
        else:
            bad = rng.choice(BAD_NUMBERS + BAD_FOR.get(field_of(path), []))
        put(doc, path, bad)
        return tomli_w.dumps(doc), f"{'.'.join(map(str, path))} = {str(bad)[:20]}"
    if kind == "key":
        tables = [p for p, _ in [((), doc)] + [((k,), v) for k, v in doc.items() if isinstance(v, dict)]]
        where = rng.choice(tables)
        (doc if not where else doc[where[0]])["colour"] = "red"
        return tomli_w.dumps(doc), f"unknown key in {where or 'top'}"
    if kind == "drop":
        path = rng.choice([p for p in REQUIRED if len(p) == 1 or p[-1] in doc["body"]])
        node = doc if len(path) == 1 else doc["body"]
        del node[path[-1]]
        return tomli_w.dumps(doc), f"no {'.'.join(path)}"
    if kind == "table":
        key = rng.choice([k for k in ("body", "initial", "world", "solver") if k in doc] + ["loads"])
        doc[key] = rng.choice([1.0, "x", [1.0]])
        return tomli_w.dumps(doc), f"{key} is not a table"
    if kind == "length":
        path, value = rng.choice([(p, v) for p, v in leaves(doc) if isinstance(v, list)])
        put(doc, path, value + [1.0] if rng.random() < 0.5 and len(value) < 6 else value[:-1])
        return tomli_w.dumps(doc), f"{'.'.join(map(str, path))} of another length"
    text = (text_mutation or rng.choice(TEXT_MUTATIONS))(rng)
    return text + tomli_w.dumps(doc), f"text: {text[:20]!r}"


def file_cases():
    rng = random.Random(SEED)
    docs = {name: tomllib.loads((PRESETS_DIR / f"{name}.toml").read_text()) for name in PRESETS}
    commands = [["inspect", "{f}"], ["simulate", "{f}", "--duration", "0.01", "--out", "X.csv"],
                ["stability", "{f}", "--directions", "10", "--out", "X.npz"],
                ["export", "{f}", "--duration", "0.1", "--out", "X.csv"]]
    # every kind of mutation, every text mutation and the non-finite and too-large numbers
    # once each, whatever the presets and the seed; then random ones up to N_FILES
    forced = ([{"kind": kind} for kind in sorted(set(MUTATION_KINDS) - {"text"})]
              + [{"kind": "text", "text_mutation": m} for m in TEXT_MUTATIONS]
              + [{"kind": "value", "bad_value": v} for v in (float("nan"), 1e101)])
    cases = []
    for k in range(N_FILES):
        name = rng.choice(PRESETS)
        text, what = mutate(rng, docs[name], **(forced[k] if k < len(forced) else {}))
        cases.append((f"{k:03d} {name}: {what}", text, rng.choice(commands)))
    return cases


# ------------------------------------------------------------------ command lines

#: no number flag takes any of these
BAD_NUMBER_TEXTS = ["1_000", "\u0661\u0660", "\uff11", "1e300", "nan", "inf", "-inf", "Infinity", "", " 1", "1 ",
                    "0x10", "1e", "1.2.3", "+-1", "-1", "1e5000", "x" * 300_000, "1/2", "1,5"]
BAD_OUTS = {".csv": ["/proc/X.csv", "X.csv/", "a" * 300 + ".csv", "nodir/X.csv", "X.txt", ".", "", "/", "d" * 5000],
            ".npz": ["/proc/X.npz", "X.npz/", "a" * 300 + ".npz", "nodir/X.npz", "X.csv", "."]}
BASES = {
    "simulate": (["simulate", "boxes-complex", "--duration", "0.01", "--out", "X.csv"],
                 {"--dt": [], "--duration": [], "--sample": ["0.0005", "1e-12"]}),
    "stability": (["stability", "t-handle", "--directions", "10", "--duration", "1", "--out", "X.npz"],
                  {"--directions": ["0", "2.5", "10000000"], "--duration": ["1e9"]}),
    "export": (["export", "t-handle", "--duration", "0.1", "--out", "X.csv"],
               {"--fps": ["0", "241", "2.5"], "--duration": ["1e9"], "--speed": ["0", "1000"], "--dt": ["1e-300"],
                "--start": ["1e9"]}),
    "bench": (["bench", "boxes-simple", "--integrators", "rk4", "--dt", "0.01"], {"--dt": ["1e-9", "100"]}),
    "inspect": (["inspect", "t-handle"], {}),
}
OTHER_BAD = {
    "--size": ["1280 x 720", "1280x", "x720", "\u0661\u0662\u0668\u0660x720", "1280x720x3", "-1280x720", "0x0",
               "1281x720", "1280x720 "],
    "--point": ["1e300,0,0", "1,2", "a,b,c", "1,,3", "nan,0,0", "1_0,0,0", "1, 2, 3"],
    "--integrator": ["RK4", "rk5", "", "x" * 300_000],
    "--overlay": ["time,,flips", "nonesuch"],
    "scenario": ["a" * 5000, "nope", "", "/", "/dev/null", "/etc/passwd", "x" * 300_000],
}


def with_flag(args, flag, value):
    args = list(args)
    if flag == "scenario":
        args[1] = value
    elif flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    return args


def command_cases():
    rng = random.Random(SEED + 1)
    cases = []
    for k in range(N_COMMANDS):
        command = rng.choice(list(BASES))
        args, numbers = BASES[command]
        choices = [(flag, BAD_NUMBER_TEXTS + extra) for flag, extra in numbers.items()]
        choices.append(("scenario", OTHER_BAD["scenario"]))
        if "--out" in args:
            choices.append(("--out", BAD_OUTS[".npz" if command == "stability" else ".csv"]))
        if command == "export":
            choices += [(flag, OTHER_BAD[flag]) for flag in ("--size", "--integrator", "--overlay")]
        if command == "simulate":
            choices += [("--point", OTHER_BAD["--point"]), ("--integrator", OTHER_BAD["--integrator"])]
            args = args + ["--outputs", "Position"]
        for _ in range(rng.choice([1, 1, 2])):  # one bad flag, sometimes two
            flag, values = rng.choice(choices)
            args = with_flag(args, flag, rng.choice(values))
        cases.append((f"{k:03d} " + " ".join(a if len(a) < 30 else a[:12] + "..." for a in args), args))
    return cases


# ------------------------------------------------------------------ in this process


def run_in_process(args):
    """(exit status, stderr lines, seconds) of ``tumble ARGS`` run by tumble.cli.core.main."""
    err, out = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(args)
    return status, err.getvalue().splitlines(), time.perf_counter() - t0


def check_case(folder, args):
    for name in ("X.csv", "X.npz"):
        (folder / name).write_text(PRECIOUS)
    before = sorted(p.name for p in folder.iterdir())
    status, lines, seconds = run_in_process(args)
    line = refused(Ran(status, "", "\n".join(lines)))
    assert line.startswith("tumble: error: ") and len(line) < 1200, line[:300]
    assert all((folder / name).read_text() == PRECIOUS for name in ("X.csv", "X.npz"))
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing new, no temporary left
    assert seconds < 60  # generous: refusals come before any work


FILE_CASES = file_cases()
COMMAND_CASES = command_cases()


@pytest.mark.parametrize("what,text,command", FILE_CASES, ids=[c[0][:60] for c in FILE_CASES])
def test_a_mutated_scenario_file_is_refused_on_one_line(tmp_path, monkeypatch, what, text, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(text, encoding="utf-8")
    check_case(tmp_path, [a.replace("{f}", "bad.toml") for a in command])


@pytest.mark.parametrize("what,args", COMMAND_CASES, ids=[c[0][:60] for c in COMMAND_CASES])
def test_a_bad_command_line_is_refused_on_one_line(tmp_path, monkeypatch, what, args):
    monkeypatch.chdir(tmp_path)
    check_case(tmp_path, args)


def test_the_generator_makes_every_kind_of_case():
    """The seed covers every mutation kind and every command (a change of seed still must)."""
    whats = " ".join(c[0] for c in FILE_CASES)
    for word in ("unknown key", "no body", "is not a table", "of another length", "text: 'zz = [[[",
                 "text: 'zz = {a = ", "text: 'a.a.a", "= nan", "= 1e+101"):
        assert word in whats, word
    assert {c[1][0] for c in COMMAND_CASES} == set(BASES)


# ------------------------------------------------------------------ in a child, memory and time bounded

CHILD = r"""
import contextlib, io, json, os, resource, sys, time
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.chdir(sys.argv[2])
from tumble.cli.core import main
for args in json.load(sys.stdin):
    for name in ("X.csv", "X.npz"):
        with open(name, "w") as fh:
            fh.write("precious\n")
    err, out = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(args)
    files = sorted(os.listdir("."))
    untouched = all(open(name).read() == "precious\n" for name in ("X.csv", "X.npz"))
    print(json.dumps({"args": [a[:40] for a in args], "status": status, "stderr": err.getvalue().splitlines(),
                      "seconds": time.perf_counter() - t0, "files": files, "untouched": untouched}), flush=True)
"""

#: the findings that took minutes or gigabytes, and the heaviest generated shapes
HEAVY = [
    ["simulate", "boxes-complex", "--duration", "0.1", "--dt", "1e-12", "--sample", "0.1", "--out", "X.csv"],
    ["simulate", "boxes-complex", "--duration", "1e6", "--sample", "1e5", "--out", "X.csv"],
    ["simulate", "boxes-complex", "--integrator", "dop853", "--dt", "1e-9", "--sample", "0.05", "--out", "X.csv"],
    ["simulate", "boxes-complex", "--integrator", "exact", "--duration", "0.06", "--sample", "3e-9", "--out", "X.csv"],
    ["simulate", "boxes-complex", "--duration", "1e100", "--sample", "1e99", "--out", "X.csv"],
    ["export", "t-handle", "--dt", "1e-9", "--out", "X.csv"],
    ["export", "t-handle", "--dt", "1e-300", "--out", "X.csv"],
    ["export", "t-handle", "--speed", "100", "--fps", "1", "--duration", "36000", "--out", "X.csv"],
    ["stability", "t-handle", "--directions", "10", "--duration", "1e6", "--out", "X.npz"],
    ["stability", "t-handle", "--directions", "10", "--duration", "1e300", "--out", "X.npz"],
    ["stability", "t-handle", "--directions", "1000000", "--duration", "1", "--out", "X.npz"],
    ["export", "long.toml", "--speed", "2.7", "--fps", "1", "--duration", "36000", "--out", "X.csv"],
    ["bench", "boxes-simple", "--dt", "1e-9"],
    ["inspect", "a" * 5000],
    ["simulate", "boxes-complex", "--out", "/proc/X.csv"],
]
HEAVY_TEXTS = {
    "arrays.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n",
    "tables.toml": "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "dotted.toml": ".".join(["a"] * 20000) + " = 1\n",
    "digits.toml": "x = 1" + "0" * 100_000 + "\n",
    "every.toml": '[body]\nshape = "box"\nmass = 1.0\nsize = [1.0, 2.0, 3.0]\n[solver]\n'
                  'integrator = "rotmat-euler"\nreorthonormalize_every = 1' + "0" * 400 + "\n",
    "huge.toml": "x = [" + "1.0, " * 400_000 + "]\n",
}


def test_heavy_and_sampled_cases_stay_within_memory_and_time(tmp_path, root):
    for name, text in HEAVY_TEXTS.items():
        (tmp_path / name).write_text(text)
    # a legitimate scenario of 1e8 steps: an export of 36000 frames 2.7 s apart would keep
    # 9.7 million samples of it
    (tmp_path / "long.toml").write_text('[body]\nshape = "box"\nmass = 1.0\nsize = [1.0, 2.0, 3.0]\n'
                                        "[solver]\ndt = 0.001\nduration = 1e5\n")
    cases = HEAVY + [["simulate", name, "--out", "X.csv"] for name in HEAVY_TEXTS]
    for _, text, command in FILE_CASES[::10]:  # a sample of the generated files, by their own names
        name = f"gen{len(cases)}.toml"
        (tmp_path / name).write_text(text, encoding="utf-8")
        cases.append([a.replace("{f}", name) for a in command])
    cases += [args for _, args in COMMAND_CASES[::10]]
    expected_files = sorted([p.name for p in tmp_path.iterdir()] + ["X.csv", "X.npz"])
    res = subprocess.run([sys.executable, "-c", CHILD, str(CHILD_MEMORY), str(tmp_path)], cwd=root,
                         input=json.dumps(cases), capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    results = [json.loads(line) for line in res.stdout.splitlines()]
    assert res.returncode == 0 and len(results) == len(cases), res.stderr[-2000:]
    for r in results:
        assert r["status"] == 2 and len(r["stderr"]) == 1, r
        assert r["untouched"] and r["files"] == expected_files, r
