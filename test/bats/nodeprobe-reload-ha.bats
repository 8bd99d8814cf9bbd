#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-reload --enable-ha against test/fake-apiserver: the Lease requests (create, renew,
# takeover, release) as client-go's leaderelection makes them, two instances with a leader
# killed or stopped, 409 Conflicts; and the leading-edge rollout with default settings.
# Durations are shortened by flags; every wait is a bounded poll, nothing asserts timing.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"
LEASES=/apis/coordination.k8s.io/v1/namespaces/reload/leases
HA=(--enable-ha --leader-elect-lease-duration 3s --leader-elect-renew-deadline 2s
  --leader-elect-retry-period 300ms)

setup() {
  PIDS=()
  reload_fake_setup
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  fake_stop
}

sha1() { printf '%s' "$1" | sha1sum | cut -c1-40; }

# run_ha NAME [ARGS]: start instance NAME (POD_NAME=NAME, POD_NAMESPACE=reload) in the
# background, log in $BATS_TEST_TMPDIR/NAME.log; its pid in PID_<NAME>.
run_ha() {
  local name=$1
  shift
  POD_NAME=$name POD_NAMESPACE=reload "$BIN" --kubeconfig "$KC" --listen '' --no-events \
    "${HA[@]}" "$@" >"$BATS_TEST_TMPDIR/$name.log" 2>&1 3>&- &
  PIDS+=($!)
  printf -v "PID_$name" %s $!
}

# leader_a_standby_b [ARGS]: a leads, then b (same ARGS) stands by.
leader_a_standby_b() {
  run_ha a "$@"
  wait_holder a
  run_ha b "$@"
  wait_log b "leader is a"
}

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lease() { fake_ctl GET '/objects?apiVersion=coordination.k8s.io/v1&kind=Lease&namespace=reload&name=stakater-reloader-lock'; }
holder() { lease | jq -r '.spec.holderIdentity // ""'; }
# wait_holder ID: poll (up to 20 s) until the Lease names ID as holder.
wait_holder() {
  local i
  for i in $(seq 200); do
    [ "$(holder)" = "$1" ] && return 0
    sleep 0.1
  done
  echo "holder is '$(holder)', wanted '$1'" >&2
  return 1
}
# wait_log NAME TEXT: poll (up to 20 s) until instance NAME logged TEXT.
wait_log() {
  local i
  for i in $(seq 200); do
    grep -qF -- "$2" "$BATS_TEST_TMPDIR/$1.log" && return 0
    sleep 0.1
  done
  cat "$BATS_TEST_TMPDIR/$1.log" >&2
  return 1
}
patches() { fake_ctl GET "/requests?method=PATCH&path=${1:-.}" | jq -r '.items[].body'; }
npatches() { fake_ctl GET "/requests?method=PATCH&path=${1:-.}&count=1" | jq .count; }
wait_patches() { fake_ctl GET "/requests?method=PATCH&path=${2:-.}&min=$1&wait=20" >/dev/null; }
MICRO='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$'

@test "HA options: Go bool forms, bad values exit 2; once mode, durations and no namespace are clear errors (exit 1)" {
  run_expect_fail 2 "$BIN" --enable-ha=maybe
  [[ $output == *"--enable-ha: 'maybe' is not a boolean"* ]]
  run_expect_fail 2 "$BIN" --leader-elect-retry-period 0
  # refused before any request, as Reloader's PreRunE refuses a bad HA setup (exit 1)
  run_expect_fail 1 env POD_NAMESPACE=x "$BIN" --kubeconfig "$KC" --listen '' --enable-ha --mode once
  [[ $output == *"--enable-ha needs --mode watch"* ]]
  run_expect_fail 1 env POD_NAMESPACE=x "$BIN" --kubeconfig "$KC" --listen '' --enable-ha \
    --leader-elect-lease-duration 2s --leader-elect-renew-deadline 2s
  [[ $output == *"must exceed"* ]]
  [ "$(fake_ctl GET '/requests?count=1' | jq .count)" -eq 0 ]
  # no POD_NAMESPACE, no flag, no service-account file: exit 1 naming the fix
  run env -u POD_NAMESPACE "$BIN" --kubeconfig "$KC" --listen '' --enable-ha=true \
    --serviceaccount-dir "$BATS_TEST_TMPDIR/none"
  [ "$status" -eq 1 ]
  [[ $output == *"set POD_NAMESPACE"*"--leader-elect-resource-namespace"* ]]
  # --enable-ha=false is no election: rolls without a Lease
  fake_cm cfg '{"a":"1"}'
  fake_deploy web cfg
  "$BIN" --kubeconfig "$KC" --listen '' --no-events --enable-ha=false >"$BATS_TEST_TMPDIR/x.log" 2>&1 3>&- &
  PIDS+=($!)
  fake_wait_watchers 5
  fake_cm cfg '{"a":"2"}'
  wait_patches 1
  [ "$(fake_ctl GET '/requests?path=leases&count=1' | jq .count)" -eq 0 ]
}

