"""The package version, shared by ``whileai.__version__`` and the native-module check."""

__version__ = "0.1.0"
