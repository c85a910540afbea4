"""The CSV writer (app/simulation/table.py): every number is the shortest decimal that reads back
to the same double, so the file is exact, and a table holding a NaN or an infinity is still
written (JSON, which orjson writes, has neither)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tumble.simulation.table import csv_rows, write_table


def _doubles(n=4000, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 12)) * np.logspace(-300, 300, 12)
    x[0] = [0.0, -0.0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.2, 1 / 3, 1e16,
            1e-7, 123456789.0, -1.0]
    return x


def _parse(text: bytes) -> np.ndarray:
    return np.array([[float(tok) for tok in line.split(",")] for line in text.decode().splitlines()])


def test_every_number_reads_back_to_the_same_double():
    x = _doubles()
    back = _parse(csv_rows(x))
    assert back.shape == x.shape
    assert np.array_equal(back.view(np.int64), x.view(np.int64))  # bit for bit, the sign of -0.0 too


def test_every_number_is_its_shortest_decimal():
    """As many significant digits as Python's repr (the shortest that round-trips), not 17."""
    x = _doubles(300)
    for line, row in zip(csv_rows(x).decode().splitlines(), x):
        for tok, value in zip(line.split(","), row):
            digits = lambda s: len(re.sub(r"e.*$", "", s).replace("-", "").replace(".", "").lstrip("0")  # noqa: E731
                                   .rstrip("0") or "0")
            assert digits(tok) == digits(repr(float(value))), (tok, repr(float(value)))
    assert csv_rows(np.array([[0.2, 1.0, 0.001]])) == b"0.2,1.0,0.001\n"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_table_holding_a_non_finite_value_is_written_exactly_too(bad):
    x = _doubles(5000)  # more than a block of rows
    x[4321, 5] = bad
    back = _parse(csv_rows(x))
    finite = np.isfinite(x)
    assert np.array_equal(back[finite], x[finite]) and np.array_equal(np.isnan(back), np.isnan(x))
    assert back[4321, 5] == bad or (np.isnan(bad) and np.isnan(back[4321, 5]))


def test_write_table_has_the_header_then_one_line_a_row(tmp_path):
    table = {"t": np.array([0.0, 0.5, 1.0]), "wx": np.array([0.2, -0.0, 1e-300])}
    path = tmp_path / "run.csv"
    write_table(path, table)
    assert path.read_text() == "t,wx\n0.0,0.2\n0.5,-0.0\n1.0,1e-300\n"
    write_table(path, {"t": np.array([])})
    assert path.read_text() == "t\n"
