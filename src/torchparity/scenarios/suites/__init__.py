"""Hand-written scenario suites, one module per API family. Every module here is loaded."""
