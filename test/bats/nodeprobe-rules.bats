#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# NFD's rule language end to end: files in, the features.d file out (order of objects across
# files, rule.matched across objects, a failing rule beside working ones).
load helpers

setup() {
  T=$(mktemp -d)
  mkdir -p "$T/proc" "$T/fd"
  NP=("$BUILD/nodeprobe" --no-builtin-rules --sysfs "$FIX/pci/linuxhw-intel-nuc12-alderlake"
      --proc "$T/proc" --modules-dir "$T/modules" --features-dir "$T/fd")
}

teardown() {
  rm -rf "$T"
}

# nfr FILE NAME RULES: a NodeFeatureRule object NAME with RULES (YAML, under spec.rules) into FILE.
nfr() {
  printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: %s\nspec:\n  rules:\n%s\n' "$2" "$3" > "$1"
}

@test "two objects set one label: nfd-master's order (metadata.name), not the order of --rules" {
  nfr "$T/1.yaml" zz-late '    - name: late
      labels: {example.com/who: zz-late}
      matchFeatures:
        - feature: rule.matched
          matchExpressions:
            example.com/base: {op: IsTrue}'
  nfr "$T/2.yaml" aa-early '    - name: early
      labels: {example.com/who: aa-early, example.com/base: "true"}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, value: ["8086"]}
            class: {op: In, value: ["0300"]}'
  run "${NP[@]}" --rules "$T/1.yaml" --rules "$T/2.yaml"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = $'example.com/base=true\nexample.com/who=zz-late' ]
}

@test "vars and varsTemplate feed later rules through rule.matched, never the file" {
  nfr "$T/r.yaml" vars '    - name: gpu-ids
      varsTemplate: |
        {{ range .pci.device }}gpu-{{ .device }}={{ .class }}
        {{ end }}
      vars: {has-gpu: "true"}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, value: ["8086"]}
            class: {op: In, value: ["0300"]}
    - name: high-level
      labelsTemplate: |
        {{ range .rule.matched }}example.com/{{ .Name }}={{ .Value }}
        {{ end }}
      matchFeatures:
        - feature: rule.matched
          matchExpressions:
            has-gpu: {op: IsTrue}
          matchName: {op: InRegexp, value: ["^gpu-"]}'
  run "${NP[@]}" --rules "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = $'example.com/gpu-46a6=0300\nexample.com/has-gpu=true' ]
}

@test "a rule NFD cannot evaluate gives a warning and nothing; the run and the other rules go on" {
  printf 'keep.example.com/x=true\n' > "$T/fd/nodeprobe"
  nfr "$T/r.yaml" mixed '    - name: broken
      labels: {example.com/broken: "true"}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: Gt, value: ["8086"]}
    - name: fine
      labels: {example.com/fine: "true"}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, value: ["8086"]}'
  run "${NP[@]}" --rules "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = "example.com/fine=true" ]
  [[ "$output" == *"r.yaml:7:7: rule 'broken' not applied: not a number '"*"'"* ]]
}

@test "the issue's rule on kernel.version: 'full Gt 5.15.0' as a version, from <proc>/sys/kernel/osrelease" {
  mkdir -p "$T/proc/sys/kernel"
  nfr "$T/r.yaml" kver '    - name: new-kernel
      labels: {example.com/new-kernel: "true"}
      matchFeatures:
        - feature: kernel.version
          matchExpressions:
            full: {op: Gt, value: ["5.15.0"], type: version}
    - name: always
      labels: {example.com/always: "true"}'
  local v want
  for v in 6.1.0-50-arm64:true 5.15.0-91-generic:false 5.4.0-150-generic:false 6.8:true 10.0.1:true; do
    printf '%s\n' "${v%:*}" > "$T/proc/sys/kernel/osrelease"
    run "${NP[@]}" --rules "$T/r.yaml"
    [ "$status" -eq 0 ]
    want="example.com/always=true"
    [ "${v#*:}" = true ] && want=$'example.com/always=true\nexample.com/new-kernel=true'
    [ "$(cat "$T/fd/nodeprobe")" = "$want" ] || { echo "${v%:*}: $(cat "$T/fd/nodeprobe")" >&2; false; }
  done
  # RHEL's release is no version for NFD (its '_'): that rule fails, the run and the rest go on
  printf '5.14.0-362.8.1.el9_3.x86_64\n' > "$T/proc/sys/kernel/osrelease"
  run "${NP[@]}" --rules "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/fd/nodeprobe")" = "example.com/always=true" ]
  [[ "$output" == *"rule 'new-kernel' not applied: not a version '5.14.0-362.8.1.el9_3.x86_64'"* ]]
}

