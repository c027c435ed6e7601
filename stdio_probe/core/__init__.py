"""The core every subject runs on: the run's Supervisor (spawning, reaping, pidfds), the guardian, the fork
server, /proc readings, proofs, the watch loop and the no-progress clock, the wire, the protocol eras, the
verdict rule and outcomes, the runner (one loop over any subject), the host contract."""
