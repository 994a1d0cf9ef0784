"""An upload reduced by the engine still gives D* with every column of the file: upload, open the Residual page's D*
tab and download the file's own rows (one query on the file), in Chromium."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data import ColumnMapping, build_predictions
from fairviz.residuals import RDFParams, analyse

from .conftest import no_traceback, wait_for_app
from .test_large_upload import AUDIT_PAGES, open_page, upload


def test_dstar_with_the_files_columns_after_a_reduced_upload(page, app_url, tmp_path):
    rng = np.random.default_rng(5)
    n = 3000
    score = np.round(rng.beta(2, 3, n), 2)
    frame = pd.DataFrame({"label": rng.binomial(1, score), "score": score,
                          "group": rng.choice(["north", "south"], n),
                          "city": [f"city-{k:04d}" for k in rng.integers(0, 900, n)]})   # a column no role takes
    path = tmp_path / "cities.csv"
    frame.to_csv(path, index=False)
    upload(page, app_url, path)
    page.get_by_text("reduced to").first.wait_for()                   # the engine's path, not the rows
    nav = "Residual distribution"
    open_page(page, nav, AUDIT_PAGES[nav])
    page.get_by_role("tab", name="Diagnostic set D*").click()
    wait_for_app(page)
    with page.expect_download(timeout=180_000) as download:
        page.get_by_role("button", name="Download D* with every column of the file").click()
    got = pd.read_csv(download.value.path())
    no_traceback(page)
    pred = build_predictions(frame, ColumnMapping("label", "score", ("group",)), source="rows", file_fingerprint="r")
    expected = frame[analyse(pred, None, RDFParams(resamples=0)).in_knee_region]
    assert "city" in got.columns and len(got) == len(expected) > 0
    keys = ["group", "label", "score"]
    assert got.groupby(keys).size().equals(expected.groupby(keys).size())
    assert got["city"].isin(frame["city"]).all()
