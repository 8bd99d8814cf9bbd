#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-reload's bounds against test/fake-apiserver (issue 17): reload lists over their
# budget are refused with a ReloadSkipped Event while other workloads still roll; env var names
# two objects share roll once per real change; kubeconfig inputs named in every error.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"

setup() {
  reload_fake_setup
}

teardown() {
  reload_stop
  fake_stop
}

POD='{"containers":[{"name":"app","image":"x"}]}'
# events REASON: the bodies of the Events POSTed with that reason, one a line.
events() { fake_ctl GET '/requests?method=POST&path=/events$' | jq -c --arg r "$1" '.items[].body | fromjson | select(.reason == $r)'; }

@test "budget: a reload list over 64 KiB is refused with a ReloadSkipped Event naming it; other workloads still roll" {
  fake_cm cfg '{"k":"0"}'
  # 70 KB of patterns (cfg among them); the chart's 64Mi would not hold many such lists
  big="cfg, $(seq -f 'cfg-%06g-.*' 1 5000 | paste -sd, -)"
  fake_deployment big "{\"configmap.reloader.stakater.com/reload\":\"$big\"}" "$POD"
  fake_deployment small '{"configmap.reloader.stakater.com/reload":"cfg, other-.*"}' "$POD"
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=7&wait=60" >/dev/null
  msg="Deployment default/big: annotation configmap.reloader.stakater.com/reload: ${#big} bytes of patterns, over the limit of 65536 bytes per annotation; the list is ignored (name fewer objects, or match them with fewer, broader patterns)"
  fake_ctl GET '/requests?method=POST&path=/events$&min=1&wait=10' >/dev/null
  run events ReloadSkipped
  [ "${#lines[@]}" -eq 1 ]
  [ "$(jq -r '[.type, .involvedObject.kind, .involvedObject.name, .message] | join("|")' <<<"${lines[0]}")" = "Warning|Deployment|big|$msg" ]
  grep -qF "warning: $msg" "$RL_LOG"
  fake_cm cfg '{"k":"1"}'
  fake_ctl GET '/requests?method=PATCH&path=/deployments/small$&min=1&wait=10' >/dev/null
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/small$&count=1' | jq .count)" -eq 1 ]
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/big$&count=1' | jq .count)" -eq 0 ]
  # warned once: the change re-read nothing
  [ "$(grep -cF "$msg" "$RL_LOG")" -eq 1 ]
}

@test "collision: ConfigMaps a-b and a.b share STAKATER_A_B_CONFIGMAP: once rolls at most once, then nothing; warned once" {
  fake_cm a-b '{"k":"1"}'
  fake_cm a.b '{"k":"2"}'
  h1=$(printf 'k=1' | sha1sum | cut -c1-40)
  h2=$(printf 'k=2' | sha1sum | cut -c1-40)
  # as Reloader left it: the hash of whichever changed last
  fake_deployment web '{"reloader.stakater.com/auto":"true"}' "{\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"envFrom\":[{\"configMapRef\":{\"name\":\"a-b\"}},{\"configMapRef\":{\"name\":\"a.b\"}}],\"env\":[{\"name\":\"STAKATER_A_B_CONFIGMAP\",\"value\":\"$h1\"}]}]}"
  want=$(printf 'a-b=%s;a.b=%s' "$h1" "$h2" | sha1sum | cut -c1-40)
  run "$BIN" --kubeconfig "$KC" --mode once
  [ "$status" -eq 0 ]
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -c '.spec.template.spec.containers[0].env')" = "[{\"name\":\"STAKATER_A_B_CONFIGMAP\",\"value\":\"$want\"}]" ]
  msg="Deployment default/web: 2 ConfigMaps it reloads on map to env var STAKATER_A_B_CONFIGMAP in container 'app'"
  [[ $output == *"warning: $msg"* ]]
  run "$BIN" --kubeconfig "$KC" --mode once
  [ "$status" -eq 0 ]
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  [[ $output != *"$msg"* ]]
  run events ReloadEnvCollision
  [ "${#lines[@]}" -eq 1 ]
  [[ $(jq -r .message <<<"${lines[0]}") == "$msg ('a"*"' among them): it holds one hash of all of them (SHA-1 of name=hash, sorted by name); rename them to tell them apart" ]]
  # a real change of either rolls once more, to the new combined value
  fake_cm a.b '{"k":"3"}'
  run "$BIN" --kubeconfig "$KC" --mode once
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 2 ]
  run "$BIN" --kubeconfig "$KC" --mode once
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 2 ]
}

