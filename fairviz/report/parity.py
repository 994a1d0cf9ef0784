"""The parity and significance sections of the headless audit (JSON and HTML), registered in ``audit.SECTIONS``.

JSON added to the audit:
- every ``pairs`` entry (group_i, group_j) gains ``ofi``, ``di``, ``dppl`` and the Table 3.2 metrics (``accd``,
  ``mccd``, ``pp``, ``te``, ``eo_fpr_gap``, ``eo_max_gap``, ``aaod``, ``dca``, ``dcr``) plus ``ppv_diff``, null when
  undefined (``parity_undefined`` says why), with the OFI test (``ofi_p_value``, ``ofi_ci``), the four-fifths
  verdict and the reading (``parity_reading``: algorithmic, possible, small, systemic or none);
- every ``groups`` entry gains ``parity``: its counts in the benefit orientation and b, E[b], 𝓑;
- ``match.<group>.<metric>``: score, cdf, p_value, p_adjusted, undefined_probability, method (and more);
- ``cps.<group>``: the CPS-smoothed counts (λ = 5 unless set);
- ``parity_settings``: the benefit orientation, threshold, MATCH reference and λ used.
"""
from __future__ import annotations

import html

from fairviz.data import Predictions
from fairviz.report.options import AuditParams, Section
from fairviz.parity import figures as figs
from fairviz.parity.analysis import ParityAudit, ParityParams, analyse as parity_analyse
from fairviz.report.html import figure_div, table


def _params(options: AuditParams) -> ParityParams:
    return ParityParams(threshold=options.threshold, benefit=options.benefit, alpha=options.match.alpha)


# ----------------------------------------------------------------------------------------------- parity

def parity_run(pred: Predictions, options: AuditParams) -> ParityAudit:
    return parity_analyse(pred, options.attribute, _params(options))


def parity_to_dict(pred: Predictions, audit: ParityAudit, options: AuditParams) -> dict:
    pairs = audit.pair_table()             # in group order: (0, 1), (0, 2), …, like the residual section's pairs
    groups = {g.name: {"parity": {**g.counts.to_dict(), "benefit_rate": g.benefit_rate,
                                  "expected_benefit": g.expected_benefit, "marginal_benefit": g.marginal_benefit}}
              for g in audit.groups}
    return {"pairs": pairs, "groups": groups, "parity_warnings": list(audit.warnings),
            "parity_settings": {"benefit": audit.params.benefit, "threshold": audit.params.threshold,
                                "di_variant": audit.params.di_variant, "ofi_tolerance": audit.params.ofi_tolerance,
                                "alpha": audit.params.alpha, "match_reference": options.match.reference,
                                "match_method": options.match.method, "monte_carlo_draws": options.match.draws,
                                "seed": options.match.seed, "cps_lambda": options.cps_lambda}}


def parity_html(pred, audit: ParityAudit, data: dict) -> list[tuple[str, str]]:
    rows = []
    for p in data["pairs"]:
        rows.append({"pair": f"{p['group_i']} vs {p['group_j']}", "ofi": p.get("ofi"), "p_ofi": p.get("ofi_p_value"),
                     "di": p.get("di"), "four_fifths": p.get("four_fifths"), "dppl": p.get("dppl"),
                     "te": p.get("te"), "dca": p.get("dca"), "reading": p.get("parity_reading")})
    i, j = audit.most_disparate()
    reading = audit.reading(i, j)
    benefit = "the negative prediction (score < τ)" if audit.params.benefit == "negative" else \
        "the positive prediction (score ≥ τ)"
    return [
        ("Group parity: OFI and DI", f"<p class='note'>The benefit is {html.escape(benefit)}.</p>"
         + figure_div(figs.heatmap(audit.matrices["ofi"], highlight=(i, j)))
         + figure_div(figs.heatmap(audit.matrices["di"]))
         + figure_div(figs.benefit_figure(audit))
         + f"<p><b>{html.escape(reading.headline)}.</b> {html.escape(reading.text)}</p>"),
        ("Parity metrics per pair", table(rows, [
            ("pair", "Pair (i vs j)"), ("ofi", "OFI"), ("p_ofi", "p (OFI)"), ("di", "DI"),
            ("four_fifths", "Four-fifths"), ("dppl", "DPPL"), ("te", "TE"), ("dca", "DCA"), ("reading", "Reading")])),
    ]


# ----------------------------------------------------------------------------------------------- significance


SECTION = Section("parity", parity_run, parity_to_dict, parity_html, weighted=True)
