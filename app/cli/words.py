"""What every command says and returns when Ctrl+C ends it (read by :mod:`.core` and, while the
commands' modules load, by the package's ``main``)."""

#: what Ctrl+C prints, and the exit status (what a shell reports: 128 + SIGINT)
INTERRUPTED_LINE = "tumble: interrupted, nothing written"
EXIT_INTERRUPTED = 130
