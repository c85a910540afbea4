"""Numbers rounded to what they mean (tumble.api.tables): a standard error keeps two
significant digits and its value the same decimal place; a time keeps its sample spacing's
place. A fit's HTML table shows its ratios by that rule, and a run's HTML says what it is."""

from __future__ import annotations

import base64
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import tumble
from tumble.api.tables import MISSING, decimal_place, significant, to_spacing, with_error
from tumble.throws.benches import synthetic as syn


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def two_digits(error_text: str, place: int) -> bool:
    """Whether ``error_text`` is two significant digits at the decimal place ``10**place``
    (10 to 99 units of it: 0.000068, 0.10, 1200)."""
    return 10 <= round(float(error_text) / 10.0 ** place) <= 99


@pytest.mark.parametrize("value, error, expected", [
    (0.30001134, 6.82202555e-05, ("0.300011", "0.000068")),   # a fitted ratio
    (14.146412, 0.0171635, ("14.146", "0.017")),               # a launch rate to its residual
    (2.71828, 0.0996, ("2.72", "0.10")),                        # the error's rounding carries a digit
    (123456.0, 1234.0, ("123500", "1200")),                     # an error above 1 rounds the value's integer
    (-0.00001, 0.0042, ("0.0000", "0.0042")),                   # no negative zero
    (0.75, 0.0, ("0.7500", MISSING)),                           # no error: four significant digits
    (0.123456, float("nan"), ("0.1235", MISSING)),
    (None, 0.1, (MISSING, MISSING)),
])
def test_the_error_keeps_two_digits_and_the_value_its_place(value, error, expected):
    assert with_error(value, error) == expected


@pytest.mark.parametrize("value, spacing, expected", [
    (0.27814124, 0.0100595, "0.28"),   # 100 Hz: hundredths
    (0.27814124, 0.0025, "0.278"),     # 400 Hz: thousandths
    (10.604349, 0.01, "10.60"),
    (None, 0.01, MISSING),             # no flip time
])
def test_a_time_keeps_the_place_of_its_sample_spacing(value, spacing, expected):
    assert to_spacing(value, spacing) == expected


def test_significant_digits_of_plain_figures():
    assert significant(0.0012132) == "0.0012"
    assert significant(0.08440473) == "0.084"
    assert significant(3.2e-13) == "3.2e-13"
    assert significant(0.0) == "0"
    assert significant(float("inf")) == MISSING


def test_the_rule_on_many_random_numbers():
    """Over values and errors spread across twelve decades: the error written keeps two
    significant digits, the value the same number of decimals, and each is within half a unit
    of its last digit of the number given."""
    rng = np.random.default_rng(27)
    for _ in range(2000):
        error = 10.0 ** rng.uniform(-8, 3)
        value = rng.normal() * 10.0 ** rng.uniform(-4, 4)
        v, e = with_error(value, error)
        place = decimal_place(error)
        unit = 10.0 ** place
        assert two_digits(e, place), (value, error, e)
        assert decimals(v) == decimals(e) == max(0, -place), (value, error, v, e)
        assert abs(float(v) - value) <= unit / 2 * (1 + 1e-9), (value, error, v)
        assert abs(float(e) - error) <= unit / 2 * (1 + 1e-9), (value, error, e)


class Cells(HTMLParser):
    """Every table's rows of cell texts, by caption."""

    def __init__(self):
        super().__init__()
        self.tables, self._text, self._row, self._in = {}, "", None, None

    def handle_starttag(self, tag, attrs):
        if tag in ("td", "th", "caption"):
            self._in, self._text = tag, ""
        elif tag == "tr":
            self._row = []
        elif tag == "table":
            self._caption, self._rows = "", []

    def handle_data(self, data):
        if self._in:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "caption":
            self._caption = self._text
        elif tag in ("td", "th"):
            self._row.append(self._text)
        elif tag == "tr":
            self._rows.append(self._row)
        elif tag == "table":
            self.tables[self._caption] = self._rows
        if tag in ("td", "th", "caption"):
            self._in = None


def tables_of(html: str) -> dict:
    parser = Cells()
    parser.feed(html)
    return parser.tables


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A fit of a phyphox folder of 4 throws of a known body (fit-bench's kind of session)."""
    rng = np.random.default_rng(2026)
    truth = syn.Truth.rotated(2.0)
    t, w, _ = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, flight_s=(0.8, 1.2))
    session = syn.write_phyphox(tmp_path_factory.mktemp("tables") / "session", t, w)
    return tumble.fit(session, axes="fit")


def test_a_fit_shows_its_ratios_rounded_by_their_standard_errors(fitted):
    html = fitted._repr_html_()
    tables = tables_of(html)
    ratios = next(rows for caption, rows in tables.items() if caption.startswith("Inertia ratios"))
    header, rows = ratios[0], ratios[1:]
    assert header[1].startswith("ratio") and "standard error" in header[2]
    result = fitted.result
    assert len(rows) == 3
    for row, ratio, std in zip(rows[:2], result.moments[:2], result.moments_std[:2]):
        value, error = row[1], row[2]
        place = decimal_place(std)
        assert two_digits(error, place) and decimals(value) == decimals(error) == -place, row
        assert abs(float(value) - ratio) <= 10.0 ** place / 2 * (1 + 1e-9), (row, ratio)
        assert abs(float(error) - std) <= 10.0 ** place / 2 * (1 + 1e-9), (row, std)
    assert rows[2][1] == "1"  # the largest, the unit of the others
    flights = next(rows for caption, rows in tables.items() if caption.startswith("Flights"))
    assert len(flights) - 1 == len(result.flights)
    start = flights[0].index("start (s)")
    for row, flight in zip(flights[1:], result.flights):
        spacing = float(np.median(np.diff(flight.t)))  # about 10 ms: a time to hundredths of a second
        assert decimals(row[start]) == -math.floor(math.log10(spacing)), row
        assert abs(float(row[start]) - flight.start) <= 10.0 ** math.floor(math.log10(spacing)) / 2, row
    assert "Rounded to what they mean" in html


def test_a_run_says_what_it_is_and_shows_its_plot():
    run = tumble.simulate("t-handle", duration=5.0)
    html = run._repr_html_()
    assert html.startswith("<p><b>T-handle</b>: rk4")
    assert f"{len(run.flips)} flips at " in html
    rows = dict(r for r in tables_of(html)[""][1:])
    assert rows["flips (intermediate-axis reversals)"] == str(len(run.flips))
    assert rows["max relative energy drift"] == significant(run.figures["max_E_drift"])
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', html)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
