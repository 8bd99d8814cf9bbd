#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Soak: two nodeprobe-reload --enable-ha instances against test/fake-apiserver with an alert
# sink that never answers, 120 changes in 6 rounds. Round 2: the answer to the leader's first
# PATCH comes 7 s late, holding its loop past the renew deadline and the lease (the other
# takes over): its next write must be fenced. Round 4: the leader is frozen (SIGSTOP). Round 6:
# the leader's first PATCH is held 7 s before it is processed: sent in time, it must not land
# after the other took over (its timeout is cut to the Lease; the fake, as the API server,
# drops a request whose client went). The fake logs each request's user (--token-auth-file: one token per
# instance) and the Lease holder when a write arrived: every change is rolled exactly once, and
# no write comes from an instance that does not hold the Lease. The change-to-rollout latency
# is printed, not asserted; the only time bound is the one that keeps a broken build from hanging.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"
PEER="$NP_ROOT/test/fake-apiserver/slow-peer"
# 6 s / 4 s: a loaded machine's scheduling delays stay well inside the renew deadline's margin;
# the faults hold a request 7 s, past the renew deadline and the lease
HA=(--enable-ha --leader-elect-lease-duration 6s --leader-elect-renew-deadline 4s
  --leader-elect-retry-period 300ms)
N=20     # Deployments, each with its ConfigMap
ROUNDS=6 # N x ROUNDS changes

setup() {
  PIDS=()
  printf 'tok-a,a,uid-a\ntok-b,b,uid-b\n' >"$BATS_TEST_TMPDIR/tokens.csv"
  reload_fake_setup --token-auth-file "$BATS_TEST_TMPDIR/tokens.csv"
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do
    kill -CONT "$p" 2>/dev/null || true
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  fake_stop
}

# run_ha NAME: instance NAME with its own token (user NAME in the fake's log).
run_ha() {
  local kc="$BATS_TEST_TMPDIR/kc-$1"
  FAKE_TOKEN="tok-$1" fake_kubeconfig "$kc"
  POD_NAME=$1 POD_NAMESPACE=reload ALERT_ON_RELOAD=true ALERT_SINK=webhook \
    ALERT_WEBHOOK_URL="http://127.0.0.1:$SINK_PORT/hook" "$BIN" --kubeconfig "$kc" \
    --listen '' --coalesce-window 0 --min-interval 0 --settle 300ms "${HA[@]}" \
    >"$BATS_TEST_TMPDIR/$1.log" 2>&1 3>&- &
  PIDS+=($!)
  printf -v "PID_$1" %s $!
}
holder() {
  fake_ctl GET '/objects?apiVersion=coordination.k8s.io/v1&kind=Lease&namespace=reload&name=stakater-reloader-lock' |
    jq -r '.spec.holderIdentity // ""'
}
wait_holder_any() {
  local i h
  for i in $(seq 200); do
    h=$(holder)
    [ -n "$h" ] && { echo "$h"; return 0; }
    sleep 0.1
  done
  return 1
}

