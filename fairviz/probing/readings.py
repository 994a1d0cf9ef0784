"""What knee probing and augmentation found, in words and tables: the page's display lists (``probe_display``,
``augment_display``), the CLI's terminal summaries and App. E's calibration-conditioned reading ([1] §7–8).

Everything here reads the results' JSON dicts (``to_dict()`` after ``clean``), so the shipped demo, a fresh
computation and the CLI's JSON all read the same. Names and notes from the data are fields of our templates
(``fairviz.core.display.text``), never part of them.
"""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Figure, Group, Item, Metric, Metrics, Table, Text, text
from fairviz.core.wording import fmt, fmt_p
from fairviz.probing import figures as figs
from fairviz.probing.results import AUGMENT_STRATEGIES, ECE_THRESHOLD, PROBES, STRATEGY_NAMES

EXAMPLE_COLUMNS = ("text", "swapped", "score", "score_swapped", "delta_swap", "removed", "score_removed",
                   "delta_removal", "group", "label", "residual")


# ----------------------------------------------------------------------------------------------- App. E

def calibration_reading(ece: float, records: list) -> str:
    """App. E: the calibration-conditioned expectation, next to what this run found (the JSON's ``reading``)."""
    if ece < ECE_THRESHOLD:
        expected = (f"ECE {ece:.3f} < {ECE_THRESHOLD}: the paper's calibration-conditioned hypothesis expects "
                    "RDF-guided selection to beat random here.")
    else:
        expected = (f"ECE {ece:.3f} ≥ {ECE_THRESHOLD}: the paper expects no advantage of RDF-guided selection "
                    "over random here (knees mark behaviour changes, not error concentration).")
    found = []
    for r in records:
        if r.strategy == "rdf" and r.t_tests and r.t_tests.get("f_pattern"):
            rand = next(x for x in records if (x.strategy, x.k) == ("random", r.k)).summary("f_pattern")["mean"]
            mine = r.summary("f_pattern")["mean"]
            test = r.t_tests["f_pattern"]
            if mine is not None and rand is not None:
                p = "undefined" if test["p_value"] is None else f"{test['p_value']:.3g}"
                found.append(f"k = {r.k}: ΔF_pattern {mine:+.4f} (RDF) vs {rand:+.4f} (random), Welch p = {p}")
    return expected + (" This run: " + "; ".join(found) + "." if found else "")


# ----------------------------------------------------------------------------------------------- probing

def _interval(ci) -> str:
    return "undefined" if not ci or ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _ratio(value) -> str:
    return "undefined" if value is None else f"{value:.2f}×"


def _alike_ratios(data: dict) -> Text | None:
    """Why the probes' headline ratios read alike when they round to the same value: different edits, different
    Δd, nearly the same knee / non-knee ratio (the average is their mean, so it reads alike too)."""
    rows = [(PROBES[k], r) for k, r in data["probes"].items() if r["ratio"] is not None]
    if len(rows) < 2 or len({_ratio(r["ratio"]) for _, r in rows}) > 1:
        return None
    return text("The probes' ratios round alike but are separate measurements: {parts}. Both edits move knee rows "
                "about {shown} as much as non-knee rows; the average over probes is their mean.", "note",
                parts="; ".join(f"{name} {r['ratio']:.4f}× (mean |Δd| {r['knee_mean']:.4f} knee vs "
                                f"{r['nonknee_mean']:.4f} non-knee)" for name, r in rows),
                shown=_ratio(rows[0][1]["ratio"]))


def _key(key: str | None, *parts) -> tuple | None:
    return None if key is None else ("probing", key, *parts)


