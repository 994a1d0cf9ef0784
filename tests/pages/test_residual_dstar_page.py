"""The Residual page's D* tab on an upload reduced by the engine: while the upload's bytes are kept, it offers D*
with every column of the file (one query on the file); otherwise it says how to get them."""
from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from fairviz.data import ColumnMapping
from app_pages import _upload
from tests.conftest import ROOT

MAPPING = ColumnMapping("two_year_recid", "score", ("race",))


def _page(handle_fingerprint=None, digest="compas-upload") -> AppTest:
    raw = (ROOT / "assets" / "compas.csv").read_bytes()
    pred = _upload.reduce_upload(digest, "compas_upload.csv", repr(MAPPING), raw, MAPPING).predictions()
    _upload.KEPT.keep(digest, raw)                       # as the home page keeps a reduced upload's bytes
    at = AppTest.from_file(str(ROOT / "app_pages" / "residuals.py"), default_timeout=120)
    at.session_state["predictions"] = pred
    at.session_state[_upload.ENGINE_UPLOAD] = {"fingerprint": handle_fingerprint or pred.fingerprint,
                                               "digest": digest, "name": "compas_upload.csv", "mapping": MAPPING}
    at.session_state["rdf_tab"] = "Diagnostic set D*"
    at.run()
    assert not at.exception, at.exception
    return at


def test_reduced_upload_offers_dstar_with_the_files_columns():
    at = _page()
    labels = [b.label for b in at.get("download_button")]
    assert "Download D* with every column of the file" in labels and "Download D* as CSV" in labels


def test_other_data_falls_back_to_the_tables_columns():
    at = _page(handle_fingerprint="another file")
    assert "Download D* with every column of the file" not in [b.label for b in at.get("download_button")]
    assert any("upload the file again or map them on the Home page" in c.value for c in at.caption)


def test_residuals_against_features_read_a_reduced_upload_row_by_row():
    """Calibration's feature tab on a reduced upload: while its bytes are kept, the file is read row by row for that
    tab, so every column of the file is offered (here COMPAS's age, priors, …) with the row path's numbers."""
    digest = "compas-upload-features"
    raw = (ROOT / "assets" / "compas.csv").read_bytes()
    pred = _upload.reduce_upload(digest, "compas_upload.csv", repr(MAPPING), raw, MAPPING).predictions()
    _upload.KEPT.keep(digest, raw)
    at = AppTest.from_file(str(ROOT / "app_pages" / "calibration.py"), default_timeout=120)
    at.session_state["predictions"] = pred
    at.session_state[_upload.ENGINE_UPLOAD] = {"fingerprint": pred.fingerprint, "digest": digest,
                                               "name": "compas_upload.csv", "mapping": MAPPING}
    at.session_state["cal_tab"] = "Residuals vs features"
    at.run()
    assert not at.exception, at.exception
    assert any("reads the uploaded file row by row" in c.value for c in at.caption)
    feature = at.selectbox(key="cal_feature")
    file_columns = set(pd.read_csv(ROOT / "assets" / "compas.csv", nrows=1).columns)
    assert set(feature.options) == file_columns - {"two_year_recid", "score"}     # every column no role took
    at.selectbox(key="cal_feature").set_value("priors_count").run()
    assert not at.exception, at.exception


def test_recalibration_splits_a_reduced_upload_by_its_own_columns():
    digest = "compas-upload-recal"
    raw = (ROOT / "assets" / "compas.csv").read_bytes()
    pred = _upload.reduce_upload(digest, "compas_upload.csv", repr(MAPPING), raw, MAPPING).predictions()
    columns = tuple(pd.read_csv(ROOT / "assets" / "compas.csv", nrows=5).columns)     # as the home page keeps them
    _upload.KEPT.keep(digest, raw)
    at = AppTest.from_file(str(ROOT / "app_pages" / "calibration.py"), default_timeout=120)
    at.session_state["predictions"] = pred
    at.session_state[_upload.ENGINE_UPLOAD] = {"fingerprint": pred.fingerprint, "digest": digest,
                                               "name": "compas_upload.csv", "mapping": MAPPING,
                                               "columns": columns}
    at.session_state["cal_tab"] = "Recalibration"
    at.run()
    assert not at.exception, at.exception
    assert "a column of the file" in at.radio(key="cal_split").options
    at.radio(key="cal_split").set_value("a column of the file").run()
    at.selectbox(key="cal_split_column").set_value("sex").run()
    assert not at.exception, at.exception
    assert set(at.selectbox(key="cal_split_value").options) == {"Female", "Male"}
    split = next(c.value for c in at.caption if c.value.startswith("Split:"))
    chosen = at.selectbox(key="cal_split_value").value
    calibrating = int((pd.read_csv(ROOT / "assets" / "compas.csv")["sex"] == chosen).sum())
    assert f"{calibrating:,} calibration rows" in split


def test_the_kept_bytes_are_bounded_and_a_miss_stores_nothing():
    store = _upload._KeptBytes(entries=2, total_bytes=10, seconds=3600)
    assert store.get("a") is None
    store.keep("a", b"12345")                        # a miss before must not block keeping it now
    assert store.get("a") == b"12345"
    store.keep("b", b"123")
    store.keep("c", b"1")                            # three entries: the oldest goes
    assert store.get("a") is None and store.get("b") == b"123"
    store.keep("d", b"123456789")                    # 13 bytes in all, over 10: the oldest go until it fits
    assert store.get("b") is None and store.get("c") == b"1" and store.get("d") == b"123456789"
    store.keep("e", b"x" * 11)                       # larger than the whole store: not kept
    assert store.get("e") is None
    expired = _upload._KeptBytes(seconds=0)
    expired.keep("f", b"1")
    assert expired.get("f") is None
