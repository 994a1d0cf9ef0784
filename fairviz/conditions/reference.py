"""The published tables of *Systematic Evaluation of Predictive Fairness* (Han, Shen, Cohn, Baldwin, Frermann,
AACL 2022), as printed, for the paper-reference view and for tests.

Table 1 (§7): valence regression test set; Table 2 (Appendix A.2): the Bios training set's professions by
gender; Table 3 (Appendix C.2): Moji test set, averaged over 5 runs; Table 4 (Appendix F): arousal regression.
Values are percentages (Tables 1, 3) or raw (Table 4), mean ± std over runs; DTO is computed by the authors from
the rounded means, so recomputing it agrees to within 0.01.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

PAPER = ("Xudong Han, Aili Shen, Trevor Cohn, Timothy Baldwin and Lea Frermann, "
         "“Systematic Evaluation of Predictive Fairness”, AACL-IJCNLP 2022")

# name, accuracy, ±, fairness, ±, DTO (Table 3, Moji)
TABLE3_MOJI = (
    ("Vanilla", 72.49, 0.18, 60.79, 1.12, 47.90),
    ("DS", 75.92, 0.32, 86.88, 1.08, 27.43),
    ("RW", 75.96, 0.28, 86.18, 0.97, 27.73),
    ("INLP", 73.18, 0.00, 82.04, 0.00, 32.28),
    ("ADV", 75.12, 0.83, 90.40, 1.75, 26.67),
    ("DADV", 75.65, 0.12, 89.94, 0.50, 26.34),
    ("FairBatch", 74.96, 0.41, 90.49, 0.49, 26.79),
    ("EO_CLA", 75.09, 0.25, 90.70, 0.87, 26.59),
    ("EO_GLB", 75.60, 0.17, 89.83, 0.60, 26.43),
)

# name, Pearson, ±, fairness, ±, DTO (Table 1, valence)
TABLE1_VALENCE = (
    ("Vanilla", 63.38, 2.48, 85.18, 0.40, 39.50),
    ("RW", 63.69, 1.50, 84.73, 0.91, 39.39),
    ("INLP", 70.46, 0.00, 88.54, 0.00, 31.68),
    ("ADV", 69.41, 0.39, 85.81, 0.33, 33.72),
    ("DADV", 69.02, 0.85, 85.66, 0.63, 34.14),
    ("FairBatch", 68.25, 1.47, 85.18, 0.62, 35.04),
    ("EO_CLA", 65.88, 0.89, 85.05, 0.40, 37.25),
    ("EO_GLB", 65.37, 1.29, 85.03, 0.39, 37.73),
)

# profession, male, female (Table 2, Bios training set)
TABLE2_BIOS = (
    ("dietitian", 183, 2384), ("nurse", 1127, 11189), ("paralegal", 173, 973), ("yoga_teacher", 166, 910),
    ("model", 840, 4027), ("interior_designer", 182, 767), ("psychologist", 4530, 7415), ("teacher", 4188, 6343),
    ("journalist", 6545, 6415), ("physician", 13492, 13156), ("poet", 2323, 2235), ("painter", 2727, 2298),
    ("personal_trainer", 505, 423), ("professor", 42130, 34618), ("attorney", 13064, 8105),
    ("accountant", 2317, 1343), ("photographer", 10141, 5632), ("dentist", 6133, 3346), ("filmmaker", 3048, 1497),
    ("chiropractor", 1271, 454), ("pastor", 1245, 393), ("architect", 5014, 1554), ("comedian", 1439, 385),
    ("composer", 3042, 595), ("software_engineer", 3783, 709), ("surgeon", 7521, 1308), ("dj", 828, 136),
    ("rapper", 823, 88),
)

# name, (Pearson, ±), (Pearson-GAP, ±), (MAE, ±), (MAE-GAP, ±), (RMSE, ±), (RMSE-GAP, ±) (Table 4, arousal)
TABLE4_AROUSAL = (
    ("Vanilla", 0.63, 0.04, 0.06, 0.05, 0.78, 0.03, 0.08, 0.01, 1.00, 0.04, 0.09, 0.02),
    ("DS", 0.00, 0.04, 0.08, 0.04, 0.97, 0.05, 0.06, 0.03, 1.23, 0.05, 0.05, 0.03),
    ("RW", 0.62, 0.03, 0.06, 0.05, 0.78, 0.02, 0.08, 0.02, 0.99, 0.03, 0.09, 0.04),
    ("INLP", 0.66, 0.04, 0.09, 0.04, 0.71, 0.04, 0.03, 0.02, 0.92, 0.04, 0.04, 0.02),
    ("ADV", 0.67, 0.03, 0.06, 0.06, 0.72, 0.03, 0.06, 0.04, 0.93, 0.04, 0.09, 0.06),
    ("DADV", 0.67, 0.03, 0.07, 0.06, 0.72, 0.02, 0.06, 0.02, 0.92, 0.02, 0.07, 0.05),
    ("FairBatch", 0.67, 0.03, 0.06, 0.06, 0.71, 0.01, 0.06, 0.02, 0.92, 0.02, 0.07, 0.04),
    ("EO_CLA", 0.65, 0.03, 0.07, 0.05, 0.75, 0.03, 0.07, 0.01, 0.96, 0.03, 0.08, 0.02),
    ("EO_GLB", 0.64, 0.03, 0.06, 0.06, 0.76, 0.03, 0.08, 0.02, 0.97, 0.04, 0.10, 0.04),
)


def bios_counts() -> np.ndarray:
    """Table 2 as a 28 × 2 array (columns male, female)."""
    return np.array([[m, f] for _, m, f in TABLE2_BIOS], dtype=float)


def bios_professions() -> list[str]:
    return [p for p, _, _ in TABLE2_BIOS]


def table2() -> pd.DataFrame:
    c = bios_counts()
    total = c.sum(1)
    return pd.DataFrame({"profession": bios_professions(), "total": total.astype(int), "male": c[:, 0].astype(int),
                         "female": c[:, 1].astype(int), "female ratio": np.round(c[:, 1] / total, 3)})


def _perf_table(rows, perf: str) -> pd.DataFrame:
    return pd.DataFrame([{"model": n, perf: p, f"{perf} ±": ps, "fairness": f, "fairness ±": fs, "DTO (printed)": d,
                          "DTO (recomputed)": round(float(np.hypot(100 - p, 100 - f)), 2)}
                         for n, p, ps, f, fs, d in rows])


def table1() -> pd.DataFrame:
    return _perf_table(TABLE1_VALENCE, "Pearson")


def table3() -> pd.DataFrame:
    return _perf_table(TABLE3_MOJI, "accuracy")


def table4() -> pd.DataFrame:
    names = ["Pearson", "Pearson-GAP", "MAE", "MAE-GAP", "RMSE", "RMSE-GAP"]
    rows = []
    for row in TABLE4_AROUSAL:
        entry = {"model": row[0]}
        for i, n in enumerate(names):
            entry[n] = row[1 + 2 * i]
            entry[f"{n} ±"] = row[2 + 2 * i]
        rows.append(entry)
    return pd.DataFrame(rows)