@test "soak: 2 HA instances, a hanging alert sink, 120 changes, leader held, frozen, its write queued: each change rolled once, no write out of lease" {
  SINK_LOG="$BATS_TEST_TMPDIR/sink.log"
  "$PEER" hang --ready-file "$BATS_TEST_TMPDIR/sink.ready" --log "$SINK_LOG" 3>&- &
  PIDS+=($!)
  for i in $(seq 200); do [ -f "$BATS_TEST_TMPDIR/sink.ready" ] && break; sleep 0.05; done
  SINK_PORT=$(sed -n 's/^PORT=//p' "$BATS_TEST_TMPDIR/sink.ready")
  for i in $(seq $N); do fake_cm "c$i" '{"v":"0"}'; fake_deploy "d$i" "c$i"; done
  run_ha a
  [ "$(wait_holder_any)" = a ]
  run_ha b
  fake_ctl GET '/watchers?min=10&wait=20' >/dev/null
  : >"$BATS_TEST_TMPDIR/changes"
  for r in $(seq $ROUNDS); do
    lead=$(holder)
    pid_var="PID_$lead"
    if [ "$r" -eq 2 ]; then
      # slow answers: the leader's loop is held in its PATCHes past the renew deadline while
      # the other takes over; the fence must stop its writes at the deadline
      fake_ctl POST /faults '{"method":"PATCH","path":"/deployments/d20$","action":"delay-response","seconds":7}' >/dev/null
    elif [ "$r" -eq 4 ]; then
      kill -STOP "${!pid_var}" # frozen before the changes: it wakes with them overdue
    elif [ "$r" -eq 6 ]; then
      # held before processing: a PATCH sent in time would land after the takeover
      fake_ctl POST /faults '{"method":"PATCH","path":"/deployments/d20$","action":"delay","seconds":7}' >/dev/null
    fi
    # the round's changes in one write, so the leader rolls them in one pass (d20 first)
    t=$(for i in $(seq $N); do
      echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c$i\",\"namespace\":\"default\"},\"data\":{\"v\":\"$r\"}}"
    done | jq -s . | curl -sS --fail-with-body -X POST --data-binary @- "$FAKE_CTL/objects" | jq .time)
    h=$(printf 'v=%s' "$r" | sha1sum | cut -c1-40)
    for i in $(seq $N); do echo "$r d$i $h $t" >>"$BATS_TEST_TMPDIR/changes"; done
    if [ "$r" -eq 4 ]; then
      for i in $(seq 200); do [ "$(holder)" != "$lead" ] && break; sleep 0.1; done
      sleep 1
      kill -CONT "${!pid_var}"
    fi
    # all of this round's rollouts (120 s: only so a broken build cannot hang the suite)
    want=$((N * r))
    for i in $(seq 1200); do
      got=$(fake_ctl GET "/requests?method=PATCH&path=/deployments/" | jq '[.items[] | select(.abandoned | not)] | length')
      [ "$got" -ge "$want" ] && break
      sleep 0.1
    done
    echo "# round $r: $got PATCHes (want $want); leader before $lead, now $(holder)" >&3
    [ "$got" -ge "$want" ]
  done
  sleep 7 # a frozen or held leader's late writes, if any, would land now
  # a request dropped unprocessed (its client went: round 6) wrote nothing
  fake_ctl GET '/requests?method=(PATCH|POST|PUT|DELETE)' |
    jq '.items |= map(select(.abandoned | not))' >"$BATS_TEST_TMPDIR/writes.json"
  echo "# abandoned by their client before processing: $(fake_ctl GET '/requests?method=PATCH' | jq '[.items[] | select(.abandoned)] | length')" >&3
  # every change rolled exactly once: one PATCH per (Deployment, hash)
  while read -r r d h t; do
    n=$(jq --arg p "/deployments/$d" --arg h "$h" \
      '[.items[] | select(.method == "PATCH" and (.path | endswith($p)) and (.body | contains($h)))] | length' \
      "$BATS_TEST_TMPDIR/writes.json")
    [ "$n" -eq 1 ] || { echo "$d $h rolled $n times" >&2; false; }
  done <"$BATS_TEST_TMPDIR/changes"
  # no write but the Lease's own from an instance that did not hold the Lease then
  out=$(jq -c '[.items[] | select((.path | contains("/leases")) | not)
      | select(.user != .leaseHolders["reload/stakater-reloader-lock"])
      | {seq, method, path, user, holder: .leaseHolders["reload/stakater-reloader-lock"]}]' \
    "$BATS_TEST_TMPDIR/writes.json")
  echo "# writes out of lease: $out" >&3
  [ "$out" = '[]' ]
  [ "$(jq '[.items[] | select((.path | contains("/leases")) | not)] | length' "$BATS_TEST_TMPDIR/writes.json")" -ge $((N * ROUNDS)) ]
  # latency: change (the fake's clock) -> its PATCH arriving; rounds 2 and 4 froze the leader
  lat() {
    while read -r r d h t; do
      [[ $r =~ $1 ]] || continue
      jq --arg p "/deployments/$d" --arg h "$h" --argjson t "$t" \
        '[.items[] | select(.method == "PATCH" and (.path | endswith($p)) and (.body | contains($h))) | .time - $t][0]' \
        "$BATS_TEST_TMPDIR/writes.json"
    done <"$BATS_TEST_TMPDIR/changes" | sort -n | awk '{a[NR]=$1} END {printf "n %d p50 %.3f p90 %.3f max %.3f", NR, a[int((NR+1)/2)], a[int((NR*9+9)/10)], a[NR]}'
  }
  echo "# change->rollout latency (s), steady rounds 1 3 5: $(lat '^[135]$')" >&3
  echo "# change->rollout latency (s), rounds 2 4 6 (leader held, frozen, held): $(lat '^[246]$')" >&3
  fenced=$(cat "$BATS_TEST_TMPDIR"/[ab].log | grep -c 'not sent: the Lease')
  echo "# fenced writes (a and b): $fenced" >&3
  # round 2's held leader had writes left when its deadline passed: they were refused
  [ "$fenced" -ge 1 ]
}