# bounded CMD...: run CMD with at most 512 MiB of address space (issue 17: the old code took
# gigabytes), except under ASan, whose shadow memory needs far more (it checks the rest).
bounded() {
  if grep -qa __asan_init "$BUILD/nodeprobe"; then "$@"; return; fi
  (ulimit -v 524288 && exec "$@")
}

# shared_regexes FILE N R: R rules whose InRegexp 'vendor' is one aliased list of N patterns,
# the last of them '^8086$' (every rule matches the NUC's Intel devices).
shared_regexes() {
  local i
  {
    printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: shared\nspec:\n  rules:\n'
    printf '    - name: r0\n      labels: {example.com/r0: "true"}\n      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            vendor:\n              op: InRegexp\n              value: &pats\n'
    for ((i = 0; i < $2; i++)); do printf '                - "^%04x(x|y)+z$"\n' $((i + 4096)); done
    printf '                - "^8086$"\n'
    for ((i = 1; i < $3; i++)); do
      printf '    - name: r%d\n      labels: {example.com/r%d: "true"}\n      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            vendor: {op: InRegexp, value: *pats}\n' $i $i
    done
  } > "$1"
}

@test "50 rules sharing one aliased list of 9000 regexes: each compiled once, within 512 MiB" {
  shared_regexes "$T/r.yaml" 9000 50
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(wc -l < "$T/fd/nodeprobe")" -eq 50 ]
  grep -qx 'example.com/r0=true' "$T/fd/nodeprobe"
  grep -qx 'example.com/r49=true' "$T/fd/nodeprobe"
}

# Issue 27, 1: a limit of all the rules loaded skips the rule that would pass it, by name, with
# none of its patterns; the others label, exit 0 (it failed the run: exit 3, no labels at all).
@test "issue 17's 415 KB file (50 rules, 12000 aliased regexes): each rule skipped by name with the limit, the others label" {
  local i
  shared_regexes "$T/r.yaml" 12000 50
  printf '    - name: plain\n      labels: {example.com/plain: "true"}\n' >> "$T/r.yaml"
  [ "$(stat -c %s "$T/r.yaml")" -gt 400000 ]
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  [ "$status" -eq 0 ]
  [ "$(printf '%s\n' "$output" | grep -c "not applied")" -eq 50 ]
  [ "$(printf '%s\n' "$output" | head -1)" = "nodeprobe: warning: $T/r.yaml:7:7: rule 'r0' not applied: InRegexp value '^3710(x|y)+z\$': more than 10000 distinct regular expressions in the rules loaded (the limit): join patterns with '|'" ]
  for i in 1 25 49; do
    [ "$(printf '%s\n' "$output" | grep -c "rule 'r$i' not applied: InRegexp value '^3710(x|y)+z\$': more than 10000 distinct")" -eq 1 ]
  done
  [ "$(cat "$T/fd/nodeprobe")" = "example.com/plain=true" ]
}

