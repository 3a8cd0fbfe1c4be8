"""The package's version, importable without the public facade (``rankscope/__init__``)."""

__version__ = "0.1.0"
