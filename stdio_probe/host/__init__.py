"""The third subject, any stdio host: its checks (H1-H11) and the session that plays the server."""