# limit_check RULES WHERE WHY LABELS: nodeprobe on RULES (a file or a directory) exits 0, with one
# warning: rule 'over' (at WHERE) not applied, WHY; the features file holds LABELS.
limit_check() {
  run bounded "${NP[@]}" --rules "$1"
  echo "${output:0:1000}"
  [ "$status" -eq 0 ]
  [ "$output" = "nodeprobe: warning: $2: rule 'over' not applied: $3" ]
  [ "$(cat "$T/fd/nodeprobe")" = "$4" ]
}

# regex_limit_rules N: under the header, rule 'many' with N patterns (the last '^8086$'), 'over'
# with '^8086$' and one new pattern, 'after' with '^8086$' only, 'plain' with a label only.
regex_limit_rules() {
  local i
  printf '    - name: many\n      labels: {example.com/many: "true"}\n      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            vendor:\n              op: InRegexp\n              value:\n'
  for ((i = 1; i < $1; i++)); do printf '                - "^%04x(x|y)+z$"\n' $((i + 4096)); done
  printf '                - "^8086$"\n'
  printf '    - {name: over, labels: {example.com/over: "true"}, matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: InRegexp, value: ["^8086$", "^80.6$"]}}}]}\n'
  printf '    - {name: after, labels: {example.com/after: "true"}, matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: InRegexp, value: ["^8086$"]}}}]}\n'
  printf '    - {name: plain, labels: {example.com/plain: "true"}}\n'
}

@test "10000 distinct regexes: the rule with the 10001st is skipped by name, the rules before and after it label" {
  nfr "$T/r.yaml" limit "$(regex_limit_rules 10000)"
  limit_check "$T/r.yaml" "$T/r.yaml:10015:7" "InRegexp value '^80.6\$': more than 10000 distinct regular expressions in the rules loaded (the limit): join patterns with '|'" $'example.com/after=true\nexample.com/many=true\nexample.com/plain=true'
}

@test "a billion-laughs rules file is refused before it is read: file, place, limit, exit 3" {
  local i
  {
    printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: laughs\nspec:\n  rules:\n'
    printf '    - name: r0\n      labels: {example.com/r0: "true"}\n      matchAny: &any\n'
    printf '        - matchFeatures: &terms\n            - feature: pci.device\n              matchExpressions: &exprs\n'
    printf '                k0: &e {op: In, value: [%s]}\n' "$(seq -s, -f '"%g"' 1000 1099)"
    for ((i = 1; i < 10; i++)); do printf '                k%d: *e\n' $i; done
    for ((i = 1; i < 10; i++)); do printf '            - {feature: pci.device, matchExpressions: *exprs}\n'; done
    for ((i = 1; i < 10; i++)); do printf '        - matchFeatures: *terms\n'; done
    for ((i = 1; i < 200; i++)); do printf '    - {name: r%d, matchAny: *any}\n' $i; done
  } > "$T/r.yaml"
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 3 ]
  [[ "$output" == "nodeprobe: error: $T/r.yaml:"*": more than 1000000 nodes, each alias counted as the nodes it repeats (the limit): use fewer aliases" ]]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
  [ ! -e "$T/fd/nodeprobe" ]
}

@test "a rules file over 1 MiB: the file and the limit, exit 3" {
  { printf '# '; head -c $((1024 * 1024)) /dev/zero | tr '\0' x; printf '\n'; } > "$T/r.yaml"
  run "${NP[@]}" --rules "$T/r.yaml"
  [ "$status" -eq 3 ]
  [ "$output" = "nodeprobe: error: $T/r.yaml: larger than the 1 MiB limit for a rules file (split it)" ]
}

