"""The engines an audit can run, by name: every ``*_adapter.py`` module of this package is one engine.

An adapter module holds ``ENGINE`` (the name users type), ``SETTINGS`` (setting name -> one line,
the first the engine's default), ``PACKAGE`` (the module its engine imports as, None for Tumble's
own), ``ORDER`` (its place in lists) and two functions: ``version()`` and ``run(start, setting,
dt, times) -> (Trajectory, settings)`` or ``(Trajectory, settings, remarks)``, ``remarks`` a dict
that may say ``not_scored`` (why the run must not be scored: the engine changed the body) and
``notes`` (one-line remarks). The adapter modules import their engine only inside
those functions, so reading this registry imports no engine; adding an engine is one file.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import lru_cache

from ..physics.errors import ParameterError

#: what a user runs to get every engine the audit knows
INSTALL_LINE = 'pip install "tumble[engines]"'
#: the Tumble integrator ``all`` adds to the engines' defaults
TUMBLE_DEFAULT = "tumble:rk4"


@lru_cache(maxsize=None)
def adapters() -> dict:
    """Engine name -> adapter module, in :data:`ORDER`."""
    found = []
    for info in pkgutil.iter_modules(_package_path()):
        if info.name.endswith("_adapter"):
            module = importlib.import_module(f"{__package__}.{info.name}")
            found.append(module)
    found.sort(key=lambda m: (m.ORDER, m.ENGINE))
    return {m.ENGINE: m for m in found}


def _package_path():
    return importlib.import_module(__package__).__path__


def known() -> list[str]:
    """Every ``ENGINE[:SETTING]`` name, defaults as the bare engine name."""
    names = []
    for engine, module in adapters().items():
        settings = list(module.SETTINGS)
        if module.PACKAGE is not None:
            names.append(engine)
            names += [f"{engine}:{s}" for s in settings[1:]]
        else:
            names += [f"{engine}:{s}" for s in settings]
    return names


def installed(engine: str) -> bool:
    """True when ``engine``'s package can be imported (looked up, not imported)."""
    package = adapters()[engine].PACKAGE
    if package is None:
        return True
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def install_hint(engine: str) -> str:
    """The one line saying how to get ``engine``."""
    return f"{engine} is not installed: {INSTALL_LINE}"


def canonical(engine: str, setting: str) -> str:
    """``engine`` for its default setting, else ``engine:setting`` (Tumble's always named)."""
    module = adapters()[engine]
    if module.PACKAGE is not None and setting == next(iter(module.SETTINGS)):
        return engine
    return f"{engine}:{setting}"


def parse(text, flag: str = "--engines", check_installed: bool = True) -> list[tuple[str, str]]:
    """``(engine, setting)`` pairs from ``"all"`` or ``ENGINE[:SETTING],...`` (or a list of such
    names), in the order given, duplicates dropped. ``all``: every installed engine's default
    plus :data:`TUMBLE_DEFAULT`. Raises :class:`ParameterError` naming ``flag``: for an unknown
    name (listing the known ones), and for an engine not installed (naming the install line)."""
    if text is None:
        text = "all"
    items = [str(x) for x in text] if isinstance(text, (list, tuple)) else str(text).split(",")
    items = [x.strip() for x in items]
    pairs: list[tuple[str, str]] = []
    registry = adapters()
    for item in items:
        if item == "all":
            for engine, module in registry.items():
                if module.PACKAGE is not None and installed(engine):
                    pairs.append((engine, next(iter(module.SETTINGS))))
            engine, setting = TUMBLE_DEFAULT.split(":")
            pairs.append((engine, setting))
            continue
        engine, _, setting = item.partition(":")
        module = registry.get(engine)
        if module is None or (setting and setting not in module.SETTINGS) or (not setting and module.PACKAGE is None):
            raise ParameterError(flag, item, "name engines among " + ", ".join(known()) + " or all")
        setting = setting or next(iter(module.SETTINGS))
        if check_installed and not installed(engine):
            raise ParameterError(flag, item, f"name an installed engine ({install_hint(engine)})")
        pairs.append((engine, setting))
    unique = []
    for pair in pairs:
        if pair not in unique:
            unique.append(pair)
    if not unique:
        raise ParameterError(flag, text, "name at least one engine")
    return unique


def run(engine: str, setting: str, start, dt: float, times):
    """(trajectory, settings, version, remarks) of one engine setting (see the module docstring):
    the engine's output to file descriptors 1 and 2 captured (:mod:`.quiet`) and its lines made
    ``remarks["notes"]``; numpy's warnings of a run gone non-finite are silenced (the audit
    reports such a run itself)."""
    import warnings

    import numpy as np

    from . import quiet

    module = adapters()[engine]
    printed: list[str] = []
    try:
        with quiet.captured(printed), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            result = module.run(start, setting, dt, times)
            version = module.version()
    except (ParameterError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - the engine refused the body or failed: one line naming it
        text = str(err).strip().splitlines()
        raise ParameterError("--engines", canonical(engine, setting),
                             f"run this body (the engine failed: {err.__class__.__name__}"
                             f"{': ' + text[0][:200] if text else ''})") from None
    trajectory, settings = result[:2]
    remarks = dict(result[2]) if len(result) > 2 else {}
    remarks["notes"] = list(remarks.get("notes", ())) + quiet.notes(engine, printed)
    return trajectory, settings, version, remarks


def fixed_step(engine: str, setting: str) -> bool:
    """True when the setting steps exactly ``dt`` (samples must be whole multiples of it)."""
    return adapters()[engine].fixed_step(setting)