@test "HA: the first instance creates the Lease as client-go does and renews it with its resourceVersion" {
  run_ha a
  wait_holder a
  create=$(fake_ctl GET "/requests?method=POST&path=^$LEASES\$" | jq -r '.items[0].body')
  [ "$(jq -c 'del(.spec.acquireTime, .spec.renewTime)' <<<"$create")" = '{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"stakater-reloader-lock","namespace":"reload"},"spec":{"holderIdentity":"a","leaseDurationSeconds":3,"leaseTransitions":0}}' ]
  [[ $(jq -r .spec.acquireTime <<<"$create") =~ $MICRO ]]
  [ "$(jq -r .spec.acquireTime <<<"$create")" = "$(jq -r .spec.renewTime <<<"$create")" ]
  # renewals: PUT of the Lease as read, its resourceVersion the stored one (200 each),
  # acquireTime and leaseTransitions kept, renewTime moving
  fake_ctl GET "/requests?method=PUT&path=/leases/stakater-reloader-lock\$&min=3&wait=20" >/dev/null
  puts=$(fake_ctl GET "/requests?method=PUT&path=/leases/stakater-reloader-lock\$")
  [ "$(jq '[.items[].status] | unique' -c <<<"$puts")" = '[200]' ]
  first=$(jq -r '.items[0].body' <<<"$puts")
  third=$(jq -r '.items[2].body' <<<"$puts")
  [ "$(jq -r .spec.acquireTime <<<"$third")" = "$(jq -r .spec.acquireTime <<<"$create")" ]
  [ "$(jq -c '[.spec.holderIdentity, .spec.leaseDurationSeconds, .spec.leaseTransitions, .kind, .metadata.name]' <<<"$third")" = '["a",3,0,"Lease","stakater-reloader-lock"]' ]
  [ "$(jq -r .spec.renewTime <<<"$third")" \> "$(jq -r .spec.renewTime <<<"$first")" ]
  rv1=$(jq -r .metadata.resourceVersion <<<"$first")
  rv3=$(jq -r .metadata.resourceVersion <<<"$third")
  [ "$rv3" -gt "$rv1" ]
  # a lock name of one's own
  run_ha c --leader-elect-resource-name my-lock --leader-elect-resource-namespace other
  fake_ctl GET "/requests?method=POST&path=/namespaces/other/leases\$&min=1&wait=20" >/dev/null
  [ "$(fake_ctl GET '/objects?apiVersion=coordination.k8s.io/v1&kind=Lease&namespace=other&name=my-lock' | jq -r .spec.holderIdentity)" = c ]
}

