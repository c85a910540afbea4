"""The API of an installed wheel: ``import tumble`` and ``python -m tumble`` from a folder that
is not the repository give the same columns, and no top-level ``app`` is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
from conftest import ROOT, tumble


def test_the_installed_wheel_offers_the_api_and_the_command(tmp_path):
    dist, target, work = tmp_path / "dist", tmp_path / "site", tmp_path / "work"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w",
                    str(dist), str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("tumble-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--target", str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target)}
    (work / "app.py").write_text("raise SystemExit('a user file named app.py was imported')\n")
    code = textwrap.dedent("""
        import importlib.util, sys
        import tumble
        assert tumble.__file__.startswith(sys.argv[1]), tumble.__file__
        assert importlib.util.find_spec("app").origin.endswith("work/app.py")  # only the user's own
        tumble.simulate("book", duration=1.0).to_csv("api.csv")
    """)
    done = subprocess.run([sys.executable, "-c", code, str(target)], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    done = tumble("simulate", "book", "--duration=1", "--out", "cli.csv", cwd=work, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    api = np.loadtxt(work / "api.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(api, np.loadtxt(work / "cli.csv", delimiter=",", skiprows=1))
    assert not (target / "app").exists()
