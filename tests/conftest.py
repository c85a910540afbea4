"""Shared test configuration: the repository root and the preset folder."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def simulate_refuses(tmp_path):
    """``check(toml_text, field)``: ``tumble simulate`` of that file, run in a child, exits 2
    with one line ``FIELD must ... got ...`` on stderr and writes no output."""
    import subprocess
    import sys

    def check(text: str, field: str) -> None:
        path = tmp_path / "bad.toml"
        path.write_text(text)
        out = tmp_path / "x.csv"
        res = subprocess.run([sys.executable, "-m", "app", "simulate", str(path), "--out", str(out)],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert res.returncode == 2, res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and field + " must " in lines[0] and "got" in lines[0], res.stderr
        assert not out.exists()

    return check
