"""Data conditions in words ([5] Han et al.): what the Retraining simulator, Evaluation reweighting and the paper
reference pages, and ``fairviz conditions run``, say. Names from the data are template fields, never template text."""
from __future__ import annotations

import numpy as np

from fairviz.conditions.metrics import interval_text
from fairviz.conditions.reference import PAPER
from fairviz.conditions.results import ReweightingAudit, RetrainingAudit
from fairviz.core.display import Text, join, text
from fairviz.core.wording import fmt

# ----------------------------------------------------------------------------------------------- retraining sweep

SWEEP_NOTE = ("Lines: the test mean over seeds of the hyperparameter setting selected on dev; bands: ± one standard "
              "deviation over seeds. DTO is computed from the means, as in the paper's tables. The dotted line marks "
              "the balanced training distribution.")
CELLS_NOTE = ("Rows drawn per (class, group) cell for the first seed: round(m · P′). A cell asked for more rows than "
              "the training split holds is topped up with replacement; ✕ marks cells clipped to 0.")
GRID_NOTE = ("The paper's conclusion ([5] §5.5, §8): there is no single best method; which one wins depends on the "
             "class ratio and the degree of stereotyping.")
SELECTED_NOTE = ("The paper's Table 3 layout: test mean ± std over seeds of the setting chosen on dev, and DTO from the "
                 "test means.")
NOTHING_TRAINED = "No model could be trained."


def simulation(sim: RetrainingAudit) -> list[Text]:
    """Where Vanilla is fairest, and which method has the best test DTO where."""
    rows = sim.selected_rows()
    if not rows:
        return [text("No model could be trained under these settings.")]
    out = []
    key = "alpha" if sim.settings.condition != "grid" else "s"
    vanilla = [r for r in rows if r["method"] == "vanilla" and r["fairness_mean"] is not None]
    if vanilla and sim.settings.condition != "grid":
        best = max(vanilla, key=lambda r: r["fairness_mean"])
        worst = min(vanilla, key=lambda r: r["fairness_mean"])
        out.append(text("Vanilla is fairest at α = {best:g} (Fairness {best_fairness:.3f}) and least fair at "
                        "α = {worst:g} ({worst_fairness:.3f}).", best=best[key], best_fairness=best["fairness_mean"],
                        worst=worst[key], worst_fairness=worst["fairness_mean"]))
    cells = {}
    for r in rows:
        k = (r["p_y"], r[key])
        if r["dto"] is not None and (k not in cells or r["dto"] < cells[k]["dto"]):
            cells[k] = r
    winners: dict[str, int] = {}
    for r in cells.values():
        winners[r["method_name"]] = winners.get(r["method_name"], 0) + 1
    if winners:
        counts = ", ".join(f"{name} in {n}" for name, n in sorted(winners.items(), key=lambda kv: -kv[1]))
        out.append(text("Lowest test DTO per condition: {counts} of {n} conditions{tail}", counts=counts, n=len(cells),
                        tail=" — no single best method." if len(winners) > 1 else "."))
    return out


def simulation_reading(sim: RetrainingAudit) -> Text:
    return join(text("**Reading.** "), *[join(t, " ") for t in simulation(sim)])


def sweep_header(sim: RetrainingAudit) -> Text:
    return text("Retraining sweep on {name}: {condition}, m = {m}, {seeds} seed(s), {models} trained models in "
                "{seconds:.1f} s on {device}.", name=sim.data["name"], condition=sim.settings.condition.upper(),
                m=f"{sim.m:,}", seeds=sim.settings.seeds, models=len(sim.runs) // 2, seconds=sim.seconds,
                device=sim.device)


def condition_lines(sim: RetrainingAudit) -> list[Text]:
    """One line per condition with every method's test accuracy / Fairness / DTO (the terminal)."""
    rows = sim.selected_rows()
    key = "s" if sim.settings.condition == "grid" else "alpha"
    lines = []
    for cond in sorted({(r["p_y"] if r["p_y"] is not None else -1, r[key]) for r in rows}):
        here = [r for r in rows if (r["p_y"] if r["p_y"] is not None else -1, r[key]) == cond]
        name = f"p_y={cond[0]:g}, s={cond[1]:g}" if cond[0] != -1 else f"α={cond[1]:g}"
        parts = "  ".join(f"{r['method_name']} {r['performance_mean']:.3f}/{r['fairness_mean']:.3f}/{r['dto']:.3f}"
                          for r in here)
        lines.append(text("{name:<16} {parts}", name=name, parts=parts))
    return lines


LINES_LEGEND = "(test accuracy / Fairness / DTO of the setting selected on dev)"


def run_note(sim: RetrainingAudit) -> Text:
    return text("{models} models trained in {seconds:.1f} s on {device}; m = {m}; selection: {rule}. Only the training "
                "split is resampled; dev and test stay as they are.", "note", models=len(sim.runs) // 2,
                seconds=sim.seconds, device=sim.device, m=f"{sim.m:,}",
                rule=sim.selected[0].rule if sim.selected else "—")


def best_dto(value: float) -> Text:
    return text("Best test DTO overall: **{dto}**.", dto=fmt(value))


# ----------------------------------------------------------------------------------------------- reweighting

NOT_RETRAINING = ("**This is not retraining.** It shifts the *test* distribution of fixed predictions. The paper "
                  "changes the *training* distribution and retrains; for that, open the **Retraining simulator**.")
