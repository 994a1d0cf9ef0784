"""Files whose meaning must be asked and checked (issue 28): a score that is the probability of the other label value
(``p_default`` beside ``approved = yes/no``), and the same probabilities as percentages and as logits."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

N = 3000


def probabilities(seed: int = 7) -> pd.DataFrame:
    """approved = yes/no with P(yes) = p_yes, women approved less often at the same merit; age bands and an id."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], N, p=[0.4, 0.6])
    band = rng.choice(["18-25", "26-40", "41-60", "61-74", "75+"], N, p=[0.1, 0.35, 0.3, 0.15, 0.1])
    p_yes = np.clip(rng.beta(2, 2, N) + np.where(sex == "female", -0.08, 0.0), 0.01, 0.99)
    approved = np.where(rng.uniform(size=N) < p_yes, "yes", "no")
    return pd.DataFrame({"applicant_id": np.arange(N), "approved": approved, "p_yes": p_yes, "sex": sex,
                         "age_band": band})


def write(folder: Path) -> dict[str, Path]:
    """inverted.csv (p_default = P(no)), prob.csv, pct.csv (0–100) and logit.csv, each beside approved = yes/no, and
    prob_of_pct.csv / prob_of_logit.csv: the probabilities those two convert to (÷ 100, the logistic function), as
    numpy computes them from the written values, at full precision."""
    base = probabilities()
    p = base["p_yes"].to_numpy()
    rest = base.drop(columns="p_yes")
    files = {"inverted": rest.assign(p_default=1 - p), "prob": rest.assign(score=p),
             "pct": rest.assign(score=p * 100), "logit": rest.assign(score=logit(p))}
    files["prob_of_pct"] = rest.assign(score=files["pct"]["score"].to_numpy() / 100)
    files["prob_of_logit"] = rest.assign(score=expit(files["logit"]["score"].to_numpy()))
    paths = {}
    for name, frame in files.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False, float_format="%.17g")
    return paths
