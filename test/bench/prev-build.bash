# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benches: prev_build TARGET builds TARGET (a path under build/, e.g.
# build/nodeprobe) from the tree of NP_BENCH_PREV (default HEAD~1; "none" to leave it out) in
# $tmp/prev, from `git archive` so the repository is not touched, with the same make flags. It sets
# prev (the binary, or "" when left out) and prev_rev, and prints one line saying which build it is
# or why there is none (a shallow clone, no git, a revision that does not build).
prev_build() {
  local target=$1 prev_id
  prev_rev=${NP_BENCH_PREV:-HEAD~1} prev=
  if [ "$prev_rev" != none ] && prev_id=$(git rev-parse --short "$prev_rev^{commit}" 2>/dev/null); then
    mkdir -p "$tmp/prev"
    if git archive "$prev_id" | tar -x -C "$tmp/prev" &&
       make -C "$tmp/prev" --no-print-directory -j2 BUILD="$tmp/prev/build" "$tmp/prev/build/$target" >"$tmp/prev.log" 2>&1; then
      prev="$tmp/prev/build/$target"
      echo "previous build: $prev_rev ($prev_id)"
    else
      echo "previous build: $prev_rev ($prev_id) did not build (left out): $(tail -1 "$tmp/prev.log" 2>/dev/null || echo "git archive failed")"
    fi
  else
    [ "$prev_rev" = none ] && echo "previous build: none (NP_BENCH_PREV=none)" ||
      echo "previous build: none ($prev_rev is no commit here: a shallow clone, or no git)"
  fi
}
