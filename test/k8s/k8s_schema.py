#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Offline schema check of the DRA and admission objects nodeprobe ships or documents (issue 28):
# resource.k8s.io/v1 DeviceClass, ResourceClaim, ResourceClaimTemplate, the resource claims of a
# Pod, admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and its Binding. No API server
# (and so no OpenAPI document) is at hand in the tests, so the fields are written down here from
# the Go types: kubernetes/kubernetes staging/src/k8s.io/api/resource/v1/types.go (DeviceClassSpec,
# DeviceSelector, CELDeviceSelector, DeviceClaim, DeviceRequest, ExactDeviceRequest,
# DeviceSubRequest, DeviceConstraint, DeviceClaimConfiguration, OpaqueDeviceConfiguration,
# DeviceToleration, CapacityRequirements), staging/src/k8s.io/api/admissionregistration/v1/types.go
# (ValidatingAdmissionPolicySpec, MatchResources, NamedRuleWithOperations, Validation, Variable,
# MatchCondition, ValidatingAdmissionPolicyBindingSpec) and core/v1 (PodResourceClaim,
# ResourceClaim in container resources); limits from the same files and
# pkg/apis/resource/validation/validation.go (../shared/reference/dra.md, section 4).
# An unknown field, a missing required one, a wrong type or a name the API refuses is a problem
# "Kind/name: path: what". Imported by check-manifests; run alone: objects (a JSON stream) on
# stdin, one line per problem, exit 1 if any, 0 otherwise, 2 when no object of these kinds came.
import json
import re
import sys

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# an extended resource name: <domain>/<name>, not kubernetes.io (core/v1 IsExtendedResourceName)
EXTENDED = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
CEL_MAX = 10 * 1024  # CELSelectorExpressionMaxLength
SELECTORS_MAX = 32  # DeviceSelectorsMaxSize
REQUESTS_MAX = 32  # DeviceRequestsMaxSize
FIRST_AVAILABLE_MAX = 8  # FirstAvailableDeviceRequestMaxSize

S, I, B, ANY = "string", "int", "bool", "any"


def obj(fields, required=()):
    return ("obj", fields, tuple(required))


def lst(item, max_items=None):
    return ("list", item, max_items)


CEL = obj({"expression": S}, ["expression"])
SELECTOR = obj({"cel": CEL}, ["cel"])
OPAQUE = obj({"driver": S, "parameters": ANY}, ["driver", "parameters"])
TOLERATION = obj({"key": S, "operator": S, "value": S, "effect": S, "tolerationSeconds": I})
CAPACITY_REQ = obj({"requests": ANY})
EXACT = obj({"deviceClassName": S, "selectors": lst(SELECTOR, SELECTORS_MAX), "allocationMode": S,
             "count": I, "adminAccess": B, "tolerations": lst(TOLERATION, 16), "capacity": CAPACITY_REQ},
            ["deviceClassName"])
SUBREQUEST = obj({"name": S, "deviceClassName": S, "selectors": lst(SELECTOR, SELECTORS_MAX),
                  "allocationMode": S, "count": I, "tolerations": lst(TOLERATION, 16),
                  "capacity": CAPACITY_REQ}, ["name", "deviceClassName"])
REQUEST = obj({"name": S, "exactly": EXACT, "firstAvailable": lst(SUBREQUEST, FIRST_AVAILABLE_MAX)},
              ["name"])
CONSTRAINT = obj({"requests": lst(S), "matchAttribute": S, "distinctAttribute": S})
CLAIM_CONFIG = obj({"requests": lst(S), "opaque": OPAQUE})
CLAIM_SPEC = obj({"devices": obj({"requests": lst(REQUEST, REQUESTS_MAX),
                                  "constraints": lst(CONSTRAINT, 32),
                                  "config": lst(CLAIM_CONFIG, 32)})})
META = obj({"name": S, "generateName": S, "namespace": S, "labels": ANY, "annotations": ANY})
RULE = obj({"apiGroups": lst(S), "apiVersions": lst(S), "operations": lst(S), "resources": lst(S),
            "resourceNames": lst(S), "scope": S})
MATCH = obj({"namespaceSelector": ANY, "objectSelector": ANY, "resourceRules": lst(RULE),
             "excludeResourceRules": lst(RULE), "matchPolicy": S})
NAMED_EXPR = obj({"name": S, "expression": S}, ["name", "expression"])

