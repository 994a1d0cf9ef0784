"""fairviz: pure computation and figure building for visual fairness exploration (no Streamlit inside)."""
from fairviz.version import __version__
from fairviz.data import ColumnMapping, DataError, Predictions, build_predictions, guess_mapping, load_predictions, read_table

__all__ = ["ColumnMapping", "DataError", "Predictions", "build_predictions", "guess_mapping", "load_predictions",
           "read_table"]


def __getattr__(name):
    """``fairviz.audit``: the Python API (``fairviz.report.api.audit``), imported on first use only."""
    if name == "audit":
        from fairviz.report.api import audit
        return audit
    raise AttributeError(f"module 'fairviz' has no attribute {name!r}")