def probe_display(data: dict, key: str | None = None) -> list[Item]:
    """The probing result: the pool, the knee / non-knee ratio per probe (App. O, Table 11), the selection
    strategies (App. D.2) and error vs. sensitivity (§8.2). The examples table is ``examples_table``. ``key``
    names the result for the figures' cache (None: not kept)."""
    meta, pool, settings = data.get("meta", {}), data["pool"], data["settings"]
    items: list[Item] = [text(
        "**{title}** · {model} · probed pool {n:,} held-out rows, {share:.1%} in knee regions (ε = {eps}, {mode} "
        "mode) · ECE {ece} ({regime})", title=meta.get("data", {}).get("title", ""),
        model=meta.get("model", {}).get("description", ""), n=pool["n"], share=pool["knee_share"],
        eps=str(pool["region"]["eps"]), mode=pool["region"]["mode"], ece=fmt(pool["ece"]), regime=pool["regime"])]
    items += [text("{warning}", "caveat", warning=w) for w in data["warnings"]]
    cards = [Metric(text("{probe}: knee / non-knee", probe=name), _ratio(data["probes"][key]["ratio"]),
                    help=f"knee mean |Δd| {fmt(data['probes'][key]['knee_mean'], 4)}, non-knee "
                         f"{fmt(data['probes'][key]['nonknee_mean'], 4)}; 95% CI {_interval(data['probes'][key]['ci'])}"
                         f"; Mann–Whitney p {fmt_p(data['probes'][key]['p_value'])}")
             for key, name in PROBES.items()]
    cards.append(Metric(text("Average over probes (Table 11)"), _ratio(data["ratio_average"])))
    items.append(Metrics(tuple(cards)))
    if (alike := _alike_ratios(data)) is not None:
        items.append(alike)
    items.append(probes_table(data))
    items += [text("{probe}: {note}", "finding", probe=PROBES[key], note=row["note"])
              for key, row in data["probes"].items() if row["note"]]
    items.append(Figure(lambda: figs.region_figure(data), _key(key, "regions"), caption=text(
        "Matched samples (App. O): {n} knee-region rows drawn uniformly and as many non-knee rows with the same "
        "group × label counts. Δd = |f(x′) − f(x)| (the label is unchanged); rows the edit does not change count as "
        "0. Ratio interval: percentile bootstrap ({resamples} resamples of each sample). Under poor calibration "
        "(ECE ≥ 0.15) the paper reads knees as where behaviour changes rather than where errors concentrate (§8.2).",
        "note", n=settings["n"], resamples=settings["resamples"])))
    items += [text("Selection strategies (App. D.2)", "heading"), strategies_table(data),
              Figure(lambda: figs.strategy_figure(data), _key(key, "strategies"), caption=text(
                  "{n} examples per strategy: knee regions (uniform), highest entropy, highest confidence (lowest "
                  "entropy), random. The paper does not define its three measures; here demographic sensitivity = "
                  "mean Δd of the swap, identity dependence = mean Δd of the removal, clear pattern = share with "
                  "max Δd ≥ {clear}.", "note", n=settings["n_strategy"], clear=str(settings["clear_threshold"])))]
    items += [text("Error vs. sensitivity (§8.2)", "heading"),
              Figure(lambda: figs.scatter_figure(data), _key(key, "scatter"),
                     caption=_correlation(data["error_vs_sensitivity"]))]
    items += [text("The examples and their counterfactuals", "heading"),
              text("A swap can change what a sentence means (App. M): read the pairs before trusting a number. "
                   "Sorted by Δd of the swap, largest first.", "note")]
    return items


def _correlation(c: dict) -> Text:
    if c["spearman"] is None:
        return text("Spearman ρ = undefined over {n} probed examples. {note}", "note", n=c["n"], note=c["note"])
    return text("Spearman ρ = {rho:.3f} (p {p_rho}), Pearson r = {r:.3f} (p {p_r}) over {n} probed examples. {note}",
                "note", rho=c["spearman"], p_rho=fmt_p(c["spearman_p"]), r=c["pearson"], p_r=fmt_p(c["pearson_p"]),
                n=c["n"], note=c["note"])


def probes_table(data: dict) -> Table:
    frame = pd.DataFrame([{"probe": PROBES[k], "knee_mean": r["knee_mean"], "nonknee_mean": r["nonknee_mean"],
                           "ratio": r["ratio"], "ci": _interval(r["ci"]), "p_value": r["p_value"],
                           "n_knee": r["n_knee"], "n_nonknee": r["n_nonknee"],
                           "changed_share_knee": r["changed_share_knee"],
                           "changed_share_nonknee": r["changed_share_nonknee"]} for k, r in data["probes"].items()])
    return Table(frame, "probes",
                 {"probe": "text", "knee_mean": "num4", "nonknee_mean": "num4", "ratio": "num4", "ci": "text",
                  "p_value": "p", "n_knee": "int", "n_nonknee": "int", "changed_share_knee": "num4",
                  "changed_share_nonknee": "num4"},
                 {"knee_mean": "knee mean |Δd|", "nonknee_mean": "non-knee mean |Δd|", "ci": "95% CI (bootstrap)",
                  "p_value": "p (Mann–Whitney, two-sided)", "n_knee": "n knee", "n_nonknee": "n non-knee",
                  "changed_share_knee": "edited (knee)", "changed_share_nonknee": "edited (non-knee)"})


