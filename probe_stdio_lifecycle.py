"""Run the probe from a checkout: the same command as the installed probe-stdio-lifecycle."""

from stdio_probe.cli import entry_point

if __name__ == "__main__":
    entry_point()
