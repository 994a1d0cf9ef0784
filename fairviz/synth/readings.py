"""A Conditional HydraGAN run in words ([3] §3.5, Tables 3.4–3.5, Fig. 3.4): what the page and
``fairviz synth train`` say about a ``SynthAudit``. Names from the data are template fields, never template text."""
from __future__ import annotations

from fairviz.core.display import Text, text
from fairviz.synth.results import REALISM_FAIR, SynthAudit, lab_fmt, percent

DISTANCES_NOTE = ("Distances of the real and the synthetic label and group shares to the target: KS = largest gap of "
                  "cumulative shares, KL = Σ p·ln(p/q) (undefined when the data has a value the target excludes), JS "
                  "distance = √(Jensen–Shannon divergence). Improvement = (real − synthetic)/real.")
BOXPLOT_NOTE = ("Each trial draws a new synthetic table from the trained generator and retrains both classifiers with "
                "a new seed (the thesis reports “negligible standard deviation” over many trials).")
MARGINALS_NOTE = ("Per column: the KS statistic (continuous) or the total variation distance (categories) between the "
                  "real training rows and the synthetic rows; 0 = the same distribution. The label and group columns "
                  "differ by design when their targets differ from the real shares.")
REALISM_AUC_HELP = ("Cross-validated gradient boosting; 0.5: it cannot tell them apart. Real rows are drawn to the "
                    "synthetic group × label shares first, so the quotas themselves do not give the game away.")
THESIS_34 = ("**Table 3.4 (the thesis, CASAS smart-home data):** synthetic vs real training data per protected class, "
             "tested on real data. The “recomputed” row applies |real − ideal| − |synthetic − ideal| to the printed "
             "values (four cells differ by 0.001: rounding).")
THESIS_35 = "**Table 3.5 (the thesis):** activity and individual shares vs the uniform target."
THESIS_DATA = ("The thesis's data (geriatric smart-home activity records) is not public, so its numbers are shown as "
               "printed; the thesis gives no network sizes, learning rates or epochs.")


def summary(result: SynthAudit) -> list[Text]:
    """Group shares, label shares, fairness, realism and privacy, one sentence each."""
    lab, grp = result.distribution["label"].distances, result.distribution["group"].distances
    gain = lab["js"]["improvement"]
    change = ("undefined change" if gain is None else f"{percent(gain)} closer" if gain >= 0 else
              f"{percent(-gain)} further away: here the realism critic outweighed the diversity head")
    better, total = result.improved_metrics()
    auc = result.realism_auc
    p = result.privacy
    return [
        text("Group shares: JS distance to the target {real} in the real data, {synthetic} in the synthetic data "
             "(the condition vector is a hard quota).", real=lab_fmt(grp["js"]["real"]),
             synthetic=lab_fmt(grp["js"]["synthetic"])),
        text("Label shares: JS distance to the target {real} real vs {synthetic} synthetic ({change}; the diversity "
             "head is a soft quota).", real=lab_fmt(lab["js"]["real"]), synthetic=lab_fmt(lab["js"]["synthetic"]),
             change=change),
        text("Fairness: training on synthetic data moved {better} of {total} group metrics closer to no bias "
             "(accuracy on the real hold-out {synthetic:.3f} vs {real:.3f} when trained on real data).",
             better=better, total=total, synthetic=result.accuracy["synthetic"], real=result.accuracy["real"]),
        text("Realism: a classifier tells real from synthetic rows with AUC {auc:.3f} ({words}; 0.5 = "
             "indistinguishable).", auc=auc,
             words="hard to tell apart" if auc < REALISM_FAIR else "easy to tell apart: treat with care"),
        text("Privacy: median distance to the nearest real training row {synthetic:.3f} for synthetic rows vs "
             "{holdout:.3f} for unseen real rows; {copies} of {checked} synthetic rows equal a training row exactly, "
             "against {holdout_copies} of {holdout_checked} unseen real rows (a table with few distinct rows repeats "
             "itself).", synthetic=p["synthetic_median"], holdout=p["holdout_median"],
             copies=f"{p['exact_copies']:,}", checked=f"{p['checked_rows']:,}",
             holdout_copies=f"{p['holdout_exact_matches']:,}", holdout_checked=f"{p['holdout_checked_rows']:,}"),
    ]


def run_line(result: SynthAudit, source: str, out) -> Text:
    """The first line ``fairviz synth train`` prints."""
    return text("Conditional HydraGAN on {source}: {n_train} training rows, {n_synthetic} synthetic rows written to "
                "{out} ({seconds:.1f} s on {device}).", source=source, n_train=f"{result.n_train:,}",
                n_synthetic=f"{len(result.synthetic):,}", out=str(out), seconds=result.seconds, device=result.device)


def fairness_note(result: SynthAudit) -> Text:
    return text("An MLP classifier trained on the real training rows and one trained on the synthetic rows, both "
                "tested on the same real hold-out ({n} rows); means over {trials} trials. Each group is compared with "
                "the rest of the hold-out. OFI = 𝓑_g − 𝓑_rest with 𝓑 = (FP − FN)/n; DPPL and DI compare benefit "
                "rates P̂/n; DCA = P/P̂ gap. Improves = |real − ideal| − |synthetic − ideal| (ideal 0, 1 for DI): > 0 "
                "means the synthetic data made the classifier fairer. Blank cells are undefined (for example DI when "
                "a classifier gives the rest no benefit).", "note", n=f"{result.n_holdout:,}",
                trials=result.trials)


def accuracy(result: SynthAudit) -> Text:
    return text("Accuracy on the real hold-out: **{real:.3f}** trained on real data, **{synthetic:.3f}** trained on "
                "synthetic data.", real=result.accuracy["real"], synthetic=result.accuracy["synthetic"])


def realism_verdict(result: SynthAudit) -> Text:
    if result.realism_auc < REALISM_FAIR:
        return text("Synthetic rows are hard to tell from real ones.", "finding")
    return text("A classifier separates synthetic from real rows easily: train longer, or read the fairness results "
                "with care.", "caveat")


def training_note(result: SynthAudit) -> Text:
    heads = ", ".join(f"{n} (weight {w:g})" for n, w in result.heads)
    return text("Heads: {heads}; the critic uses the WGAN-GP loss with gradient-penalty weight 10. {seconds:.1f} s on "
                "{device} ({per_epoch:.2f} s per epoch).", "note", heads=heads, seconds=result.seconds,
                device=result.device, per_epoch=result.seconds / max(1, result.settings.epochs))