WHY_GAP_TITLE = "Why GAP(TPR) — the paper's Fairness — cannot move here"
WHY_GAP = ("TPR_{{c,g}} = P(ŷ = c | y = c, z = g) is measured *inside* each (class, group) cell. ReweightingAudit the cells "
           "changes how much each cell counts, not what happens inside it, so every TPR_{{c,g}} — and with two groups "
           "the gap |TPR_{{c,1}} − TPR_{{c,2}}| of every class — is unchanged. Accuracy is Σ P′(c, g)·TPR_{{c,g}}, so it "
           "moves; so do rates that mix cells, such as the predicted-positive rate of a group (demographic parity). "
           "With more than two groups the paper's GAP (each group's distance to the class's overall TPR) can move "
           "slightly, because the overall TPR is a weighted mean. To see how *training* under another distribution "
           "changes equal opportunity, retrain ([5] §5–6).")
GAP_FPR_NOTE = ("GAP(FPR) is not shown: with two classes it equals GAP(TPR) (one class's FPR is one minus the other's "
                "TPR); it is in the JSON.")
INTERVAL_HELP = "95% CI {ci} (percentile bootstrap, 1,000 resamples within each (class, group) cell)"


def two_groups_needed(attribute: str, n_groups: int) -> Text:
    return text("The (p_y, s) setting needs exactly two groups; '{attribute}' has {n}. Pick a two-group attribute in "
                "the sidebar, or use CB / JB.", "caveat", attribute=attribute, n=n_groups)


def many_groups(n_groups: int) -> Text:
    return text("With {n} groups the paper's GAP adds up every group's distance to the class's overall TPR, so it can "
                "exceed 1 (and Fairness = 1 − GAP drop below 0); small groups make it jumpy.", "note", n=n_groups)


def intervals(ci: dict) -> Text:
    return text("95% intervals (bootstrap within cells): accuracy {accuracy}, Fairness {fairness}, DTO {dto}.", "note",
                accuracy=interval_text(ci.get("accuracy")), fairness=interval_text(ci.get("fairness")),
                dto=interval_text(ci.get("dto")))


def reweighting(res: ReweightingAudit) -> Text:
    """What moves and what cannot when the test cells are reweighted ([5] §3.2, §4.2)."""
    accs = [r.scores.accuracy for r in res.rows]
    ppr = [r.scores.gap_ppr for r in res.rows]
    head = text("**Reading.** Over these conditions accuracy ranges from {acc_low} to {acc_high} and the "
                "demographic-parity gap GAP(PPR) from {ppr_low} to {ppr_high}, ", acc_low=fmt(min(accs)),
                acc_high=fmt(max(accs)), ppr_low=fmt(np.nanmin(ppr)), ppr_high=fmt(np.nanmax(ppr)))
    if len(res.groups) == 2:
        return join(head, text("while **GAP(TPR) stays at {gap}** (it moves by {moved:.1e}).",
                               gap=fmt(res.original.gap_tpr), moved=res.tpr_gap_range))
    pair = [r.gap_tpr_pairwise for r in res.rows if r.condition.clipped.sum() == 0]
    return join(head, text("while the largest pairwise TPR gap stays at {gap} wherever no group is clipped away. With "
                           "{n} groups the paper's GAP(TPR) compares every group with the class's overall TPR, a "
                           "weighted mean, so it moves with the weights; where CB or JB clips a group's cells to zero "
                           "(α > 1), that group leaves the comparison.", gap=fmt(pair[0] if pair else None),
                           n=len(res.groups)))


def cells_check(chosen: str, row) -> Text:
    return text("At {chosen}: accuracy {accuracy} = Σ share × TPR (importance-weighted check: {weighted}), Fairness "
                "{fairness}, DTO {dto}.", "note", chosen=chosen, accuracy=fmt(row.scores.accuracy),
                weighted=fmt(row.weighted_accuracy), fairness=fmt(row.scores.fairness), dto=fmt(row.scores.dto))


# ----------------------------------------------------------------------------------------------- the paper's tables

REFERENCE_ABOUT = ("{paper}. The paper trains nine debiasing methods under controlled changes of the training "
                   "distribution (§3) and selects models on dev by their distance to the utopia point (DTO, §4.4). "
                   "Below: its published tables, as printed.")
TABLE_3 = ("**Table 3** (Appendix C.2): Moji test set (binary sentiment, dialect as the group), mean ± std over 5 runs, "
           "in %. DTO = √((100 − accuracy)² + (100 − Fairness)²); recomputing it from the rounded means agrees to "
           "within 0.01.")
TABLE_1 = ("**Table 1** (§7): Valence regression test set. Performance is Pearson r, Fairness = 1 − |r_M − r_F| (in %). "
           "There is no DS row: downsampling leaves a regression bin empty (§8).")
TABLE_4 = "**Table 4** (Appendix F): arousal regression; gaps are absolute differences between genders."
TABLE_2 = ("**Table 2** (Appendix A.2): the Bios training set, 257,478 biographies over 28 professions. Joint balance "
           "at α ≥ 1.25 clips the professor class to zero training rows; the Retraining simulator's Bios-like data "
           "reproduce these cells at a smaller scale.")


def reference_about() -> Text:
    return text(REFERENCE_ABOUT, "note", paper=PAPER)
