"""The colour schemes: WCAG contrast of every text and line colour against its background in both
schemes, the mapping of every drawn colour to the scheme in use, and ``--colours``' refusal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, refused, tumble_here

from tumble.scene import palette
from tumble.scene.palette import AA_TEXT, DARK, PROJECTOR, ROLES, SCHEMES, contrast_ratio, contrasts

#: the dark scheme's roles below AA on purpose: the floor grid is a faint reference under the body
#: (2.3:1; at 4.5:1 it would compete with the arrows), not information a class must read
DARK_FAINT = {"grid"}


@pytest.fixture(autouse=True)
def dark_again():
    palette.use("dark")
    yield
    palette.use("dark")


def test_contrast_ratio_follows_wcag():
    """The WCAG 2.1 definition: 21:1 black on white, 1:1 a colour on itself, order-free; #777 on
    white just under AA (4.48), #767676 the lightest grey that passes (4.54)."""
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#000000") == pytest.approx(21.0)
    assert contrast_ratio("#3d7bd9", "#3d7bd9") == pytest.approx(1.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


def test_every_scheme_names_every_role():
    for scheme in SCHEMES.values():
        assert set(scheme.roles) == set(ROLES), scheme.name
        assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in scheme.roles.values()), scheme.name


def test_projector_text_and_lines_pass_aa():
    rows = contrasts(PROJECTOR)
    assert {kind for _, kind, _ in rows} == {"text", "line"}
    failing = [(role, round(ratio, 2)) for role, _kind, ratio in rows if ratio < AA_TEXT]
    assert failing == []


def test_dark_text_passes_aa_and_its_lines_but_the_faint_grid():
    rows = contrasts(DARK)
    assert [(r, round(c, 2)) for r, kind, c in rows if kind == "text" and c < AA_TEXT] == []
    assert {r for r, kind, c in rows if kind == "line" and c < AA_TEXT} == DARK_FAINT


def test_the_projector_scheme_is_light_and_its_text_dark():
    from tumble.scene.palette import relative_luminance

    assert PROJECTOR.light and not DARK.light
    for role in ("background", "window", "base", "overlay"):
        assert relative_luminance(PROJECTOR.roles[role]) > 0.8, role
    for role in ("text", "overlay_text"):
        assert relative_luminance(PROJECTOR.roles[role]) < 0.05, role


def _drawn_colours() -> dict:
    """Every colour declared for drawing a line, a curve, an arrow or a key entry (what -> dark colour)."""
    from tumble.scene import body_scene, poinsot, style
    from tumble.scene.compare import SIDE_COLORS
    from tumble.scene.engines import ENGINE_COLORS
    from tumble.views.plots import COMPARE_PLOTS, FLIP_COLOR, KICK_COLOR, MAIN_PLOTS

    drawn = {f"style.{name}": getattr(style, name) for name in
             ("OMEGA_COLOR", "L_COLOR", "TRAIL_COLOR", "PATH_COLOR", "TEXT_COLOR")}
    drawn.update({f"axis {k}": c for k, c in enumerate(style.AXIS_HEX)})
    drawn.update({f"key: {label}": c for label, c in body_scene.LEGEND + poinsot.LEGEND})
    drawn.update({f"curve: {c.label}": c.color for spec in (MAIN_PLOTS, COMPARE_PLOTS)
                  for row in spec.rows for c in row.curves})
    drawn.update({"flip marker": FLIP_COLOR, "kick marker": KICK_COLOR})
    drawn.update({f"side {k}": c for k, c in enumerate(SIDE_COLORS)})
    drawn.update({f"engine {k}": c for k, c in enumerate(ENGINE_COLORS)})
    return drawn


@pytest.mark.parametrize("scheme", [DARK, PROJECTOR], ids=lambda s: s.name)
def test_every_drawn_line_and_key_colour_reads_on_the_scene(scheme):
    """Each declared colour, drawn in ``scheme`` (``tone``), against the scene's background: the
    projector scheme at AA for all of them, the dark one too (its faint grid is not declared here)."""
    palette.use(scheme.name)
    low = {what: round(contrast_ratio(palette.tone(c), scheme.background), 2) for what, c in _drawn_colours().items()
           if contrast_ratio(palette.tone(c), scheme.background) < AA_TEXT}
    assert low == {}


def test_every_drawn_colour_has_a_role():
    """A colour without a role would stay dark-scheme in the projector scheme."""
    loose = {what: c for what, c in _drawn_colours().items() if palette.role_of(c) is None}
    assert loose == {}