@test "HA: SIGKILL of the leader: the standby takes over after the lease duration, rolls only what is stale, nothing twice" {
  fake_cm c1 '{"v":"0"}'
  fake_cm c2 '{"v":"0"}'
  fake_deploy d1 c1
  fake_deploy d2 c2
  pa=$(free_port)
  pb=$(free_port)
  run_ha a --listen "127.0.0.1:$pa"
  wait_holder a
  run_ha b --listen "127.0.0.1:$pb"
  wait_log b "leader is a"
  # /metrics says who leads
  [ "$(curl -sS "http://127.0.0.1:$pa/metrics" | grep '^nodeprobe_reload_leader ')" = "nodeprobe_reload_leader 1" ]
  [ "$(curl -sS "http://127.0.0.1:$pb/metrics" | grep '^nodeprobe_reload_leader ')" = "nodeprobe_reload_leader 0" ]
  # the leader rolls d1; the standby watches it happen and keeps nothing pending
  fake_cm c1 '{"v":"1"}'
  wait_patches 1 /d1$
  kill -9 "$PID_a"
  # changed while nobody leads: the new leader rolls it once, and d1 not again
  fake_cm c2 '{"v":"1"}'
  wait_holder b
  wait_log b "acquired Lease reload/stakater-reloader-lock as b"
  wait_patches 1 /d2$
  [ "$(npatches /d1$)" -eq 1 ]
  [ "$(npatches /d2$)" -eq 1 ]
  [[ $(patches /d1$) == *"$(sha1 v=1)"* ]]
  [[ $(patches /d2$) == *"$(sha1 v=1)"* ]]
  # the takeover PUT counts a transition and names b; the Lease is b's from now on
  [ "$(lease | jq -c '[.spec.holderIdentity, .spec.leaseTransitions]')" = '["b",1]' ]
  grep -q "leading: 1 workloads had changes pending, 1 still to roll" "$BATS_TEST_TMPDIR/b.log"
  [ "$(curl -sS "http://127.0.0.1:$pb/metrics" | grep '^nodeprobe_reload_leader ')" = "nodeprobe_reload_leader 1" ]
  # b keeps rolling
  fake_cm c1 '{"v":"2"}'
  wait_patches 2 /d1$
  [[ $(patches /d1$ | tail -1) == *"$(sha1 v=2)"* ]]
  # a standby never wrote a workload: every PATCH came while its writer held the Lease
  [ "$(npatches)" -eq 3 ]
}

@test "HA: SIGTERM releases the Lease (client-go's ReleaseOnCancel, exact PUT) and the standby takes over at once" {
  fake_cm cfg '{"v":"0"}'
  fake_deploy web cfg
  # a holds a 60 s lease: only its release lets b in within the 20 s this test waits
  run_ha a --leader-elect-lease-duration 60s
  wait_holder a
  run_ha b
  wait_log b "leader is a"
  since=$(fake_ctl GET "/requests?count=1" | jq .next)
  kill -TERM "$PID_a"
  wait "$PID_a"
  grep -q "released Lease reload/stakater-reloader-lock" "$BATS_TEST_TMPDIR/a.log"
  rel=$(fake_ctl GET "/requests?since=$since&method=PUT&path=/leases/" | jq -c '[.items[] | select((.body | fromjson | .spec.holderIdentity) == "")][0]')
  [ "$(jq .status <<<"$rel")" = 200 ]
  body=$(jq -r .body <<<"$rel")
  # the whole Lease as last written, with the spec client-go's release() sets
  [ "$(jq -c '.spec | del(.acquireTime, .renewTime)' <<<"$body")" = '{"holderIdentity":"","leaseDurationSeconds":1,"leaseTransitions":0}' ]
  [ "$(jq -c '.spec | keys_unsorted' <<<"$body")" = '["holderIdentity","leaseDurationSeconds","acquireTime","renewTime","leaseTransitions"]' ]
  [[ $(jq -r .spec.acquireTime <<<"$body") =~ $MICRO ]]
  [ "$(jq -r .spec.acquireTime <<<"$body")" = "$(jq -r .spec.renewTime <<<"$body")" ]
  [ "$(jq -c '[.kind, .apiVersion, .metadata.name, .metadata.namespace]' <<<"$body")" = '["Lease","coordination.k8s.io/v1","stakater-reloader-lock","reload"]' ]
  [ -n "$(jq -r .metadata.resourceVersion <<<"$body")" ]
  # a released lease has no holder: b takes it on its next try
  wait_holder b
  fake_cm cfg '{"v":"1"}'
  wait_patches 1 /web$
  [ "$(npatches)" -eq 1 ]
}

@test "HA: 409 Conflict on the Lease: the renewal reads it again and retries; stale resourceVersions get 409" {
  run_ha a
  wait_holder a
  run_ha b
  wait_log b "leader is a"
  # a renewal answered 409 (as when another writer came first) is retried within the renew
  # deadline: a stays the leader
  # (counted from the faulted PUT on: renewals sent before the fault do not count)
  fid=$(fake_ctl POST /faults '{"method":"PUT","path":"/leases/","code":409,"count":1}' | jq .id)
  for i in $(seq 400); do
    seq409=$(fake_ctl GET '/requests?method=PUT&path=/leases/' | jq --argjson f "$fid" '[.items[] | select(.fault == $f) | .seq] | first // empty')
    [ -n "$seq409" ] && break
    sleep 0.05
  done
  [ -n "$seq409" ]
  [ "$(fake_ctl GET '/requests?method=PUT&path=/leases/' | jq --argjson s "$seq409" '.items[] | select(.seq == $s) | .status')" -eq 409 ]
  # the PUTs after it: the retry and a renewal, both accepted
  fake_ctl GET "/requests?method=PUT&path=/leases/&since=$((seq409 + 1))&min=2&wait=20" >/dev/null
  [ "$(fake_ctl GET "/requests?method=PUT&path=/leases/&since=$((seq409 + 1))" | jq '[.items[].status] | length >= 2 and all(. == 200)')" = true ]
  wait_holder a
  grep -q "another instance wrote it first (409)" "$BATS_TEST_TMPDIR/a.log"
  ! grep -q "lost Lease" "$BATS_TEST_TMPDIR/a.log" || false
  # the fake server itself answers a stale resourceVersion with 409
  l=$(lease | jq -c '.metadata.resourceVersion = "1" | .spec.holderIdentity = "x"')
  run fake_api PUT "$LEASES/stakater-reloader-lock" -H 'Content-Type: application/json' --data-binary "$l"
  [ "$(jq -r .reason <<<"$output")" = Conflict ]
}

@test "leading edge, default settings: an isolated change is rolled at once; a storm of 20 is at most 3 rollouts ending on the last hash" {
  fake_cm cfg '{"n":"0"}'
  fake_deploy web cfg
  fake_cm other '{"n":"0"}'
  fake_deploy solo other
  "$BIN" --kubeconfig "$KC" --listen '' --no-events >"$BATS_TEST_TMPDIR/x.log" 2>&1 3>&- &
  PIDS+=($!)
  fake_wait_watchers 5
  # isolated: one PATCH with the new hash and nothing held back
  fake_cm other '{"n":"1"}'
  wait_patches 1 /solo$
  [ "$(npatches /solo$)" -eq 1 ]
  # storm: the first change goes out at once, the other 19 as one more rollout after the
  # minimum interval (10 s by default), with the last hash
  for i in $(seq 1 20); do
    fake_cm cfg "{\"n\":\"$i\"}"
    sleep 0.05
  done
  last=$(sha1 'n=20')
  for i in $(seq 200); do
    patches /web$ | tail -1 | grep -q "$last" && break
    sleep 0.1
  done
  [[ $(patches /web$ | tail -1) == *"$last"* ]]
  [ "$(npatches /web$)" -le 3 ]
  [ "$(npatches /web$)" -ge 2 ]
  # the first went out at once, long before the last change
  [[ $(patches /web$ | head -1) != *"$last"* ]]
}

@test "HA: a renewal that hangs past the renew deadline: the leader stops rolling, queues, and rolls once it leads again" {
  fake_cm cfg '{"v":"0"}'
  fake_deploy web cfg
  run_ha a -v
  wait_holder a
  # every Lease request now takes 4 s: longer than the 2 s renew deadline each try is bounded by
  fake_ctl POST /faults '{"path":"/leases/","action":"delay","seconds":4,"count":-1}' >/dev/null
  wait_log a "lost Lease reload/stakater-reloader-lock"
  # not the leader: the change is queued, not rolled
  fake_cm cfg '{"v":"1"}'
  wait_log a "Deployment default/web: change queued; not leading"
  fake_ctl DELETE /faults >/dev/null
  wait_log a "leading: 1 workloads had changes pending, 1 still to roll"
  wait_patches 1 /web$
  [ "$(npatches /web$)" -eq 1 ]
  [[ $(patches /web$) == *"$(sha1 v=1)"* ]]
  [ "$(grep -c 'acquired Lease' "$BATS_TEST_TMPDIR/a.log")" -eq 2 ]
}

@test "HA: two instances started together: one creates the Lease, the other stands by; each change rolled once" {
  fake_cm c1 '{"v":"0"}'
  fake_cm c2 '{"v":"0"}'
  fake_deploy d1 c1
  fake_deploy d2 c2
  run_ha a
  run_ha b
  for i in $(seq 200); do
    [ -n "$(holder)" ] && break
    sleep 0.1
  done
  h=$(holder)
  [ "$h" = a ] || [ "$h" = b ]
  other=$([ "$h" = a ] && echo b || echo a)
  wait_log "$other" "leader is $h"
  # one Lease create answered 201; a second one, if any, got 409 AlreadyExists
  [ "$(fake_ctl GET "/requests?method=POST&path=/leases\$" | jq -c '[.items[].status] | sort | .[0:1]')" = '[201]' ]
  [ "$(fake_ctl GET "/requests?method=POST&path=/leases\$" | jq '[.items[] | select(.status != 201 and .status != 409)] | length')" -eq 0 ]
  fake_cm c1 '{"v":"1"}'
  wait_patches 1 /d1$
  # a later change as a sentinel: by its rollout, a duplicate of d1's would have come
  fake_cm c2 '{"v":"1"}'
  wait_patches 1 /d2$
  [ "$(npatches /d1$)" -eq 1 ]
  [ "$(npatches /d2$)" -eq 1 ]
}

@test "HA: a CronJob (nothing recorded on it): the standby drops a change the leader handled; the takeover creates no second Job" {
  fake_cm cfg '{"v":"0"}'
  fake_cm c2 '{"v":"0"}'
  fake_deploy d2 c2
  fake_put '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"job","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}}}'
  run_ha a --coalesce-window 0 --min-interval 0
  wait_holder a
  run_ha b -v --coalesce-window 0 --min-interval 0
  wait_log b "leader is a"
  fake_cm cfg '{"v":"1"}'
  fake_ctl GET "/requests?method=POST&path=/jobs\$&min=1&wait=20" >/dev/null
  # a Lease renewal seen well after the change: the leader was alive and created the Job
  wait_log b "CronJob default/nightly: the leader was alive well after the change; not pending here"
  kill -9 "$PID_a"
  wait_holder b
  wait_log b "leading: 0 workloads had changes pending, 0 still to roll"
  # a sentinel change rolled by b: a second Job, had there been one, came before it
  fake_cm c2 '{"v":"1"}'
  wait_patches 1 /d2$
  [ "$(fake_ctl GET "/requests?method=POST&path=/jobs\$&count=1" | jq .count)" -eq 1 ]
}

@test "HA: a Job's DELETE answered past the renew deadline: its POST still goes while the Lease is ours; the Job is never lost" {
  fake_cm cfg '{"v":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","labels":{"app":"migrate"},"annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"backoffLimit":1,"template":{"metadata":{"labels":{"app":"migrate"}},"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  leader_a_standby_b --coalesce-window 0 --min-interval 0
  # the DELETE takes effect at once, its answer comes 4 s later: past a's renew deadline (2 s)
  fake_ctl POST /faults '{"method":"DELETE","path":"/jobs/migrate$","action":"delay-response","seconds":4}' >/dev/null
  fake_cm cfg '{"v":"1"}'
  fake_ctl GET "/requests?method=DELETE&path=/jobs/migrate\$&min=1&wait=20" >/dev/null
  # a Job named migrate exists again, within 20 s (whoever created it)
  for i in $(seq 200); do
    n=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&namespace=default' | jq '[.items[] | select(.metadata.name == "migrate")] | length')
    [ "$n" -ge 1 ] && break
    sleep 0.1
  done
  fake_ctl GET '/requests?method=(DELETE|POST)&path=/jobs' | jq -c '.items[] | {method, path, user, status}' >&3 || true
  echo "# a: $(grep -c 'Job default/migrate' "$BATS_TEST_TMPDIR/a.log") Job lines; $(grep -h 'Job default/migrate' "$BATS_TEST_TMPDIR"/[ab].log | head -3)" >&3
  [ "$n" -eq 1 ]
  # one DELETE, one POST
  [ "$(fake_ctl GET "/requests?method=DELETE&path=/jobs/migrate\$&count=1" | jq .count)" -eq 1 ]
  [ "$(fake_ctl GET "/requests?method=POST&path=/jobs\$&count=1" | jq .count)" -eq 1 ]
}

@test "HA: a 429 asking the leader to wait past its renew deadline: the write gives up (pending), the Lease is not lost" {
  fake_cm c1 '{"v":"0"}'
  fake_deploy d1 c1
  leader_a_standby_b --coalesce-window 0 --min-interval 0
  fake_ctl POST /faults '{"method":"PATCH","path":"/deployments/d1$","action":"status","code":429,"retryAfter":10}' >/dev/null
  fake_cm c1 '{"v":"1"}'
  # rolled later by a, which kept leading: the Lease was renewed meanwhile (30 s bound)
  for i in $(seq 300); do
    ok=$(fake_ctl GET '/requests?method=PATCH&path=/d1$' | jq -r '[.items[] | select(.status == 200)][0] | "\(.user // "") \(.body)"')
    [ "$ok" != "null" ] && [ -n "$ok" ] && [ "$ok" != " null" ] && break
    sleep 0.1
  done
  echo "# rolled: ${ok:0:40}..." >&3
  [[ $ok == *"$(sha1 v=1)"* ]]
  [ "$(holder)" = a ]
  ! grep -q "acquired Lease" "$BATS_TEST_TMPDIR/b.log" || false
  ! grep -q "lost Lease" "$BATS_TEST_TMPDIR/a.log" || false
  grep -q "renewal is overdue by the end of the retry wait" "$BATS_TEST_TMPDIR/a.log"
}

@test "the Lease is owned by the Deployment NODEPROBE_RELOAD_LEASE_OWNER names (deleted with it); a Lease without an owner is adopted at takeover (issue 30)" {
  fake_deployment nodeprobe-reload '{}' '{"containers":[{"name":"reload","image":"x"}]}' '' reload
  uid=$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&namespace=reload&name=nodeprobe-reload' | jq -r .metadata.uid)
  want="[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"nodeprobe-reload\",\"uid\":\"$uid\"}]"
  NODEPROBE_RELOAD_LEASE_OWNER=nodeprobe-reload run_ha a
  wait_holder a
  # created with the reference (the garbage collector deletes it with the Deployment)
  [ "$(fake_ctl GET "/requests?method=POST&path=$LEASES\$" | jq -c '.items[0].body | fromjson | .metadata.ownerReferences')" = "$want" ]
  [ "$(lease | jq -c .metadata.ownerReferences)" = "$want" ]
  # renewals keep it
  fake_ctl GET "/requests?method=PUT&path=$LEASES/stakater-reloader-lock\$&min=2&wait=10" >/dev/null
  [ "$(lease | jq -c .metadata.ownerReferences)" = "$want" ]
  kill -9 "$PID_a"
  # a Lease left without an owner (an older version's, expired): the next leader adds ours
  fake_put '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"stakater-reloader-lock","namespace":"reload"},"spec":{"holderIdentity":"gone","leaseDurationSeconds":1,"leaseTransitions":3}}'
  [ "$(lease | jq -c '.metadata.ownerReferences // []')" = "[]" ]
  NODEPROBE_RELOAD_LEASE_OWNER=nodeprobe-reload run_ha b
  wait_holder b
  [ "$(lease | jq -c .metadata.ownerReferences)" = "$want" ]
}

@test "an owner Deployment whose GET fails with 500 (each of the client's 5 tries): read again at a later renewal, the Lease gets its owner (review)" {
  fake_deployment nodeprobe-reload '{}' '{"containers":[{"name":"reload","image":"x"}]}' '' reload
  uid=$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&namespace=reload&name=nodeprobe-reload' | jq -r .metadata.uid)
  want="[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"nodeprobe-reload\",\"uid\":\"$uid\"}]"
  fake_ctl POST /faults '{"method":"GET","path":"/deployments/nodeprobe-reload$","action":"status","code":500,"count":5}' >/dev/null
  NODEPROBE_RELOAD_LEASE_OWNER=nodeprobe-reload run_ha a
  wait_holder a
  # the sixth GET succeeds: the reference is added at the renewal after it
  fake_ctl GET '/requests?method=GET&path=/deployments/nodeprobe-reload$&min=6&wait=30' >/dev/null
  fake_ctl GET "/requests?method=PUT&path=$LEASES/stakater-reloader-lock\$&min=1&wait=10" >/dev/null
  for i in $(seq 100); do
    [ "$(lease | jq -c '.metadata.ownerReferences // []')" = "$want" ] && break
    sleep 0.1
  done
  [ "$(lease | jq -c '.metadata.ownerReferences // []')" = "$want" ] || { cat "$BATS_TEST_TMPDIR/a.log" >&2; return 1; }
  [ "$(grep -c 'cannot be read' "$BATS_TEST_TMPDIR/a.log")" -eq 1 ]
  grep -q "cannot be read (HTTP error): trying again at the next renewal" "$BATS_TEST_TMPDIR/a.log"
}

@test "an owner Deployment that cannot be read: one warning, the Lease is made without an owner (issue 30)" {
  NODEPROBE_RELOAD_LEASE_OWNER=missing run_ha a
  wait_holder a
  wait_log a "Lease reload/stakater-reloader-lock: its owner, Deployment reload/missing, cannot be read (HTTP error): the Lease is not deleted with it"
  [ "$(lease | jq -c '.metadata.ownerReferences // []')" = "[]" ]
  [ "$(grep -c 'cannot be read' "$BATS_TEST_TMPDIR/a.log")" -eq 1 ]
}