SPECS = {
    ("resource.k8s.io/v1", "DeviceClass"): obj({
        "selectors": lst(SELECTOR, SELECTORS_MAX),
        "config": lst(obj({"opaque": OPAQUE}), 32),
        "extendedResourceName": S}),
    ("resource.k8s.io/v1", "ResourceClaim"): CLAIM_SPEC,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): obj({"metadata": ANY, "spec": CLAIM_SPEC},
                                                         ["spec"]),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): obj({
        "paramKind": obj({"apiVersion": S, "kind": S}),
        "matchConstraints": MATCH,
        "validations": lst(obj({"expression": S, "message": S, "reason": S,
                                "messageExpression": S}, ["expression"])),
        "failurePolicy": S,
        "auditAnnotations": lst(obj({"key": S, "valueExpression": S}, ["key", "valueExpression"])),
        "matchConditions": lst(NAMED_EXPR, 64),
        "variables": lst(NAMED_EXPR)}, ["matchConstraints"]),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"): obj({
        "policyName": S, "paramRef": ANY, "matchResources": MATCH,
        "validationActions": lst(S)}, ["policyName", "validationActions"]),
}
POD_CLAIM = obj({"name": S, "resourceClaimName": S, "resourceClaimTemplateName": S}, ["name"])


def walk(where, path, schema, v, problems):
    """Check v against schema; problems get "where: path: what"."""
    if schema == ANY:
        return
    kind = schema if isinstance(schema, str) else schema[0]
    want = {S: str, I: int, B: bool, "obj": dict, "list": list}[kind]
    if not isinstance(v, want) or (kind == I and isinstance(v, bool)):
        problems.append(f"{where}: {path}: want {'object' if kind == 'obj' else kind}, got {json.dumps(v)[:60]}")
        return
    if kind == "obj":
        _, fields, required = schema
        for k in v:
            if k not in fields:
                problems.append(f"{where}: {path}.{k}: unknown field")
            else:
                walk(where, f"{path}.{k}", fields[k], v[k], problems)
        for k in required:
            if k not in v:
                problems.append(f"{where}: {path}.{k}: required")
    elif kind == "list":
        _, item, max_items = schema
        if max_items is not None and len(v) > max_items:
            problems.append(f"{where}: {path}: {len(v)} items, at most {max_items}")
        for i, x in enumerate(v):
            walk(where, f"{path}[{i}]", item, x, problems)


def rules(where, kind, spec, problems):
    """The API's value rules beyond the shape (resource/validation, admissionregistration)."""
    def cels(sels, path):
        for i, s in enumerate(sels or []):
            e = (s.get("cel") or {}).get("expression")
            if isinstance(e, str) and not e.strip():
                problems.append(f"{where}: {path}[{i}].cel.expression: empty")
            if isinstance(e, str) and len(e) > CEL_MAX:
                problems.append(f"{where}: {path}[{i}].cel.expression: {len(e)} characters, at most {CEL_MAX}")

    def claim(c, path):
        for i, r in enumerate(((c or {}).get("devices") or {}).get("requests") or []):
            p = f"{path}.devices.requests[{i}]"
            if not DNS_LABEL.match(str(r.get("name", ""))):
                problems.append(f"{where}: {p}.name: '{r.get('name')}' is no DNS label")
            if ("exactly" in r) == ("firstAvailable" in r):
                problems.append(f"{where}: {p}: exactly one of exactly, firstAvailable")
            for sub, sp in [(r.get("exactly"), ".exactly")] + [(s, f".firstAvailable[{j}]") for j, s in enumerate(r.get("firstAvailable") or [])]:
                if not isinstance(sub, dict):
                    continue
                if not DNS_SUBDOMAIN.match(str(sub.get("deviceClassName", ""))):
                    problems.append(f"{where}: {p}{sp}.deviceClassName: '{sub.get('deviceClassName')}' is no DNS subdomain")
                if sub.get("allocationMode", "ExactCount") not in ("ExactCount", "All"):
                    problems.append(f"{where}: {p}{sp}.allocationMode: want ExactCount or All")
                cels(sub.get("selectors"), f"{p}{sp}.selectors")

    if kind == "DeviceClass":
        cels(spec.get("selectors"), "spec.selectors")
        ern = spec.get("extendedResourceName")
        if isinstance(ern, str) and (not EXTENDED.match(ern) or ern.split("/")[0].endswith("kubernetes.io")):
            problems.append(f"{where}: spec.extendedResourceName: '{ern}' is no extended resource name (<domain>/<name>)")
    elif kind == "ResourceClaim":
        claim(spec, "spec")
    elif kind == "ResourceClaimTemplate":
        claim(spec.get("spec"), "spec.spec")
    elif kind == "ValidatingAdmissionPolicy":
        if spec.get("failurePolicy", "Fail") not in ("Fail", "Ignore"):
            problems.append(f"{where}: spec.failurePolicy: want Fail or Ignore")
        for i, r in enumerate((spec.get("matchConstraints") or {}).get("resourceRules") or []):
            for op in r.get("operations") or []:
                if op not in ("*", "CREATE", "UPDATE", "DELETE", "CONNECT"):
                    problems.append(f"{where}: spec.matchConstraints.resourceRules[{i}].operations: '{op}'")
        for f in ("matchConditions", "variables"):
            names = [x.get("name") for x in spec.get(f) or []]
            if len(names) != len(set(names)):
                problems.append(f"{where}: spec.{f}: names repeat")
        for i, v in enumerate(spec.get("validations") or []):
            if not str(v.get("expression", "")).strip():
                problems.append(f"{where}: spec.validations[{i}].expression: empty")
    elif kind == "ValidatingAdmissionPolicyBinding":
        acts = spec.get("validationActions") or []
        if not acts or any(a not in ("Deny", "Warn", "Audit") for a in acts) or ("Deny" in acts and "Warn" in acts):
            problems.append(f"{where}: spec.validationActions: {acts}: want Deny, Warn or Audit (not Deny with Warn)")


