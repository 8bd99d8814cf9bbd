#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# pkg/mirror's stages (issue 18): check, probe and talos-config only read, and so does configure's
# plan: their files never reach a file that changes the config path (apply, restore, journal,
# snap, watch) or the verb table (cmd), directly or through another file. From the objects'
# symbol tables, as scripts/check-calls reads them.

load helpers

# reach OBJDIR FILE...: every file of OBJDIR (a built pkg/mirror) that FILE... call, directly
# or through others, one a line ("mirror_render"), each with the path that reaches it.
reach() {
  python3 - "$@" <<'PY'
import glob, os, subprocess, sys
objdir, starts = sys.argv[1], sys.argv[2:]
def nm(o, *f):
    out = subprocess.run(['nm', '-g', *f, o], capture_output=True, text=True, check=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.strip()}
objs = {os.path.basename(o)[:-2]: o for o in glob.glob(objdir + '/*.o')}
defs = {n: nm(o, '--defined-only') for n, o in objs.items()}
edges = {n: {m for m in objs if m != n and nm(o, '-u') & defs[m]} for n, o in objs.items()}
seen, todo = {s: s for s in starts}, list(starts)
while todo:
    n = todo.pop()
    for m in sorted(edges[n]):
        if m not in seen:
            seen[m] = seen[n] + ' -> ' + m
            todo.append(m)
for n in sorted(seen):
    print(n, seen[n])
PY
}

@test "check, probe and talos-config reach no file that writes" {
  run reach "$BUILD/pkg/mirror" mirror_check mirror_check_ctrd mirror_probe mirror_finding mirror_talos
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  echo "$output"
  grep -q '^mirror_render ' <<<"$output" # the walk follows calls
  if grep -E '^mirror_(apply|plan|restore|journal|snap|watch|cmd) ' <<<"$output"; then return 1; fi
}

@test "configure's plan reads: it reaches no file that writes" {
  run reach "$BUILD/pkg/mirror" mirror_plan
  [ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
  echo "$output"
  grep -q '^mirror_render ' <<<"$output"
  if grep -E '^mirror_(apply|restore|journal|snap|watch|cmd) ' <<<"$output"; then return 1; fi
}