# issue 17 review: the 10000-pattern cap let ~10 GB of compiled patterns in (each up to 1 MiB);
# a total budget for what they may use stops this 200-pattern rule long before. Issue 27: it skips
# that rule (by name, its first 63 patterns dropped with it), not the run.
@test "200 distinct costly regexes (\\pL{50}N) in one rule: that rule skipped at the 64 MiB budget for patterns, the others label, within 512 MiB" {
  local i
  {
    printf '    - name: r0\n      labels: {example.com/r0: "true"}\n      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            vendor:\n              op: InRegexp\n              value:\n'
    for ((i = 0; i < 200; i++)); do printf '                - "\\\\pL{50}%d"\n' $i; done
    printf '    - {name: after, labels: {example.com/after: "true"}, matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: InRegexp, value: ["^8086$"]}}}]}\n'
  } > "$T/rules"
  nfr "$T/r.yaml" costly "$(cat "$T/rules")"
  SECONDS=0
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  echo "# took ${SECONDS}s" >&3
  [ "$status" -eq 0 ]
  [[ "$output" == "nodeprobe: warning: $T/r.yaml:7:7: rule 'r0' not applied: InRegexp value '\\pL{50}"*"': the regular expressions of the rules loaded need more than the 64 MiB limit (this one up to "*" KiB): use fewer or simpler patterns (a long repeat of a class such as \\pL{50} is costly)" ]]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
  [ "$(cat "$T/fd/nodeprobe")" = "example.com/after=true" ]
}

