"""python -m stdio_probe: the same command as probe-stdio-lifecycle."""

from stdio_probe.start import main

main()
