"""The forecast pages in a real browser: the Lorenz page draws its 3-D attractor and fans; the forecast-fairness
page takes an uploaded long-format file, and a broken one gets a message instead of a traceback."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import no_traceback, wait_for_app

pytestmark = pytest.mark.browser


def _nav(page, name: str) -> None:
    page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=name).click()
    wait_for_app(page)


def test_lorenz_page_draws_attractor_and_fans(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    _nav(page, "Lorenz & PTN")
    page.get_by_text("Divergence time").wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    assert page.locator(".js-plotly-plot .gl-container, .js-plotly-plot canvas").count() >= 1   # the 3-D scene
    page.get_by_role("tab", name="PTN quantile fans").click()
    page.get_by_text("CRPS of this forecast").wait_for()
    page.get_by_role("tab", name="Evaluation (Table 5.2)").click()
    page.get_by_text("Skill at the median CRPS").wait_for()
    no_traceback(page)


def _long_file(path, rng) -> None:
    rows = []
    for s in range(30):
        region = "north" if s < 20 else "south"
        for step in range(1, 6):
            mu = rng.normal()
            truth = mu + rng.normal(0, 1 if region == "north" else 2)
            for level in (0.05, 0.25, 0.5, 0.75, 0.95):
                rows.append({"series": f"s{s}", "lead": step, "observed": truth, "region": region,
                             "quantile": level, "value": mu + {0.05: -1.645, 0.25: -0.674, 0.5: 0, 0.75: 0.674,
                                                                0.95: 1.645}[level]})
    pd.DataFrame(rows).to_csv(path, index=False)


def test_forecast_fairness_upload_and_broken_file(page, app_url, tmp_path):
    page.goto(app_url)
    wait_for_app(page)
    _nav(page, "Forecast fairness")
    page.get_by_text("CRPS (all)").wait_for()                            # opens on the bundled sample
    page.get_by_text("Upload a file").click()
    page.get_by_text("Quantile forecasts (CSV or Parquet)").wait_for()
    wait_for_app(page)
    broken = tmp_path / "broken.csv"
    broken.write_text("id,step,truth,group,q0.1,q0.9\na,1,0.5,x,low,1.0\nb,1,0.4,y,0.1,0.9\n")
    page.locator('input[type="file"]').first.set_input_files(str(broken))
    page.get_by_text("broken.csv: 2 rows").wait_for()
    wait_for_app(page)
    page.get_by_text("non-numeric values").wait_for()
    no_traceback(page)
    good = tmp_path / "regions.csv"
    _long_file(good, np.random.default_rng(0))
    page.locator('input[type="file"]').first.set_input_files(str(good))
    page.get_by_text("regions.csv: 750 rows").wait_for()
    wait_for_app(page)
    page.get_by_text("CRPS (all)").wait_for()
    reading = page.get_by_text("The forecasts of south are the least accurate")      # truths twice as spread
    reading.wait_for()
    assert "north" in reading.inner_text()
    page.get_by_role("tab", name="Coverage gaps").click()
    page.get_by_text("Coverage gap by group").first.wait_for()                  # the plotly title
    no_traceback(page)
