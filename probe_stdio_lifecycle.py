"""Run the probe from a checkout: the same command as the installed probe-stdio-lifecycle."""

from stdio_probe.cli.start import main

if __name__ == "__main__":
    main()