@test "kubeconfig: a FIFO is named as one; \$KUBECONFIG over 32 files names the cap; a token beside exec is said to win" {
  mkfifo "$BATS_TEST_TMPDIR/fifo"
  run_expect_fail 1 "$BIN" --kubeconfig "$BATS_TEST_TMPDIR/fifo" --mode once
  [[ $output == *"$BATS_TEST_TMPDIR/fifo: is a FIFO: a kubeconfig must be a regular file (or a symbolic link to one)"* ]]
  list=""
  for i in $(seq 33); do cp "$KC" "$BATS_TEST_TMPDIR/kc$i"; list+="$BATS_TEST_TMPDIR/kc$i:"; done
  KUBECONFIG=${list%:} run_expect_fail 1 env -u KUBERNETES_SERVICE_HOST "$BIN" --mode once
  [[ $output == *'$KUBECONFIG: names more than 32 existing files, the limit: merge them into fewer (kubectl config view --flatten) or name one with --kubeconfig'* ]]
  printf '    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n' >"$BATS_TEST_TMPDIR/exec"
  sed "/^    token:/r $BATS_TEST_TMPDIR/exec" "$KC" >"$BATS_TEST_TMPDIR/kc-exec"
  run "$BIN" --kubeconfig "$BATS_TEST_TMPDIR/kc-exec" --mode once --no-events
  [ "$status" -eq 0 ]
  [[ $output == *"users[fake].user: both exec and token are set: token is used and the exec plugin is not run (as client-go and kubectl decide)"* ]]
}

@test "budget: a refused list flipped A/B/A gives one ReloadSkipped Event (one per workload per 10 minutes)" {
  fake_cm cfg '{"k":"0"}'
  a="cfg, $(seq -f 'cfg-%06g-.*' 1 5000 | paste -sd, -)"
  b="cfg, $(seq -f 'cfg-%06g-b.*' 1 5000 | paste -sd, -)"
  fake_deployment big "{\"configmap.reloader.stakater.com/reload\":\"$a\"}" "$POD"
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=7&wait=60" >/dev/null
  fake_ctl GET '/requests?method=POST&path=/events$&min=1&wait=10' >/dev/null
  fake_deployment big "{\"configmap.reloader.stakater.com/reload\":\"$b\"}" "$POD"
  fake_deployment big "{\"configmap.reloader.stakater.com/reload\":\"$a\"}" "$POD"
  # after the flips on the same watch, in order: another refused list, whose Event marks them applied
  fake_deployment marker "{\"configmap.reloader.stakater.com/reload\":\"$a\"}" "$POD"
  fake_ctl GET '/requests?method=POST&path=/events$&min=2&wait=10' >/dev/null
  run events ReloadSkipped
  [ "${#lines[@]}" -eq 2 ]
  [ "$(jq -r .involvedObject.name <<<"${lines[0]}")" = big ]
  [ "$(jq -r .involvedObject.name <<<"${lines[1]}")" = marker ]
  [ "$(grep -c 'big: annotation configmap.reloader.stakater.com/reload: 70004 bytes of patterns, over the limit' "$RL_LOG")" -eq 1 ]
}

@test "collision: 70 ConfigMaps a-b, a--b, ... and reload list a-+b: once rolls once, then nothing (the 64 lowest names, whichever changed)" {
  for i in $(seq 70); do fake_cm "a$(printf -- '-%.0s' $(seq "$i"))b" "{\"k\":\"$i\"}"; done
  fake_deployment web '{"configmap.reloader.stakater.com/reload":"a-+b"}' '{"containers":[{"name":"app","image":"x","env":[{"name":"STAKATER_A_B_CONFIGMAP","value":"0000000000000000000000000000000000000000"}]}]}'
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$status" -eq 0 ]
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  first=$output
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$status" -eq 0 ]
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  [[ $first == *"70 ConfigMaps it reloads on map to env var STAKATER_A_B_CONFIGMAP"* ]]
}

@test "collision: deleting one of two sharers (no --reload-on-delete) rolls once at the next start, then nothing; so does creating it again" {
  fake_cm a-b '{"k":"1"}'
  fake_cm a.b '{"k":"2"}'
  h1=$(printf 'k=1' | sha1sum | cut -c1-40)
  fake_deployment web '{"reloader.stakater.com/auto":"true"}' '{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"a-b"}},{"configMapRef":{"name":"a.b"}}]}]}'
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 0 ] # nothing recorded yet
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&namespace=default&name=a.b' >/dev/null
  # as Reloader would have left it after a.b changed last: the combined value is ours, here a.b's
  fake_put "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -c '.spec.template.spec.containers[0].env = [{"name":"STAKATER_A_B_CONFIGMAP","value":"x"}]')"
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$h1" ]
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
  fake_cm a.b '{"k":"2"}'
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 2 ]
  run "$BIN" --kubeconfig "$KC" --mode once --no-events
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 2 ]
}

