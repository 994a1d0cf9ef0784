"""The one place the version is written (pyproject.toml reads it; fairviz.__version__ re-exports it)."""
__version__ = "0.1.0"
