#!/usr/bin/env python3
"""Compares the sbcd chart's rendered manifests (a file of YAML documents from render.py or
`helm template`) with scripts/k8s/sbcd-daemonset.yaml: the Deployment's pod must be the
DaemonSet's pod (containers, volumes, hostNetwork, grace period: every key, compared as
parsed YAML) except for what the chart adds on purpose (the release label, imagePullPolicy,
the anti-affinity, nodeSelector, tolerations); and the chart must run one pod per node
(required anti-affinity on kubernetes.io/hostname selecting its own pods), replicaCount
replicas, a grace period above the drain timeout the preStop passes, and its config from the
ConfigMap it renders. Prints each difference; exit 1 when there is one.
Usage: compare.py RENDERED.yaml DAEMONSET.yaml REPLICAS DRAIN_TIMEOUT_S"""
import sys
import yaml

def main():
    rendered, ds_file, replicas, drain = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    ds = yaml.safe_load(open(ds_file))
    problems = []
    by_kind = {d["kind"]: d for d in docs}
    dep, cm = by_kind.get("Deployment"), by_kind.get("ConfigMap")
    if dep is None or cm is None:
        print("compare: the chart must render a Deployment and a ConfigMap, got %s" % sorted(by_kind)); return 1
    pod, want = dep["spec"]["template"]["spec"], ds["spec"]["template"]["spec"]
    # What the chart adds on purpose; everything else must equal the DaemonSet's pod.
    added = {"affinity", "nodeSelector", "tolerations"}
    for key in sorted(set(pod) | set(want)):
        if key in added or key == "containers": continue
        if pod.get(key) != want.get(key):
            problems.append("pod %s: chart %r, DaemonSet %r" % (key, pod.get(key), want.get(key)))
    if len(pod["containers"]) != len(want["containers"]):
        problems.append("containers: chart has %d, DaemonSet %d" % (len(pod["containers"]), len(want["containers"])))
    for got, exp in zip(pod["containers"], want["containers"]):
        for key in sorted(set(got) | set(exp)):
            if key == "imagePullPolicy": continue
            if got.get(key) != exp.get(key):
                problems.append("container %s %s: chart %r, DaemonSet %r" % (got.get("name"), key, got.get(key), exp.get(key)))
    labels = dep["spec"]["template"]["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in ds["spec"]["template"]["metadata"]["labels"].items()):
        problems.append("pod labels %r lack the DaemonSet's %r" % (labels, ds["spec"]["template"]["metadata"]["labels"]))
    if dep["spec"].get("selector", {}).get("matchLabels") != labels:
        problems.append("selector %r is not the pod's labels %r" % (dep["spec"].get("selector"), labels))
    # One pod per node.
    terms = ((pod.get("affinity") or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    if not any(t.get("topologyKey") == "kubernetes.io/hostname" and
               t.get("labelSelector", {}).get("matchLabels") == labels for t in terms):
        problems.append("no required podAntiAffinity on kubernetes.io/hostname selecting the chart's own pods")
    if dep["spec"].get("replicas") != replicas:
        problems.append("replicas %r, replicaCount %d" % (dep["spec"].get("replicas"), replicas))
    # Drain: preStop passes the drain timeout; the grace period is above it.
    pre = pod["containers"][0].get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    if "drain" not in pre or "--wait" not in pre or "--timeout" not in pre:
        problems.append("preStop %r is not `sbcctl drain --wait --timeout S`" % pre)
    elif int(pre[pre.index("--timeout") + 1]) != drain:
        problems.append("preStop drains for %s s, drain.timeoutSeconds is %d" % (pre[pre.index("--timeout") + 1], drain))
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if grace <= drain:
        problems.append("terminationGracePeriodSeconds %d is not above the drain timeout %d" % (grace, drain))
    # Config from the ConfigMap.
    vol = [v for v in pod.get("volumes", []) if "configMap" in v]
    if not vol or vol[0]["configMap"].get("name") != cm["metadata"]["name"]:
        problems.append("no volume from the ConfigMap %s" % cm["metadata"]["name"])
    if "sbc.toml" not in cm.get("data", {}):
        problems.append("the ConfigMap has no sbc.toml")
    for p in problems: print("compare: " + p)
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