def strategies_table(data: dict) -> Table:
    frame = pd.DataFrame([{"strategy": STRATEGY_NAMES[k], "n": s["n"],
                           "demographic_sensitivity": s["demographic_sensitivity"],
                           "identity_dependence": s["identity_dependence"],
                           "clear_pattern_share": s["clear_pattern_share"], "mean_abs_residual": s["mean_abs_residual"]}
                          for k, s in data["strategies"].items()])
    return Table(frame, "strategies",
                 {"strategy": "text", "n": "int", "demographic_sensitivity": "num4", "identity_dependence": "num4",
                  "clear_pattern_share": "num4", "mean_abs_residual": "num4"},
                 {"demographic_sensitivity": "demographic sensitivity", "identity_dependence": "identity dependence",
                  "clear_pattern_share": "clear pattern", "mean_abs_residual": "mean |residual|"})


def examples_table(data: dict, region: str) -> Table:
    """One region's probed examples next to their edits, the largest swap effect first (App. M)."""
    examples = pd.DataFrame(data["examples"])
    shown = examples[examples["region"] == region].sort_values("delta_swap", ascending=False)
    numbers = ("score", "score_swapped", "delta_swap", "score_removed", "delta_removal", "residual")
    return Table(shown[list(EXAMPLE_COLUMNS)].reset_index(drop=True), f"examples_{region}",
                 {c: ("num4" if c in numbers else "text") for c in EXAMPLE_COLUMNS if c != "label"})


# ----------------------------------------------------------------------------------------------- augmentation

def _pm(summary: dict, digits: int = 4) -> str:
    if summary["mean"] is None:
        return "undefined"
    return f"{summary['mean']:+.{digits}f}" + ("" if summary["std"] is None else f" ± {summary['std']:.{digits}f}")


def augment_display(data: dict, metric: str = "f_pattern", key: str | None = None) -> list[Item]:
    """Algorithm 1's result in three groups: ``summary`` (before, the sign convention, ΔF per strategy and k),
    ``figure`` (ΔF of ``metric``) and ``reading`` (App. E and what was done)."""
    before, meta, settings = data["before"], data.get("meta", {}), data["settings"]
    summary: list[Item] = [
        text("**{title}** · {model} · sizes {sizes} · {dstar_name} = {dstar} of {pool} validation rows ({mode} mode, "
             "ε = {eps})", dstar_name="D*",
             title=meta.get("data", {}).get("title", ""), model=meta.get("model", {}).get("description", ""),
             sizes=str(meta.get("sizes", {})), dstar=data["dstar_size"], pool=data["pool_n"],
             mode=settings["region_mode"], eps=str(settings["region_eps"])),
        Metrics(tuple(Metric(text(label), fmt(before[key])) for key, label in
                      (("f_pattern", "F_pattern before"), ("f_v", "F_v before"), ("f_dist", "F_dist before")))),
        text("**Sign convention.** {convention}", "finding", convention=data["sign_convention"]),
        *[text("{warning}", "caveat", warning=w) for w in data["warnings"]],
        records_table(data)]
    figure = [Figure(lambda: figs.augmentation_figure(data, metric), _key(key, "augmentation", metric))]
    reading = [text("**Calibration-conditioned reading (App. E).** {reading}", "finding",
                    reading=data["calibration"]["reading"]),
               text("Algorithm 1: select k validation examples (random; highest entropy; uniform from {dstar_name}), add a "
                    "demographic-swap copy of each with its label to the training set, fine-tune the model for "
                    "{epochs} epoch, and measure the RDF metrics on the held-out test set; seeds {seeds}; std with "
                    "ddof = 1; two-sided Welch t-test against random. The control fine-tunes on the training set "
                    "alone with the same seed, so the effect of the extra epoch is visible apart from the "
                    "augmentation. The paper reports p > 0.1 for every RDF vs random comparison.", "note",
                    dstar_name="D*", epochs=meta.get("protocol", {}).get("fine_tune_epochs", 1),
                    seeds=", ".join(map(str, settings["seeds"])))]
    return [Group("Augmentation", tuple(summary), key="summary"), Group("ΔF", tuple(figure), key="figure"),
            Group("Reading", tuple(reading), key="reading")]