#: literal colours in the sources that are meant to stay as they are in every scheme
FIXED_LITERALS = {
    "#000000", "#ffffff",  # the stability map's black-and-white outlines and labels over its colour image
    "#c8a165",  # the GUI bench's reference box
    "#c9d1d9",  # the scene text of older literal sites: a role (text), listed for the scan's sake below
}
#: folders whose colours are drawn on white by matplotlib already (the fit report)
LIGHT_ALREADY = ("app/throws/",)


def test_every_literal_colour_in_the_drawing_code_has_a_role():
    """Every "#rrggbb" in app/ outside the palette names a role (or an alias), so that the projector
    scheme replaces it, unless it is listed as fixed: a new literal colour fails here until it is placed."""
    loose = []
    for path in sorted((ROOT / "app").rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix not in (".py", ".html") or rel.endswith("scene/palette.py") or rel.startswith(LIGHT_ALREADY):
            continue
        for colour in re.findall(r"#[0-9a-fA-F]{6}\b", path.read_text(encoding="utf-8")):
            if colour.lower() not in FIXED_LITERALS and palette.role_of(colour) is None:
                loose.append((rel, colour))
    assert loose == []


def test_tone_and_translate():
    assert palette.tone(DARK.omega) == DARK.omega  # the default scheme draws the declared colours
    palette.use("projector")
    assert palette.tone(DARK.omega) == PROJECTOR.omega
    assert palette.tone(palette.rgb01(DARK.axis_y)) == palette.rgb01(PROJECTOR.axis_y)  # RGB stays RGB
    assert palette.tone("#123456") == "#123456"  # no role: drawn as it is (the body's faces)
    for role in ROLES:  # both ways, every role (a dark colour two roles share maps to one colour)
        back = palette.translate(palette.translate(DARK.roles[role], DARK, PROJECTOR), PROJECTOR, DARK)
        assert palette.role_of(back) == palette.role_of(DARK.roles[role]), role
    sheet = "QLabel { background: rgba(22, 25, 30, 190); color: #c9d1d9; }"
    assert palette.translate_text(sheet) == "QLabel { background: rgba(255, 255, 255, 190); color: #14181d; }"


@pytest.mark.parametrize("source, target", [(DARK, PROJECTOR), (PROJECTOR, DARK)], ids=["dark", "projector"])
def test_roles_share_a_colour_in_one_scheme_only_if_they_do_in_the_other(source, target):
    """Two roles with one colour (the path and muted text) must agree in the other scheme too, or a
    colour switched there and back would depend on which role is found first (engine 3 coming back
    as the body's y axis)."""
    by_colour: dict = {}
    for role, colour in source.roles.items():
        by_colour.setdefault(colour, set()).add(target.roles[role])
    assert {c: s for c, s in by_colour.items() if len(s) > 1} == {}


def test_check_scheme():
    assert palette.check_scheme(" Projector ") == "projector"
    with pytest.raises(ValueError, match=r"--colours must be one of dark, projector, got 'pink'"):
        palette.check_scheme("pink")


@pytest.mark.parametrize("command", [["gui", "t-handle"], ["replay", "recording.csv"],
                                     ["export", "t-handle", "--out", "x.mp4"]])
@pytest.mark.parametrize("value", ["pink", "", "dark,projector"])
def test_a_bad_colours_value_is_refused_in_one_line(capsys, tmp_path, command, value):
    command = [str(tmp_path / a) if a.endswith((".csv", ".mp4")) else a for a in command]
    line = refused(tumble_here(capsys, *command, "--colours", value), "--colours", "dark, projector",
                   unwritten=[tmp_path / "x.mp4"])
    assert repr(value) in line
    assert palette.current() is DARK


def test_help_names_the_flag(capsys):
    for command in ("gui", "replay", "export"):
        with pytest.raises(SystemExit):
            tumble_here(capsys, command, "--help")
        assert "--colours" in capsys.readouterr().out, command


def test_the_export_child_is_told_the_scheme():
    """The window's export dialog runs ``tumble export`` in a child: it draws in the window's scheme."""
    from tumble.export.protocol import command
    from tumble.export.settings import ExportSettings

    settings = ExportSettings(out=Path("x.mp4"))
    assert "--colours" not in command("s.toml", settings)
    palette.use("projector")
    argv = command("s.toml", settings)
    assert argv[argv.index("--colours") + 1] == "projector"
