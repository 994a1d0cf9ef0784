"""The audit as a release gate: a materiality policy from the command line or a small file, an exit code, and the
findings as JUnit XML (one test case per comparison; a headline finding fails, a group too small to tell is
skipped), so a CI job can refuse a model whose audit holds a material, significant disparity."""
from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from fairviz.findings import (KINDS, AttributesSummary, FindingsAudit, FindingsParams, attributed_text, finding_text,
                              small_group_text)

FAIL_ON = ("never", "material")
POLICY_KEYS = {"alpha", "min_group_size", "max_findings", "reference", "materiality"}


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the file and the key."""


def load_policy(path: Path, base: FindingsParams = FindingsParams()) -> FindingsParams:
    """A policy file (TOML or JSON): ``alpha``, ``min_group_size``, ``max_findings``, ``reference`` and
    ``materiality`` (a table of kind = threshold). Unknown keys are refused, so a typo never loosens the gate."""
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as err:
        raise PolicyError(f"the policy file '{path}' cannot be read: {err}") from err
    return policy_from_dict(raw, base, source=f"policy file '{path}'")


def policy_from_dict(raw: dict, base: FindingsParams = FindingsParams(), source: str = "policy") -> FindingsParams:
    if not isinstance(raw, dict):
        raise PolicyError(f"the {source} must be a table of settings")
    unknown = set(raw) - POLICY_KEYS
    if unknown:
        raise PolicyError(f"the {source} has unknown keys: {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(sorted(POLICY_KEYS))})")
    materiality = raw.get("materiality", {})
    if not isinstance(materiality, dict) or set(materiality) - set(KINDS):
        raise PolicyError(f"the {source}'s materiality must map finding kinds ({', '.join(KINDS)}) to thresholds")
    try:
        params = FindingsParams(alpha=float(raw.get("alpha", base.alpha)),
                                min_group_size=int(raw.get("min_group_size", base.min_group_size)),
                                max_findings=int(raw.get("max_findings", base.max_findings)),
                                reference=raw.get("reference", base.reference), materiality=base.materiality)
        params = params.with_materiality(**{k: float(v) for k, v in materiality.items()})
    except (TypeError, ValueError) as err:
        raise PolicyError(f"the {source} has a value of the wrong type: {err}") from err
    if not 0 < params.alpha < 1 or params.min_group_size < 1 or any(v < 0 for _, v in params.materiality):
        raise PolicyError(f"the {source} is out of range (0 < alpha < 1, min_group_size ≥ 1, thresholds ≥ 0)")
    return params


def exit_code(findings: FindingsAudit | AttributesSummary | None, fail_on: str, failures=()) -> int:
    """1 when the gate is on and the audit cannot pass: the Summary holds a material, significant finding, or part
    of the audit could not be computed (``failures``: ``Audit.failures()``; no Summary at all is one). The gate
    fails closed: what was not checked is never passed. 0 otherwise."""
    if fail_on != "material":
        return 0
    return int(bool(failures) or findings is None or findings.material_count > 0)


def failure_text(failure: dict) -> str:
    """One failed part of the audit in a sentence: which section, of which attribute, and why."""
    where = f"the {failure['section']} section" if failure["section"] != "attribute" else "the attribute"
    return f"{where} of '{failure['attribute']}' could not be computed: {failure['error']}"


def gate_record(findings, fail_on: str, failures=()) -> dict:
    """The JSON's ``gate``: the setting, the exit code, the material findings and every failed part, so a CI log
    says why the gate failed."""
    return {"fail_on": fail_on, "exit_code": exit_code(findings, fail_on, failures),
            "material_count": findings.material_count if findings is not None else None,
            "failed": [{**f, "sentence": failure_text(f)} for f in failures]}


def junit_xml(findings: FindingsAudit | AttributesSummary | None, failures=()) -> str:
    """The findings as JUnit XML (none when no Summary could be formed); each part of the audit that could not be
    computed is a test case in error, so the CI job that reads the XML fails closed as the exit code does."""
    found, small = (findings.findings, findings.small_groups) if findings is not None else ((), ())
    suite = ET.Element("testsuite", name="fairviz audit" + (f": {findings.attribute}" if findings is not None else ""),
                       tests=str(len(found) + len(small) + len(failures)),
                       failures=str(findings.material_count if findings is not None else 0),
                       errors=str(len(failures)), skipped=str(len(small)))
    for f in failures:
        case = ET.SubElement(suite, "testcase", classname="fairviz.section", name=f"{f['attribute']}: {f['section']}")
        ET.SubElement(case, "error", message=failure_text(f), type="section_failed")
    if findings is None:
        ET.indent(suite)
        return ET.tostring(suite, encoding="unicode", xml_declaration=True)
    across = isinstance(findings, AttributesSummary)     # several attributes: each case names its attribute
    for f in findings.findings:
        c = f.candidate
        name = (f"{c.attribute}: " if across else "") + f"{c.group} vs {c.reference}" + \
            (f" (class {c.class_name})" if c.class_name is not None else "")
        case = ET.SubElement(suite, "testcase", classname=f"fairviz.{c.kind}", name=name)
        if f.headline:
            sentence = attributed_text(f, findings) if across else finding_text(f, findings)
            failure = ET.SubElement(case, "failure", message=sentence.plain(), type=c.kind)
            failure.text = f"{c.test}; materiality {findings.params.threshold(c.kind):g}"
    for s in findings.small_groups:
        case = ET.SubElement(suite, "testcase", classname="fairviz.size",
                             name=(f"{s.attribute}: " if across else "") + f"{s.group}")
        ET.SubElement(case, "skipped", message=small_group_text(s, findings.params.min_group_size).plain())
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)