def records_table(data: dict) -> Table:
    rows = []
    for r in data["records"] + ([data["control"]] if data["control"] else []):
        t = (r["t_test_vs_random"] or {}).get("f_pattern") or {}
        rows.append({"strategy": AUGMENT_STRATEGIES.get(r["strategy"], "control: fine-tune on T only"), "k": r["k"],
                     "f_pattern": _pm(r["delta"]["f_pattern"]), "gap": _pm(r["delta"]["gap"]),
                     "f_v": _pm(r["delta"]["f_v"]), "f_dist": _pm(r["delta"]["f_dist"]),
                     "efficiency": "—" if r["efficiency"]["f_pattern"] is None
                     else f"{r['efficiency']['f_pattern']:+.2e}",
                     "welch_p": fmt_p(t.get("p_value")) if r["strategy"] not in ("random", "none") else "—"})
    return Table(pd.DataFrame(rows), "augmentation",
                 {"strategy": "text", "k": "int", "f_pattern": "text", "gap": "text", "f_v": "text", "f_dist": "text",
                  "efficiency": "text", "welch_p": "text"},
                 {"f_pattern": "ΔF_pattern", "gap": "gap (paper scale)", "f_v": "ΔF_v", "f_dist": "ΔF_dist",
                  "efficiency": "efficiency ΔF_pattern/k", "welch_p": "Welch p vs random (F_pattern)"})


# ----------------------------------------------------------------------------------------------- terminal

def _f(value, digits: int = 4) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def probe_summary(data: dict) -> str:
    """``fairviz probe``'s terminal lines."""
    meta = data.get("meta", {})
    lines = [f"{meta.get('data', {}).get('title', 'data')} · {meta.get('model', {}).get('description', 'model')} · "
             f"pool {data['pool']['n']:,} rows, ECE {_f(data['pool']['ece'], 3)} ({data['pool']['regime']})"]
    for key, probe in data["probes"].items():
        ci = probe["ci"]
        lines.append(f"  {PROBES[key]:<22} knee {_f(probe['knee_mean'])}  non-knee {_f(probe['nonknee_mean'])}  "
                     f"ratio {_f(probe['ratio'], 2)} [{_f(ci[0], 2)}, {_f(ci[1], 2)}]  p {fmt_p(probe['p_value'])}")
        if probe["note"]:
            lines.append(f"    {probe['note']}")
    lines.append(f"  average ratio over probes (Table 11): {_f(data['ratio_average'], 2)}")
    for key, s in data["strategies"].items():
        lines.append(f"  {STRATEGY_NAMES[key]:<22} demographic sensitivity {_f(s['demographic_sensitivity'])}  "
                     f"identity dependence {_f(s['identity_dependence'])}  clear {_f(s['clear_pattern_share'], 2)}")
    return "\n".join(lines)


def augment_summary(data: dict) -> str:
    """``fairviz augment``'s terminal lines."""
    before = data["before"]
    lines = [f"before: F_pattern {_f(before['f_pattern'])}, F_v {_f(before['f_v'])}, F_dist {_f(before['f_dist'])}; "
             f"D* {data['dstar_size']} of {data['pool_n']} validation rows",
             "  " + data["sign_convention"]]
    for r in data["records"]:
        d = r["delta"]
        test = (r["t_test_vs_random"] or {}).get("f_pattern") or {}
        lines.append(f"  {AUGMENT_STRATEGIES[r['strategy']]:<24} k={r['k']:<4} ΔF_pattern {_f(d['f_pattern']['mean'])} ± "
                     f"{_f(d['f_pattern']['std'])}  ΔF_v {_f(d['f_v']['mean'])}  ΔF_dist {_f(d['f_dist']['mean'])}  "
                     f"efficiency {_f(r['efficiency']['f_pattern'], 6)}"
                     + (f"  Welch p vs random {fmt_p(test.get('p_value'))}" if r["strategy"] != "random" else ""))
    lines.append("  " + data["calibration"]["reading"])
    return "\n".join(lines)
