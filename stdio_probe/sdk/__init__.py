"""The first subject, the MCP Python SDK: its cases (L1-L13), their drivers, environments and fixtures' logs."""