# Issue 27: a pattern refused at the 64 MiB budget was compiled to learn its cost; so that
# rules of distinct costly patterns cannot make that work without end, once the refused ones
# took 64 MiB more, no new pattern is compiled: each rule after is skipped by name uncompiled.
@test "300 rules of distinct costly regexes: 63 label, each other rule skipped by name; compiling stops after as much again" {
  local i fit
  for ((i = 0; i < 300; i++)); do
    printf '    - {name: r%d, labels: {example.com/r%d: "true"}, matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: InRegexp, value: ["8086|\\\\pL{50}%d"]}}}]}\n' $i $i $i
  done > "$T/rules"
  nfr "$T/r.yaml" costly "$(cat "$T/rules")"
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  echo "${output:0:2000}"
  [ "$status" -eq 0 ]
  fit=$(wc -l < "$T/fd/nodeprobe")
  [ "$fit" -eq 63 ]
  [ "$(printf '%s\n' "$output" | grep -c "not applied: InRegexp value '8086|\\\\pL{50}[0-9]*': the regular expressions of the rules loaded need more than the 64 MiB limit (this one up to ")" -eq 64 ]
  [ "$(printf '%s\n' "$output" | grep -c "not applied: InRegexp value '8086|\\\\pL{50}[0-9]*': the regular expressions of the rules loaded need more than the 64 MiB limit (and those refused at it took as much again to try)")" -eq $((300 - 63 - 64)) ]
  [[ "$(printf '%s\n' "$output" | tail -1)" == "nodeprobe: warning: $T/r.yaml:306:7: rule 'r299' not applied: "* ]]
  [ "$(printf '%s\n' "$output" | wc -l)" -eq $((300 - 63)) ]
}

# issue 17 review: each rule aliasing a template parsed it again (~13 times its text each): 70
# rules sharing an 840 KB template took 825 MB. A template text is parsed once. Since NFD's
# 64 KiB template cap (pkg/gotmpl), the largest one that parses: 10,900 actions, 64 KiB.
@test "70 rules sharing one aliased 64 KiB labelsTemplate: loaded (parsed once) within 512 MiB" {
  local i
  {
    printf 'apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata:\n  name: tmpl\nspec:\n  rules:\n'
    printf '    - name: r0\n      labels: {example.com/r0: "true"}\n      labelsTemplate: &tp "{{range .nope.nope}}'
    head -c 10900 /dev/zero | sed 's/\x0/{{.a}}/g'
    printf '{{end}}"\n      matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: In, value: ["8086"]}}}]\n'
    for ((i = 1; i < 70; i++)); do
      printf '    - name: r%d\n      labels: {example.com/r%d: "true"}\n      labelsTemplate: *tp\n      matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: In, value: ["8086"]}}}]\n' $i $i
    done
    printf '    - name: plain\n      labels: {example.com/plain: "true"}\n'
  } > "$T/r.yaml"
  [ "$(stat -c %s "$T/r.yaml")" -gt 65000 ]
  run bounded "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  # loaded; each rule then fails as NFD's would (no such feature), the plain one applies
  [ "$(printf '%s\n' "$output" | grep -c "not applied: labelsTemplate: failed to expand template: template: :1:13: executing \"\" at <.nope.nope>: map has no entry for key \"nope\"")" -eq 70 ]
  [ "$(cat "$T/fd/nodeprobe")" = "example.com/plain=true" ]
}

# Issue 27, 1: the limits of all the templates loaded (10000 distinct, 16 MiB of text, 32 MiB
# of parse trees) skip the rule that would pass one, by name; the rules before and after it
# label, exit 0 (they failed the run: exit 3, no labels at all). MF: a term every run matches.
MF='matchFeatures: [{feature: pci.device, matchExpressions: {vendor: {op: In, value: ["8086"]}}}]'

# tmpl_limit_tail OVER: rules 'fits' (a small template), 'over' (template OVER), 'after' (fits'
# template and a label), 'plain' (a label).
tmpl_limit_tail() {
  printf '    - {name: fits, labelsTemplate: "example.com/fits={{ 1 }}", %s}\n' "$MF"
  printf '    - {name: over, labelsTemplate: "%s", %s}\n' "$1" "$MF"
  printf '    - {name: after, labels: {example.com/after: "true"}, labelsTemplate: "example.com/fits={{ 1 }}", %s}\n' "$MF"
  printf '    - {name: plain, labels: {example.com/plain: "true"}}\n'
}

TAIL_LABELS=$'example.com/after=true\nexample.com/fits=1\nexample.com/plain=true'

@test "10000 distinct templates: the rule with the 10001st is skipped by name, the rules before and after it label" {
  local i
  {
    for ((i = 0; i < 9999; i++)); do printf '    - {name: t%d, labelsTemplate: "{{/* %d */}}"}\n' $i $i; done
    tmpl_limit_tail 'example.com/over={{ 2 }}'
  } > "$T/rules"
  nfr "$T/r.yaml" many "$(cat "$T/rules")"
  limit_check "$T/r.yaml" "$T/r.yaml:10007:7" "labelsTemplate: more than 10000 distinct templates in the rules loaded (the limit): share templates between rules (YAML anchors)" "$TAIL_LABELS"
}

@test "16 MiB of templates: the rule whose template passes it is skipped by name, the rules before and after it label" {
  local x f i
  x=$(head -c 65526 /dev/zero | tr '\0' x)
  mkdir "$T/rules.d"
  for ((f = 0; f < 17; f++)); do # 255 templates of 64 KiB: 64 KiB short of 16 MiB
    for ((i = 0; i < 15; i++)); do printf '    - {name: t%d, labelsTemplate: "%010d%s"}\n' $i $((f * 15 + i)) "$x"; done > "$T/rules"
    nfr "$T/rules.d/a$((f + 10)).yaml" "a$f" "$(cat "$T/rules")"
  done
  nfr "$T/rules.d/b.yaml" b "$(tmpl_limit_tail "over$x------")"
  limit_check "$T/rules.d" "$T/rules.d/b.yaml:8:7" "labelsTemplate: the templates of the rules loaded are more than 16 MiB together (the limit): share templates between rules (YAML anchors)" "$TAIL_LABELS"
}

@test "32 MiB of parse trees: the rule whose template passes it is skipped by name, the rules before and after it label" {
  local dense
  [ "$(getconf LONG_BIT)" -eq 64 ] || skip "32-bit parse trees are smaller: a third dense template fits"
  dense=$(head -c 12990 /dev/zero | sed 's/\x0/{{.}}/g')
  { # two of about 12 MiB parsed each (no term: never run), then the third
    printf '    - {name: d1, labelsTemplate: "%s{{/*1*/}}"}\n' "$dense"
    printf '    - {name: d2, labelsTemplate: "%s{{/*2*/}}"}\n' "$dense"
    tmpl_limit_tail "$dense{{/*3*/}}"
  } > "$T/rules"
  nfr "$T/r.yaml" dense "$(cat "$T/rules")"
  limit_check "$T/r.yaml" "$T/r.yaml:10:7" "labelsTemplate: the rules' templates need more than 32 MiB parsed (the limit)" "$TAIL_LABELS"
}

# Issue 20, 1: the two templates the issue names, which NFD labels and the subset before
# pkg/gotmpl skipped ("unsupported template action"). On the NUC 12 tree the class 0300 and
# 0108 devices, in sysfs order, are 0000:00:02.0 (46a6) and 0000:01:00.0 (5216). The labels
# are NFD's: range $i, $d gives the index from 0 and the element; `if` on a non-empty list is
# true; unprefixed keys get feature.node.kubernetes.io/ (nfd-master).
@test "issue 20's templates: range \$i, \$d := .pci.device and if .pci.device give NFD's labels" {
  nfr "$T/r.yaml" tmpl '    - name: range-index
      labelsTemplate: |
        {{ range $i, $d := .pci.device }}dev-{{ $i }}={{ $d.device }}{{ "\n" }}{{ end }}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300", "0108"]}
    - name: if-list
      labelsTemplate: "{{ if .pci.device }}has-pci=yes{{ end }}"
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            vendor: {op: In, value: ["1d97"]}
    - name: if-empty
      labelsTemplate: "{{ if .pci.device }}never=yes{{ else }}empty-list=yes{{ end }}"
      matchFeatures:
        - feature: pci.device'
  run "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$output" ] # no warning
  [ "$(cat "$T/fd/nodeprobe")" = "$(printf '%s\n' \
    feature.node.kubernetes.io/dev-0=46a6 \
    feature.node.kubernetes.io/dev-1=5216 \
    feature.node.kubernetes.io/empty-list=yes \
    feature.node.kubernetes.io/has-pci=yes)" ]
}