def check(objs, problems):
    """Check every object of the kinds above in objs; the number checked."""
    n = 0
    policies = {o.get("metadata", {}).get("name") for o in objs if o.get("kind") == "ValidatingAdmissionPolicy"}
    for o in objs:
        key = (o.get("apiVersion"), o.get("kind"))
        meta = o.get("metadata") or {}
        where = f"{o.get('kind')}/{meta.get('name')}"
        if o.get("kind") == "Pod":
            spec = o.get("spec") or {}
            if not spec.get("resourceClaims"):
                continue
            n += 1
            walk(where, "spec.resourceClaims", lst(POD_CLAIM), spec["resourceClaims"], problems)
            names = {c.get("name") for c in spec["resourceClaims"]}
            for c in spec.get("containers") or []:
                for i, rc in enumerate((c.get("resources") or {}).get("claims") or []):
                    walk(where, f"{c.get('name')}.resources.claims[{i}]", obj({"name": S, "request": S}, ["name"]), rc, problems)
                    if rc.get("name") not in names:
                        problems.append(f"{where}: {c.get('name')}: claim '{rc.get('name')}' is not in spec.resourceClaims")
            for c in spec["resourceClaims"]:
                if ("resourceClaimName" in c) == ("resourceClaimTemplateName" in c):
                    problems.append(f"{where}: spec.resourceClaims {c.get('name')}: exactly one of resourceClaimName, resourceClaimTemplateName")
            continue
        if key not in SPECS:
            if o.get("kind") in {k for _, k in SPECS}:
                problems.append(f"{where}: apiVersion {o.get('apiVersion')}: want {[a for a, k in SPECS if k == o.get('kind')][0]}")
            continue
        n += 1
        if not DNS_SUBDOMAIN.match(str(meta.get("name", ""))) and not meta.get("generateName"):
            problems.append(f"{where}: metadata.name: no DNS subdomain")
        walk(where, "metadata", META, meta, problems)
        if "spec" not in o:
            problems.append(f"{where}: spec: required")
            continue
        walk(where, "spec", SPECS[key], o["spec"], problems)
        rules(where, o["kind"], o["spec"] if isinstance(o["spec"], dict) else {}, problems)
        if o["kind"] == "ValidatingAdmissionPolicyBinding" and policies and o["spec"].get("policyName") not in policies:
            problems.append(f"{where}: spec.policyName: no ValidatingAdmissionPolicy '{o['spec'].get('policyName')}' here")
    return n


def main():
    text, dec, objs, i = sys.stdin.read(), json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        o, i = dec.raw_decode(text, i)
        objs.extend(o.get("items", [])) if o.get("kind") == "List" else objs.append(o)
    problems = []
    n = check(objs, problems)
    for p in problems:
        print(p)
    if n == 0:
        print("k8s_schema: error: no DeviceClass, ResourceClaim(Template), Pod with claims or admission policy", file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
