"""Findings: ranked, significance- and size-aware statements across every audit section (what is unfair, for whom,
how sure we are)."""
from fairviz.findings.analysis import default_words, has_candidates, summarise, summarise_attributes
from fairviz.findings.inputs import AuditResults
from fairviz.findings.views import finding_view, page_metric
from fairviz.findings.candidates import reference_group
from fairviz.findings.readings import (across_headline_text, across_policy_text, across_unremarkable_text,
                                      attributed_text, failed_attribute_text, finding_text, headline_text,
                                      no_slice_text, nothing_found_text, policy_text, slice_finding_text,
                                      small_group_text, unremarkable_text, untested_text)
from fairviz.findings.results import (ALL_GROUPS, KIND_TITLES, KINDS, TASK_KINDS, AttributesSummary, Candidate,
                                      Finding, FindingsAudit, FindingsParams, OutcomeWords, SliceFinding, SmallGroup)

__all__ = ["ALL_GROUPS", "AuditResults", "TASK_KINDS", "has_candidates", "KINDS", "KIND_TITLES", "Candidate", "Finding", "FindingsAudit", "FindingsParams", "OutcomeWords",
           "SmallGroup", "default_words", "finding_text", "headline_text", "policy_text", "reference_group",
           "small_group_text", "summarise", "unremarkable_text", "untested_text", "finding_view", "page_metric",
           "AttributesSummary", "SliceFinding", "summarise_attributes", "across_headline_text", "across_policy_text",
           "across_unremarkable_text", "attributed_text", "failed_attribute_text", "slice_finding_text",
           "nothing_found_text", "no_slice_text"]
