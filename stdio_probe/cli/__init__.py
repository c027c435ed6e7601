"""The command line, its entry points and the pytest plugin."""
