"""Every command of the README's command table is run by some test through the command line
(in a child or through ``main``), so that no published command goes untested."""

from __future__ import annotations

import re

from conftest import ROOT

#: how the tests run the command line: the shared helpers, a test's own wrapper of them, or main
CALL = r"""(?:\btumble|\brun_tumble|\btumble_here\(capsys,|\bRunning|\bcli|\btumble_headless|\bmain\(\[)\(?\s*"{name}"{rest}"""


def readme_commands() -> list[tuple[str, ...]]:
    """(command, *flags that make it another command) of each table row of the README that begins
    with a command (the command table, and the rows of the figures' tables that name theirs)."""
    text = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `tumble ([a-z-]+)((?: --gui)?)", text, re.M)
    return list(dict.fromkeys((name, *flags.split()) for name, flags in rows))


def test_the_table_is_found_and_lists_every_command():
    commands = readme_commands()
    names = {c[0] for c in commands}
    assert {"gui", "simulate", "export", "fit", "live", "phyphox-replay", "live-bench", "fit-bench"} <= names
    assert ("bench", "--gui") in commands


def test_every_command_of_the_readme_is_run_by_a_test():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in ROOT.joinpath("tests").rglob("test_*.py"))
    missing = []
    for name, *flags in readme_commands():
        rest = "".join(rf',\s*"{flag}"' for flag in flags)
        if not re.search(CALL.format(name=re.escape(name), rest=rest), sources):
            missing.append(" ".join(["tumble", name, *flags]))
    assert missing == [], f"no test runs {missing}"
