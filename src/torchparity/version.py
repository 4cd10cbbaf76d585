"""The version of torchparity (its own module, so that any layer can read it without
importing the package's top, which imports ``app``)."""

__version__ = "0.1.0"
