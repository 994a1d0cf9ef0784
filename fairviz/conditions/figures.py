"""Figures of the data-conditions pages. They take results (a RetrainingAudit, TrainCells, a ReweightingAudit), never rows.

- ``sweep_figure``: accuracy, Fairness and DTO against α (or s), one line per method, mean ± std band over
  seeds, a dotted line at the balanced condition (α = 1, s = 0.5);
- ``cells_figure``: one condition's training cells (counts), clipped cells marked ✕;
- ``grid_figure`` / ``best_method_figure``: the (p_y × s) grid as small multiples, and which method has the
  lowest test DTO in each cell;
- ``reweight_figure``: evaluation reweighting of fixed predictions; ``table2_figure``: Bios' female share.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fairviz.conditions.distributions import TrainCells
from fairviz.conditions.results import ReweightingAudit, RetrainingAudit
from fairviz.conditions.methods import METHOD_NAMES, METHODS
from fairviz.conditions.reference import table2
from fairviz.core.markup import plot_text
from fairviz.core.theme import NEUTRAL, PALETTE, TEMPLATE

METRICS = (("performance", "Accuracy ↑"), ("fairness", "Fairness ↑"), ("dto", "DTO ↓"))
SEQUENTIAL = [[0.0, "#ffffff"], [1.0, "#0072B2"]]


# one colour per method (the Okabe–Ito palette, then two more that stay apart from it)
METHOD_COLOURS = dict(zip(METHODS, [PALETTE[7], PALETTE[1], PALETTE[2], "#88CCEE", PALETTE[3], "#882255",
                                     PALETTE[4], PALETTE[5], PALETTE[0], "#999933"]))


def _colour(method: str) -> str:
    return METHOD_COLOURS.get(method, NEUTRAL)


def sweep_table(sim: RetrainingAudit, p_y: float | None = None) -> dict:
    """method → {x: [values], mean_*: [...], std_*: [...]} over the test runs of each selected setting."""
    chosen = {(s.aggregate.value, s.aggregate.p_y, s.aggregate.method): s.aggregate.config for s in sim.selected}
    out: dict[str, dict] = {}
    for (x, py, method), config in sorted(chosen.items(), key=lambda kv: kv[0][0]):
        if py != p_y:
            continue
        runs = [r for r in sim.runs if r.split == "test" and r.value == x and r.p_y == py and r.method == method
                and r.config == config]
        entry = out.setdefault(method, {"x": [], **{f"{k}_{m}": [] for m, _ in METRICS for k in ("mean", "std")}})
        entry["x"].append(x)
        perf = np.array([r.performance for r in runs])
        fair = np.array([r.fairness for r in runs])
        per_seed_dto = np.hypot(1 - perf, 1 - fair)
        for m, values, mean in (("performance", perf, perf.mean()), ("fairness", fair, fair.mean()),
                                ("dto", per_seed_dto, float(np.hypot(1 - perf.mean(), 1 - fair.mean())))):
            entry[f"mean_{m}"].append(float(mean))
            entry[f"std_{m}"].append(float(values.std(ddof=1)) if values.size > 1 else 0.0)
    return out


def sweep_figure(sim: RetrainingAudit, p_y: float | None = None) -> go.Figure:
    grid = sim.settings.condition == "grid"
    x_title = "s = P′(first group | first class)" if grid else "α (0 = data as is, 1 = balanced, 2 = inverted)"
    table = sweep_table(sim, p_y)
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t for _, t in METRICS], horizontal_spacing=0.07)
    for method, entry in table.items():
        colour = _colour(method)
        x = np.array(entry["x"])
        for col, (m, _) in enumerate(METRICS, start=1):
            mean, std = np.array(entry[f"mean_{m}"]), np.array(entry[f"std_{m}"])
            fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[mean + std, (mean - std)[::-1]], fill="toself",
                                     fillcolor=_rgba(colour, 0.15), line=dict(width=0), hoverinfo="skip",
                                     showlegend=False, legendgroup=method), row=1, col=col)
            fig.add_trace(go.Scatter(x=x, y=mean, mode="lines+markers", name=METHOD_NAMES.get(method, method),
                                     line=dict(color=colour, width=2.5), legendgroup=method, showlegend=col == 1,
                                     hovertemplate=f"{METHOD_NAMES.get(method, method)}: %{{y:.3f}} "
                                                   "(± %{customdata:.3f})<extra></extra>", customdata=std),
                          row=1, col=col)
    balanced = 0.5 if grid else 1.0
    for col in (1, 2, 3):
        fig.add_vline(x=balanced, line=dict(color=NEUTRAL, dash="dot"), row=1, col=col)
        fig.update_xaxes(title_text=x_title if col == 2 else None, row=1, col=col)
    title = "Test figures of the setting selected on dev, mean ± std over seeds"
    if p_y is not None:
        title += f" (p_y = {p_y:g})"
    fig.update_layout(template=TEMPLATE, title=title, height=430, legend=dict(orientation="h", y=-0.25))
    return fig


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    return f"rgba({int(h[0:2], 16)}, {int(h[2:4], 16)}, {int(h[4:6], 16)}, {alpha})"


def cells_figure(cells: TrainCells, classes, groups) -> go.Figure:
    counts = cells.counts
    clipped = cells.condition.clipped
    dropped = cells.dropped if cells.dropped.size else np.zeros_like(clipped)
    text = [[f"{counts[c, g]:,}" + (" ✕ clipped" if clipped[c, g] else "") + (" ⚠ no rows" if dropped[c, g] else "")
             for g in range(counts.shape[1])] for c in range(counts.shape[0])]
    fig = go.Figure(go.Heatmap(z=counts, x=[plot_text(g) for g in groups], y=[plot_text(c) for c in classes],
                               colorscale=SEQUENTIAL, text=text,
                               texttemplate="%{text}", colorbar=dict(title="rows"),
                               customdata=cells.available,
                               hovertemplate="%{y} × %{x}: %{z:,} rows drawn from %{customdata:,} available"
                                             "<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    note = ""
    if clipped.any():
        note = f" — {int(clipped.sum())} cell(s) clipped to 0, table renormalised (sum before: {cells.condition.raw_sum:.3f})"
    fig.update_layout(template=TEMPLATE, title=f"Training cells at {cells.condition.label}{note}",
                      height=max(320, 24 * counts.shape[0] + 140))
    return fig


def _grid_values(sim: RetrainingAudit, method: str, metric: str):
    ps = sorted({s.aggregate.p_y for s in sim.selected})
    ss = sorted({s.aggregate.value for s in sim.selected})
    z = np.full((len(ps), len(ss)), np.nan)
    for s in sim.selected:
        a = s.aggregate
        if a.method == method:
            z[ps.index(a.p_y), ss.index(a.value)] = {"dto": a.test_dto, "fairness": a.test_fairness,
                                                     "performance": a.test_performance}[metric]
    return ps, ss, z


def grid_figure(sim: RetrainingAudit, metric: str = "dto") -> go.Figure:
    methods = [m for m in sim.settings.methods if any(s.aggregate.method == m for s in sim.selected)]
    cols = min(3, max(1, len(methods)))
    rows = int(np.ceil(len(methods) / cols)) or 1
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[METHOD_NAMES[m] for m in methods],
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    label = dict(METRICS)[metric]
    values = [_grid_values(sim, m, metric) for m in methods]
    finite = np.concatenate([v[2][np.isfinite(v[2])] for v in values]) if values else np.array([0.0])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    for i, (m, (ps, ss, z)) in enumerate(zip(methods, values)):
        fig.add_trace(go.Heatmap(z=z, x=[f"{v:g}" for v in ss], y=[f"{v:g}" for v in ps], zmin=lo, zmax=hi,
                                 colorscale="Viridis_r" if metric == "dto" else "Viridis", showscale=i == 0,
                                 colorbar=dict(title=label), texttemplate="%{z:.2f}",
                                 hovertemplate=f"{METHOD_NAMES[m]} p_y=%{{y}}, s=%{{x}}: %{{z:.3f}}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(title_text="s", type="category")
    fig.update_yaxes(title_text="p_y", type="category")
    fig.update_layout(template=TEMPLATE, title=f"Test {label} over the (p_y × s) grid, one panel per method",
                      height=330 * rows + 80)
    return fig


def best_method_figure(sim: RetrainingAudit) -> go.Figure:
    methods = [m for m in sim.settings.methods if any(s.aggregate.method == m for s in sim.selected)]
    ps = sorted({s.aggregate.p_y for s in sim.selected})
    ss = sorted({s.aggregate.value for s in sim.selected})
    best = np.full((len(ps), len(ss)), -1)
    dto_best = np.full((len(ps), len(ss)), np.inf)
    for s in sim.selected:
        a = s.aggregate
        i, j = ps.index(a.p_y), ss.index(a.value)
        if np.isfinite(a.test_dto) and a.test_dto < dto_best[i, j]:
            dto_best[i, j], best[i, j] = a.test_dto, methods.index(a.method)
    n = max(len(methods), 1)
    scale = []
    for k, m in enumerate(methods):
        scale += [[k / n, _colour(m)], [(k + 1) / n, _colour(m)]]
    text = [[METHOD_NAMES[methods[b]] if b >= 0 else "—" for b in row] for row in best]
    fig = go.Figure(go.Heatmap(z=np.where(best >= 0, best + 0.5, np.nan) / n, x=[f"{v:g}" for v in ss],
                               y=[f"{v:g}" for v in ps], zmin=0, zmax=1, colorscale=scale or "Greys",
                               showscale=False, text=text, texttemplate="%{text}", customdata=dto_best,
                               hovertemplate="p_y=%{y}, s=%{x}: %{text} (test DTO %{customdata:.3f})<extra></extra>"))
    fig.update_xaxes(title_text="s = P′(first group | first class)", type="category")
    fig.update_yaxes(title_text="p_y = P′(first class)", type="category")
    fig.update_layout(template=TEMPLATE, title="Best method per condition (lowest test DTO)", height=420)
    return fig


def reweight_figure(res: ReweightingAudit) -> go.Figure:
    grid = res.kind == "grid"
    x = [r.condition.s if grid else r.condition.alpha for r in res.rows]
    fig = go.Figure()
    # binary labels: GAP(FPR) equals GAP(TPR) (the FPR of one class is 1 − the TPR of the other), so it is not drawn
    series = [("accuracy", "Accuracy"), ("gap_tpr", "GAP(TPR) = 1 − Fairness"), ("gap_ppr", "GAP(PPR)")]
    for k, (key, name) in enumerate(series):
        fig.add_trace(go.Scatter(x=x, y=[getattr(r.scores, key) for r in res.rows], mode="lines+markers", name=name,
                                 line=dict(color=PALETTE[k], width=3 if key == "gap_tpr" else 2,
                                           dash="solid" if key != "gap_tpr" else "dash")))
    if len(res.groups) > 2:
        fig.add_trace(go.Scatter(x=x, y=[r.gap_tpr_pairwise for r in res.rows], mode="lines+markers",
                                 name="largest pairwise TPR gap", line=dict(color=PALETTE[3], width=2, dash="dot")))
    fig.add_vline(x=0.5 if grid else 1.0, line=dict(color=NEUTRAL, dash="dot"))
    fig.update_layout(template=TEMPLATE, height=420, yaxis_title="value", legend=dict(orientation="h", y=-0.25),
                      xaxis_title="s" if grid else "α of the test-cell reweighting",
                      title="The same predictions scored on reweighted test cells")
    return fig


def table2_figure() -> go.Figure:
    t = table2().sort_values("female ratio")
    fig = go.Figure(go.Bar(x=t["female ratio"], y=t["profession"], orientation="h", marker_color=PALETTE[0],
                           customdata=t[["total", "female"]].to_numpy(),
                           hovertemplate="%{y}: %{x:.3f} female (%{customdata[1]:,} of %{customdata[0]:,})"
                                         "<extra></extra>"))
    fig.add_vline(x=0.5, line=dict(color=NEUTRAL, dash="dot"))
    fig.update_layout(template=TEMPLATE, height=760, xaxis_title="share of women in the profession (training set)",
                      title="Bios training set: female share by profession (the paper's Table 2)",
                      xaxis=dict(range=[0, 1]))
    return fig
