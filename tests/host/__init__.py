"""The host subject: checks H1-H11 on fixture hosts, real hosts and the README's table."""