# Issue 20: Sprig's functions as NFD's FuncMap has them, and a refused one fails only its rule,
# naming the function and the rule; the run goes on (exit 0).
@test "Sprig functions work in templates; a clock function fails its rule by name, not the run" {
  nfr "$T/r.yaml" sprig '    - name: sprig
      labelsTemplate: |
        {{- $d := first .pci.device -}}
        gpu-{{ $d.vendor | upper }}={{ $d.device | trunc 2 | printf "%s-%s" ($d.class | substr 0 2) | replace "-" "." }}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}
    - name: clock
      labelsTemplate: "t={{ now }}"
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}
    - name: proposed
      labelsTemplate: "v={{ asLabelValue \"a b\" }}"
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}
    - name: plain
      labels: {example.com/plain: "true"}'
  run "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"rule 'clock' not applied: labelsTemplate: failed to parse template: invalid template: template: :1: function \"now\" refused"* ]]
  # only proposed for NFD (PR #2038): not defined, as NFD v0.19 says, and why
  [[ "$output" == *"rule 'proposed' not applied: labelsTemplate: failed to parse template: invalid template: template: :1: function \"asLabelValue\" not defined: not in NFD v0.19's template function map"* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "$(printf '%s\n' example.com/plain=true feature.node.kubernetes.io/gpu-8086=03.46)" ]
}

