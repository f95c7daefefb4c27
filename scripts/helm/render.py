#!/usr/bin/env python3
"""Renders a Helm chart's templates without Helm (Debian has no helm package), for
scripts/helm/check.sh. Handles the subset of Go templates the sbcd chart is kept to:
  {{ .Values.a.b }}  {{ .Release.Name }}  {{ .Release.Namespace }}  {{ .Chart.Name }}
  {{- if COND }} ... {{- else }} ... {{- end }}   (COND: a value, not X, le/lt/ge/gt/eq/ne A B)
  pipelines into toYaml, nindent N, indent N, quote, default X, int; {{ fail "message" }}
  "{{-" and "-}}" trim the whitespace before and after, as Go's text/template does.
Anything else is an error (so that a template never silently renders wrong).
Usage: render.py CHART_DIR [--release NAME] [--namespace NS] [--set key.path=value ...]
Prints the rendered documents (each with a "# Source:" line, as `helm template` does).
Exit 1 with the message of a `fail` or of an unsupported construct."""
import argparse, os, re, sys
import yaml

class RenderError(Exception):
    pass

ACTION = re.compile(r"{{(-?)\s*(.*?)\s*(-?)}}", re.S)

def tokenize(text):
    out, pos = [], 0
    for m in ACTION.finditer(text):
        lit = text[pos:m.start()]
        if m.group(1): lit = lit.rstrip()
        if out and out[-1][0] == "act" and out[-1][2]: lit = lit.lstrip()
        out.append(("text", lit, False))
        out.append(("act", m.group(2), bool(m.group(3))))
        pos = m.end()
    lit = text[pos:]
    if out and out[-1][0] == "act" and out[-1][2]: lit = lit.lstrip()
    out.append(("text", lit, False))
    return out

def parse(tokens, i=0, stop=("end",)):
    """A list of nodes: ("text", s), ("expr", e), ("if", cond, then, else_)."""
    nodes = []
    while i < len(tokens):
        kind, body, _ = tokens[i]
        if kind == "text":
            nodes.append(("text", body)); i += 1; continue
        word = body.split(None, 1)[0] if body else ""
        if word in stop:
            return nodes, i
        if word == "if":
            then, i = parse(tokens, i + 1, ("else", "end"))
            other = []
            if tokens[i][1].split(None, 1)[0] == "else":
                other, i = parse(tokens, i + 1, ("end",))
            nodes.append(("if", body[2:].strip(), then, other)); i += 1; continue
        if word in ("range", "with", "define", "include", "template", "tpl"):
            raise RenderError("unsupported template construct: {{ %s }}" % body)
        nodes.append(("expr", body)); i += 1
    if stop != ("end",) or i < len(tokens):
        pass
    return nodes, i

def split_args(s):
    return re.findall(r'"(?:[^"\\]|\\.)*"|\S+', s)

def truthy(v):
    return not (v is None or v is False or v == 0 or v == "" or v == {} or v == [])

def to_yaml(v):
    return yaml.safe_dump(v, default_flow_style=False, sort_keys=True).rstrip("\n")

class Renderer:
    def __init__(self, values, release, namespace, chart):
        self.ctx = {"Values": values, "Release": {"Name": release, "Namespace": namespace, "Service": "Helm"},
                    "Chart": {"Name": chart.get("name"), "Version": chart.get("version"),
                              "AppVersion": chart.get("appVersion")}}

    def value(self, tok):
        if tok.startswith('"'): return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
        if re.fullmatch(r"-?\d+", tok): return int(tok)
        if tok.startswith("."):
            v = self.ctx
            for part in tok[1:].split("."):
                if not isinstance(v, dict): raise RenderError("%s: not a map at %s" % (tok, part))
                v = v.get(part)
            return v
        raise RenderError("unsupported value: %s" % tok)

    def call(self, fn, args):
        cmp = {"le": lambda a, b: a <= b, "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b,
               "gt": lambda a, b: a > b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
        if fn in cmp:
            if len(args) != 2: raise RenderError("%s takes 2 arguments" % fn)
            return cmp[fn](*args)
        if fn == "not": return not truthy(args[0])
        if fn == "toYaml": return to_yaml(args[0])
        if fn == "nindent": return "\n" + "\n".join(" " * args[0] + l if l else l for l in str(args[1]).split("\n"))
        if fn == "indent": return "\n".join(" " * args[0] + l if l else l for l in str(args[1]).rstrip("\n").split("\n"))
        if fn == "quote": return '"%s"' % str(args[0]).replace('"', '\\"')
        if fn == "default": return args[1] if truthy(args[1]) else args[0]
        if fn == "int": return int(args[0])
        if fn == "fail": raise RenderError(str(args[0]))
        raise RenderError("unsupported function: %s" % fn)

    def eval(self, expr):
        result, first = None, True
        for cmd in (c.strip() for c in re.split(r'\|(?=(?:[^"]*"[^"]*")*[^"]*$)', expr)):
            toks = split_args(cmd)
            if toks[0].startswith(".") or toks[0].startswith('"') or re.fullmatch(r"-?\d+", toks[0]):
                if len(toks) != 1 or not first: raise RenderError("unsupported pipeline: %s" % expr)
                result = self.value(toks[0])
            else:
                args = [self.value(t) for t in toks[1:]] + ([] if first else [result])
                result = self.call(toks[0], args)
            first = False
        return result

    def render(self, nodes):
        out = []
        for n in nodes:
            if n[0] == "text": out.append(n[1])
            elif n[0] == "expr":
                v = self.eval(n[1])
                out.append("" if v is None else str(v).lower() if isinstance(v, bool) else str(v))
            else:
                out.append(self.render(n[2] if truthy(self.eval(n[1])) else n[3]))
        return "".join(out)

def set_value(values, path, raw):
    keys = path.split(".")
    for k in keys[:-1]: values = values.setdefault(k, {})
    values[keys[-1]] = yaml.safe_load(raw)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chart"); ap.add_argument("--release", default="sbcd"); ap.add_argument("--namespace", default="default")
    ap.add_argument("--set", action="append", default=[])
    a = ap.parse_args()
    chart = yaml.safe_load(open(os.path.join(a.chart, "Chart.yaml")))
    values = yaml.safe_load(open(os.path.join(a.chart, "values.yaml"))) or {}
    for s in a.set:
        k, _, v = s.partition("="); set_value(values, k, v)
    r = Renderer(values, a.release, a.namespace, chart)
    tdir = os.path.join(a.chart, "templates")
    try:
        for name in sorted(os.listdir(tdir)):
            if not name.endswith((".yaml", ".yml")): continue
            nodes, _ = parse(tokenize(open(os.path.join(tdir, name)).read()))
            text = r.render(nodes).strip("\n")
            if text.strip(): print("---\n# Source: %s/templates/%s\n%s" % (chart["name"], name, text))
    except RenderError as e:
        print("render.py: %s" % e, file=sys.stderr); sys.exit(1)

if __name__ == "__main__":
    main()
