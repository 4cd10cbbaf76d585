"""Running scenarios on a device: worker processes, timeouts, crash capture, parallelism."""
