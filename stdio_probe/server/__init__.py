"""The second subject, any stdio server: its checks (S1-S14) and the session that plays the host."""
