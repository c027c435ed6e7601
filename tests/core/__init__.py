"""The core on real processes: spawning, reaping, pidfds, the fork server, proofs, secrets."""
