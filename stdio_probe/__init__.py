"""Diagnostic probe for lifecycle defects of the MCP Python SDK over stdio."""

__version__ = "0.2.0"
