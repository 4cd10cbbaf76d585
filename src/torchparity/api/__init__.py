"""API analysis: resolve dotted names, classify implementations, record operator footprints."""