@test "collision, watch: a change of a.b rolls once to the combined value, a change of a-b once more, each warned about once" {
  fake_cm a-b '{"k":"1"}'
  fake_cm a.b '{"k":"2"}'
  fake_deployment web '{"reloader.stakater.com/auto":"true"}' '{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"a-b"}},{"configMapRef":{"name":"a.b"}}]}]}'
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=7&wait=60" >/dev/null
  fake_cm a.b '{"k":"3"}'
  fake_ctl GET '/requests?method=PATCH&min=1&wait=10' >/dev/null
  h1=$(printf 'k=1' | sha1sum | cut -c1-40)
  h3=$(printf 'k=3' | sha1sum | cut -c1-40)
  want=$(printf 'a-b=%s;a.b=%s' "$h1" "$h3" | sha1sum | cut -c1-40)
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -c '.spec.template.spec.containers[0].env')" = "[{\"name\":\"STAKATER_A_B_CONFIGMAP\",\"value\":\"$want\"}]" ]
  fake_cm a-b '{"k":"4"}'
  fake_ctl GET '/requests?method=PATCH&min=2&wait=10' >/dev/null
  h4=$(printf 'k=4' | sha1sum | cut -c1-40)
  want=$(printf 'a-b=%s;a.b=%s' "$h4" "$h3" | sha1sum | cut -c1-40)
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$want" ]
  fake_ctl GET '/requests?method=POST&path=/events$&min=3&wait=10' >/dev/null
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 2 ]
  run events ReloadEnvCollision
  [ "${#lines[@]}" -eq 1 ]
  [ "$(grep -c 'map to env var STAKATER_A_B_CONFIGMAP' "$RL_LOG")" -eq 1 ]
}

@test "collision, HA: the standby sees the leader's combined value and keeps nothing pending; its takeover rolls nothing" {
  fake_cm a-b '{"k":"1"}'
  fake_cm a.b '{"k":"2"}'
  fake_deployment web '{"reloader.stakater.com/auto":"true"}' '{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"a-b"}},{"configMapRef":{"name":"a.b"}}]}]}'
  ha=(--listen '' --no-events --enable-ha --leader-elect-lease-duration 3s
    --leader-elect-renew-deadline 2s --leader-elect-retry-period 300ms --coalesce-window 0
    --min-interval 0)
  POD_NAME=a POD_NAMESPACE=reload "$BIN" --kubeconfig "$KC" "${ha[@]}" >"$BATS_TEST_TMPDIR/a.log" 2>&1 3>&- &
  RL_PID=$!
  for i in $(seq 200); do grep -q "acquired Lease" "$BATS_TEST_TMPDIR/a.log" && break; sleep 0.1; done
  POD_NAME=b POD_NAMESPACE=reload "$BIN" --kubeconfig "$KC" -v "${ha[@]}" >"$RL_LOG" 2>&1 3>&- &
  B_PID=$!
  for i in $(seq 200); do grep -q "leader is a" "$RL_LOG" && break; sleep 0.1; done
  # the change only once the standby's 7 watches are open too (14 in all): made before, the
  # standby's LIST already holds it and there is no event to see (a race on a loaded machine)
  fake_ctl GET "/watchers?min=14&wait=20" >/dev/null
  fake_cm a.b '{"k":"3"}'
  fake_ctl GET '/requests?method=PATCH&min=1&wait=20' >/dev/null
  for i in $(seq 100); do grep -q "web: rolled by the leader; not pending here" "$RL_LOG" && break; sleep 0.1; done
  kill -9 "$RL_PID"
  wait "$RL_PID" 2>/dev/null || true
  RL_PID=$B_PID
  for i in $(seq 200); do grep -q "leading: " "$RL_LOG" && break; sleep 0.1; done
  grep -q "Deployment default/web: rolled by the leader; not pending here" "$RL_LOG"
  grep -q "leading: 0 workloads had changes pending, 0 still to roll" "$RL_LOG"
  [ "$(fake_ctl GET '/requests?method=PATCH&count=1' | jq .count)" -eq 1 ]
}

@test "budget: a list refused for the namespace's 2 MiB is compiled once another workload gives budget back" {
  fake_cm cfg '{"k":"0"}'
  fake_deployment a "{\"configmap.reloader.stakater.com/reload\":\"$(seq -f 'a%g-.*' 1 100 | paste -sd, -)\"}" "$POD"
  fake_deployment b "{\"configmap.reloader.stakater.com/reload\":\"cfg, $(seq -f 'b%g-.*' 1 30 | paste -sd, -)\"}" "$POD"
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=7&wait=60" >/dev/null
  fake_ctl GET '/requests?method=POST&path=/events$&min=1&wait=10' >/dev/null
  run events ReloadSkipped
  [ "${#lines[@]}" -eq 1 ]
  [[ $(jq -r .message <<<"${lines[0]}") == "Deployment default/"[ab]": annotation configmap.reloader.stakater.com/reload: its "*" entries would need about "*" KiB, and the reload lists of one namespace may use 2048 KiB (namespace 'default': "*" KiB in use); the list is ignored"* ]]
  [ "$(jq -r .involvedObject.name <<<"${lines[0]}")" = b ] # listed after a
  fake_cm cfg '{"k":"1"}'
  fake_ctl DELETE "/objects?apiVersion=apps/v1&kind=Deployment&namespace=default&name=a" >/dev/null
  for i in $(seq 100); do grep -q "b: its reload lists fit the budgets now" "$RL_LOG" && break; sleep 0.1; done
  grep -q "Deployment default/b: its reload lists fit the budgets now" "$RL_LOG"
  fake_cm cfg '{"k":"2"}'
  fake_ctl GET '/requests?method=PATCH&path=/deployments/b$&min=1&wait=10' >/dev/null
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/b$&count=1' | jq .count)" -eq 1 ]
}
