"""Every ``tumble`` command line in the README's code blocks runs as written, in order, in an
empty folder: a teacher copies them one by one, and each must work (issue 27, item 8).

Each code block runs in an empty folder of its own, its lines in order (a teacher who opens the
README at one section copies that section's block), and the blocks run as separate tests, side by
side under pytest-xdist. A command that opens the window runs with ``--screenshot FILE
--quit-after 2`` added; a phone's address is the only placeholder (such a line is skipped); a line
ending in ``&`` is a server that runs in the background until the block's commands are done; the
port a server is given (``--port N``) is swapped for a free one in every line of its block, so
that two runs side by side never meet on one port."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

#: a phone's address in the README (the only placeholder a command may hold)
PLACEHOLDERS = ("PHONE-ADDRESS", "192.168.")
#: the longest one command may take (s): the slowest, an exported clip, takes about 20 s here
COMMAND_TIMEOUT_S = 300
#: how long a background server gets to start listening (s)
SERVER_START_S = 5.0


def readme_blocks(text: str) -> list[list[str]]:
    """The ``tumble`` command lines of each shell code block of ``text`` that holds any, in order
    (a line continued with a backslash joined; ``a && b`` kept whole)."""
    blocks = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang not in ("", "bash", "sh", "shell", "console"):
            continue
        body = re.sub(r"\s*\\\n\s*", " ", body)
        commands = []
        for line in body.splitlines():
            line = line.strip()
            if line.startswith("$ "):
                line = line[2:]
            if re.match(r"tumble(\s|$)", line):
                commands.append(line)
        if commands:
            blocks.append(commands)
    return blocks


def readme_commands(text: str) -> list[str]:
    """The ``tumble`` command lines of the shell code blocks of ``text``, in order."""
    return [line for block in readme_blocks(text) for line in block]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ports_swapped(words: list[str], ports: dict[str, str]) -> list[str]:
    """``words`` with each port of ``ports`` (README's -> free) swapped, as ``--port N`` or ``:N``."""
    out = []
    for k, word in enumerate(words):
        if k and words[k - 1] == "--port" and word in ports:
            word = ports[word]
        for old, new in ports.items():
            word = re.sub(rf":{old}(?=\b|/|$)", f":{new}", word)
        out.append(word)
    return out


def _opens_window(words: list[str]) -> bool:
    if len(words) == 1 or words[1] == "gui" or words[1].startswith("-"):
        return "--help" not in words
    return words[1] == "replay" and "--out" not in words


def _runnable(words: list[str], index: int) -> list[str]:
    """One command of a line as the test runs it: the window screenshot added."""
    if _opens_window(words) and "--screenshot" not in words:
        words = words + ["--screenshot", f"readme-window-{index}.png", "--quit-after", "2"]
    return words


def _commands_of(line: str) -> tuple[list[list[str]], bool]:
    """The commands of a README line (``a && b``: two), comments dropped, and whether the line
    runs in the background (it ends in ``&``)."""
    tokens = shlex.split(line, comments=True)
    background = bool(tokens) and tokens[-1] == "&"
    if background:
        tokens = tokens[:-1]
    commands, current = [], []
    for token in tokens:
        if token == "&&":
            commands.append(current)
            current = []
        else:
            current.append(token)
    commands.append(current)
    return commands, background


def test_the_readme_lists_its_commands():
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 10
    assert any(c.startswith("tumble samples") for c in commands)


def test_the_parser_of_this_test_reads_a_block_as_a_reader_would():
    text = "```bash\ntumble fit a \\\n  --out b  # c\necho x\n$ tumble gui\n```\n```python\ntumble.x()\n```\n"
    assert readme_commands(text) == ["tumble fit a --out b  # c", "tumble gui"]
    assert readme_blocks(text + "```\nls\n```\n```sh\ntumble x\n```\n") == [["tumble fit a --out b  # c", "tumble gui"],
                                                                       ["tumble x"]]
    ports = {"8765": "40001"}
    assert _ports_swapped(["tumble", "serve", "--port", "8765"], ports) == ["tumble", "serve", "--port", "40001"]
    assert _ports_swapped(["tumble", "live", "http://127.0.0.1:8765", "--duration", "8765"], ports)[2:] == [
        "http://127.0.0.1:40001", "--duration", "8765"]
    assert _commands_of("tumble fit a --out b  # c") == ([["tumble", "fit", "a", "--out", "b"]], False)
    assert _commands_of("tumble a --loop &   # serves") == ([["tumble", "a", "--loop"]], True)
    assert _commands_of("tumble a && tumble gui x")[0] == [["tumble", "a"], ["tumble", "gui", "x"]]
    assert _runnable(["tumble", "gui", "t-handle"], 3)[-4:] == ["--screenshot", "readme-window-3.png", "--quit-after", "2"]


BLOCKS = readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
#: words of a command line that runs the other physics engines
ENGINE_WORDS = ("tumble audit", "--view engines")


def _block_param(k: int):
    """Block ``k`` as a test case: named by its first command, marked ``engines`` if it runs them."""
    words = BLOCKS[k][0].split("#")[0].split()
    marks = [pytest.mark.engines] if any(w in line for line in BLOCKS[k] for w in ENGINE_WORDS) else []
    return pytest.param(k, id=f"{k}-{'-'.join(words[1:3])}", marks=marks)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("block", [_block_param(k) for k, lines in enumerate(BLOCKS)  # a block of placeholders: nothing to run
                                   if not all(any(p in line for p in PLACEHOLDERS) for line in lines)])
def test_every_readme_command_runs_as_written_in_an_empty_folder(tmp_path, block):
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("TUMBLE_DEBUG", None)
    servers = []
    failures = []
    ports: dict[str, str] = {}
    start = sum(len(b) for b in BLOCKS[:block])  # a window's screenshot is numbered by its README line
    try:
        for index, line in enumerate(BLOCKS[block], start=start):
            if any(p in line for p in PLACEHOLDERS):
                continue
            commands, background = _commands_of(line)
            for command in commands:
                for k, word in enumerate(command[:-1]):
                    if word == "--port" and command[k + 1].isdigit():
                        ports.setdefault(command[k + 1], str(free_port()))
                words = _ports_swapped(_runnable(command, index), ports)
                if background:
                    server = subprocess.Popen(words, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    servers.append(server)
                    first = server.stdout.readline()  # "serving ... at http://127.0.0.1:PORT"
                    if "127.0.0.1" not in first:
                        failures.append(f"{line}: the server said {first!r}")
                    continue
                try:
                    done = subprocess.run(words, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    failures.append(f"{line}: still running after {COMMAND_TIMEOUT_S} s")
                    continue
                if done.returncode != 0:
                    failures.append(f"{line}: exit {done.returncode}: {(done.stderr or done.stdout)[-300:]}")
    finally:
        for server in servers:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
            server.stdout.close()
    assert failures == []


def test_the_readme_and_the_help_menu_explain_the_flip_in_the_same_words():
    """Help > Why does it flip? shows the text the README's teachers read, word for word."""
    text = (ROOT / "resources" / "texts" / "why-it-flips.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "### Why it flips, in plain words\n\n" + text in readme
    assert readme.index("### Why it flips") < len("\n".join(readme.splitlines()[:150]))  # a teacher's first page