# Issue 20: derivePassword (scrypt from libcrypto, loaded with dlopen on the first call) and
# decryptAES (libnettle) in the real binary. The derivePassword value is Sprig's own vector
# (crypto_test.go TestDerivePassword); the ciphertext is `openssl enc -aes-256-cbc` of "plaintext"
# (test/fixtures/gotmpl/sprig.json). A bad ciphertext fails its rule with Go's panic text.
@test "derivePassword and decryptAES in rules: Sprig's values; a bad ciphertext fails only its rule" {
  nfr "$T/r.yaml" crypt '    - name: crypt
      labelsTemplate: |
        pw={{ derivePassword 1 "long" "password" "user" "example.com" | trimSuffix "*" }}
        aes={{ decryptAES "secretkey" "AAECAwQFBgcICQoLDA0OD4aChIkqfhLglmmHSXlA6r0=" }}
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}
    - name: bad-aes
      labelsTemplate: "x={{ decryptAES \"k\" \"AAAA\" }}"
      matchFeatures:
        - feature: pci.device
          matchExpressions:
            class: {op: In, value: ["0300"]}'
  run "${NP[@]}" --rules "$T/r.yaml"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"rule 'bad-aes' not applied: labelsTemplate: "*"error calling decryptAES: runtime error: slice bounds out of range [:16] with capacity 3"* ]]
  [ "$(cat "$T/fd/nodeprobe")" = "$(printf '%s\n' feature.node.kubernetes.io/aes=plaintext feature.node.kubernetes.io/pw=ZedaFaxcZaso9)" ]
}

# Issue 27, 1: the hostile templates of test/fixtures/gotmpl/hostile.json, each one rule of one
# run between two plain ones. Each stops at its bound and skips only its rule, named in one
# warning (before, some ended the run: "out of memory", exit 1, no labels; some crashed it or ran
# for hours). Peak RSS stays under nodeprobe.8's bound (not under ASan, whose shadow is large);
# the CPU they took is printed for the record, not asserted (no timing assertions).
@test "hostile templates: each stops at its bound, names its rule; the others label; RSS bounded" {
  local cases="$FIX/gotmpl/hostile.json" i want got
  {
    printf '    - name: before\n      labels: {example.com/before: "true"}\n'
    jq -r 'to_entries[] | "    - name: hostile-\(.key)\n      labelsTemplate: |\n        example.com/h\(.key)=\(.value.tmpl)\n      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            vendor: {op: In, value: [\"8086\"]}"' "$cases"
    printf '    - name: after\n      labelsTemplate: |\n        {{ range .pci.device }}example.com/after-{{ .class }}=true\n        {{ end }}\n'
    printf '      matchFeatures:\n        - feature: pci.device\n          matchExpressions:\n            class: {op: In, value: ["0300"]}\n'
  } > "$T/rules"
  nfr "$T/r.yaml" hostile "$(cat "$T/rules")"
  run /usr/bin/time -f 'rss_kb=%M cpu_s=%U+%S' "${NP[@]}" --rules "$T/r.yaml"
  echo "# $(jq length "$cases") hostile templates in one run: ${output##*rss_kb=}" >&3
  [ "$status" -eq 0 ]
  want=$'example.com/after-0300=true\nexample.com/before=true'
  while IFS=$'\t' read -r i got; do want+=$'\n'"example.com/h$i=$got"; done \
    < <(jq -r 'to_entries[] | select(.value.out) | "\(.key)\t\(.value.out)"' "$cases")
  [ "$(sort "$T/fd/nodeprobe")" = "$(printf '%s\n' "$want" | sort)" ]
  while IFS=$'\t' read -r i got; do
    [ "$(printf '%s\n' "$output" | grep -c "rule 'hostile-$i' not applied")" -eq 1 ] ||
      { echo "hostile-$i: not named once" >&2; false; }
    printf '%s\n' "$output" | grep "rule 'hostile-$i' not applied" | grep -qF -- "$got" ||
      { echo "hostile-$i: want '$got'" >&2; false; }
  done < <(jq -r 'to_entries[] | select(.value.err) | "\(.key)\t\(.value.err)"' "$cases")
  grep -qa __asan_init "$BUILD/nodeprobe" && return 0
  got=${output##*rss_kb=}
  [ "${got%% *}" -lt $((300 * 1024)) ] # nodeprobe.8 LIMITS: 300 MiB, rules and templates included
}
