"""The Python API, the one front door: ``import tumble`` re-exports the names this package's ``__init__`` lists.
The functions (functions), the types they hand back (types), the drawing (draw), the argument rules the command line shares (arguments)."""

from .functions import (  # noqa: F401
    DivergenceError,
    Fit,
    ParameterError,
    Run,
    Scenario,
    __all__,
    __version__,
    audit,
    audit_trajectory,
    export,
    fit,
    inspect,
    load,
    predict,
    presets,
    samples,
    render,
    replay,
    show,
    simulate,
    stability,
)
