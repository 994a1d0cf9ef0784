"""The terminal summary: a few lines a person reads in a terminal or a CI log, rendered from the audit JSON."""
from __future__ import annotations

from fairviz.core.wording import fmt, fmt_p


def summary(data: dict) -> str:
    """A few lines a person reads in a terminal or a CI log."""
    lines = [f"{data['source']}: {data['n_rows']:,} rows, attribute '{data['attribute']}', threshold {data['threshold']}"]
    for note in data.get("notes", []):
        lines.append(f"  note: {note}")
    for name, g in data["groups"].items():
        lines.append(f"  {name}: n={g['n']:,} base rate {fmt(g['base_rate'])} positive rate {fmt(g['ppr'])} "
                     f"TPR {fmt(g['tpr'])} FPR {fmt(g['fpr'])} median residual {fmt(g['median_residual'])} "
                     f"ECE {fmt(g['ece'])} ({g['ece_regime']})")
    for p in data["pairs"]:
        lines.append(f"  {p['group_i']} vs {p['group_j']}: F_pattern {fmt(p['f_pattern'])} "
                     f"(p {fmt_p(p['p_value_median'])}), F_dist {fmt(p['f_dist'])} (p {fmt_p(p['p_value_dist'])}), "
                     f"DP gap {fmt(p['dp_diff'])}")
    lines += _parity_summary(data)
    c = data["knee_concentration"]
    lines.append(f"  knee error concentration: ratio {fmt(c['ratio'], 2)}, Mann-Whitney p {fmt_p(c['p_value'])}, "
                 f"ECE {fmt(c['ece'])} ({c['regime']}) -> {c['verdict']}{' (borderline)' if c['borderline'] else ''}")
    for name, g in data.get("calibration", {}).items():
        status = data["calibration_details"]["groups"][name]["status"]
        test = (f"intercept {fmt(g['intercept'])} (p {fmt_p(g['intercept_p'])}) slope {fmt(g['slope'])} "
                f"(p {fmt_p(g['slope_p'])}) joint LR p {fmt_p(g['lr_p_value'])}") if status is None else status
        lines.append(f"  calibration {name}: ECE {fmt(g['ece'])} smooth ECE {fmt(g['smooth_ece'])}; {test}")
    diff = data.get("calibration_details", {}).get("group_difference")
    if diff and diff["p_value"] is not None:
        lines.append(f"  calibration differs by group? p {fmt_p(diff.get('p_value_bonferroni'))} (Bonferroni over two LR "
                     f"tests; intercept and slope chi2({diff['df']}) = {fmt(diff['lr_statistic'], 2)}, "
                     f"p {fmt_p(diff['p_value'])})")
    return "\n".join(lines)


def _parity_summary(data: dict) -> list[str]:
    settings = data.get("parity_settings")
    if not settings:
        return []
    benefit = "score < threshold" if settings["benefit"] == "negative" else "score >= threshold"
    lines = [f"  parity (benefit = {benefit}):"]
    for p in data["pairs"]:
        if "ofi" in p:
            lines.append(f"    {p['group_i']} vs {p['group_j']}: OFI {fmt(p['ofi'])} (p {fmt_p(p['ofi_p_value'])}), "
                         f"DI {fmt(p['di'])} (four-fifths: {p['four_fifths']}) -> {p['parity_reading']}")
    match = data.get("match", {})
    tested = [r for metrics in match.values() for r in metrics.values() if r.get("p_value") is not None]
    alpha = settings.get("alpha", 0.05)
    flagged = [(g, m, r) for g, metrics in match.items() for m, r in metrics.items()
               if r.get("p_adjusted") is not None and r["p_adjusted"] < alpha]
    lines.append(f"  MATCH vs {settings['match_reference']}: {len(flagged)} of {len(tested)} group x metric scores "
                 f"differ beyond sampling noise (BH-adjusted p < {alpha:g})")
    for g, m, r in sorted(flagged, key=lambda t: t[2]["p_adjusted"])[:8]:
        lines.append(f"    {g} {m} = {fmt(r['score'])} at n = {r['n']:,} (adjusted p {fmt_p(r['p_adjusted'])})")
    return lines


def forecast_summary(data: dict) -> str:
    lines = [f"{data['source']}: model '{data['model']}', {data['n_rows']:,} rows, attribute '{data['attribute']}'"]
    for w in data.get("warnings", []):
        lines.append(f"  note: {w}")
    for name, g in [*data["groups"].items(), ("all", data["overall"])]:
        cover = ", ".join(f"{100 * float(b):g}% {fmt(v)}" for b, v in g["coverage"].items())
        lines.append(f"  {name}: {g['n_series']:,} series, CRPS {fmt(g['crps'])}, pinball {fmt(g['pinball'])}, "
                     f"coverage {cover}")
    comparison = data.get("comparison")
    if comparison:
        for name, s in [*comparison["groups"].items(), ("all", comparison["overall"])]:
            lines.append(f"  skill of '{comparison['model_a']}' over '{comparison['model_b']}' on {name}: "
                         f"{fmt(s['skill'])} (95% CI {fmt(s['ci'][0])} to {fmt(s['ci'][1])})")
    return "\n".join(lines)
