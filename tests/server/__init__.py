"""The server subject: checks S1-S14 on fixtures, real servers and the README's table."""
