"""The command line, its outputs, the pytest plugin, the Action and the installed package."""
