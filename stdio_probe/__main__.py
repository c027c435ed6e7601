"""python -m stdio_probe: the same command as probe-stdio-lifecycle."""

from stdio_probe.cli.start import main

main()
