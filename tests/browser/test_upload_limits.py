"""A 1 MB Parquet upload that expands to 2M × 103: the form maps it from a preview and only the mapped columns
are decoded (issue: it used to become a 3.6 GB table before any check)."""
from __future__ import annotations

import pytest

from tests.data.test_reading import write_wide_parquet

from .conftest import no_traceback, wait_for_app


@pytest.mark.slow
def test_wide_parquet_upload_is_mapped_from_a_preview_and_read_column_pruned(page, app_url, tmp_path):
    path = tmp_path / "wide.parquet"
    write_wide_parquet(path)
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_text("Upload a file").click()
    page.locator('input[type="file"]').set_input_files(str(path))
    page.get_by_text("wide.parquet: 2,000,000 rows × 103 columns").wait_for(timeout=180_000)
    page.get_by_role("button", name="Use these columns").click()
    page.get_by_text("Now analysing: wide.parquet").wait_for(timeout=180_000)     # all 103 columns: refused
    wait_for_app(page)
    no_traceback(page)
