#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-reload --enable-csi-integration against test/fake-apiserver: Reloader v1.4.21's
# Secrets Store CSI scenarios (its test/e2e/csi: rotation rolls once with Reloader's hash, an
# unchanged status rolls nothing, the exclude annotation, the CRD installed after start,
# namespaced mode), the annotations strategy and the named reload list. Expected hashes are
# sha1sum of the string Reloader builds (internal/pkg/util/util.go
# GetSHAfromSecretProviderClassPodStatus), written out here, not computed by our code.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"
SPCPS_CRD='{"resource":"secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses"}'
SPC_CRD='{"resource":"secrets-store.csi.x-k8s.io/v1/secretproviderclasses"}'

setup() {
  reload_fake_setup
}

teardown() {
  reload_stop
  fake_stop
}

sha1() { printf '%s' "$1" | sha1sum | cut -c1-40; }

# A Deployment NAME in NS (default: default) with META-ANNOTATIONS mounting SecretProviderClass
# vault-db through a CSI volume.
CSI_POD='{"containers":[{"name":"app","image":"x","volumeMounts":[{"name":"secrets","mountPath":"/mnt/secrets","readOnly":true}]}],"volumes":[{"name":"secrets","csi":{"driver":"secrets-store.csi.k8s.io","readOnly":true,"volumeAttributes":{"secretProviderClass":"vault-db"}}}]}'
deployment() { fake_deployment "$1" "$2" "$CSI_POD" "" "${3:-default}"; }

# spcps POD VERSION-OF-db-pass [NS]: the driver's status object of POD mounting vault-db, as the
# driver names it (<pod>-<ns>-<spc>), with two objects.
spcps() {
  local ns=${3:-default}
  fake_put "{\"apiVersion\":\"secrets-store.csi.x-k8s.io/v1\",\"kind\":\"SecretProviderClassPodStatus\",\"metadata\":{\"name\":\"$1-$ns-vault-db\",\"namespace\":\"$ns\",\"labels\":{\"secrets-store.csi.k8s.io/pod-name\":\"$1\"}},\"status\":{\"podName\":\"$1\",\"secretProviderClassName\":\"vault-db\",\"mounted\":true,\"targetPath\":\"/var/lib/kubelet/pods/$1/volumes/kubernetes.io~csi/secrets/mount\",\"objects\":[{\"id\":\"secret/db-pass\",\"version\":\"$2\"},{\"id\":\"secret/api-key\",\"version\":\"7\"}]}}"
}

# spc NAME ANNOTATIONS: SecretProviderClass NAME in default (a Vault provider's, as the docs show)
spc() {
  fake_put "{\"apiVersion\":\"secrets-store.csi.x-k8s.io/v1\",\"kind\":\"SecretProviderClass\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\",\"annotations\":$2},\"spec\":{\"provider\":\"vault\",\"parameters\":{\"roleName\":\"db\",\"objects\":\"- objectName: db-pass\\n  secretPath: secret/db-pass\\n\"}}}"
}

# start NWATCHES [ARGS]: watch mode; wait until NWATCHES watches are open.
start() {
  local n=$1
  shift
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 --enable-csi-integration "$@" >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=$n&wait=10" >/dev/null
  [ "$(fake_ctl GET /watchers | jq .count)" -ge "$n" ] || { cat "$RL_LOG" >&2; return 1; }
}

reqs() {
  fake_ctl GET "/requests?method=$1&path=$2&min=${3:-1}&wait=10" |
    jq -r '.items[] | "\(.status) \(.body)"'
}
nreqs() { fake_ctl GET "/requests?method=$1&path=$2&count=1" | jq .count; }
env_of() {
  fake_ctl GET "/objects?apiVersion=apps/v1&kind=Deployment&name=$1&namespace=${2:-default}" |
    jq -r '.spec.template.spec.containers[0].env // [] | map("\(.name)=\(.value)") | join(" ")'
}

@test "CSI: a rotation rolls once with Reloader's hash (env-vars); a second pod's same rotation and an unchanged status roll nothing" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  spcps web-1 1
  spcps web-2 1
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  start 8 --listen "127.0.0.1:$port"
  # the start rolls nothing (only updates count, as in Reloader)
  [ "$(nreqs PATCH .)" -eq 0 ]
  fake_ctl DELETE /requests >/dev/null
  spcps web-1 2
  out=$(reqs PATCH /apis/apps/v1/namespaces/default/deployments/web$)
  h=$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=2')
  [ "$out" = "200 {\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"STAKATER_VAULT_DB_SECRETPROVIDERCLASS\",\"value\":\"$h\"}]}]}}}}" ]
  # the rotation's requests, as the fake API server logged them: the PATCH and its Event; no
  # LIST, and no GET of the SecretProviderClass (its match/ignore annotations come from its watch)
  fake_ctl GET '/requests?min=2&wait=10' | jq -r '.items[] | "\(.method) \(.path)?\(.query) \(.status)"' >&3 || true
  [ "$(fake_ctl GET '/requests?method=GET&watch=0&count=1' | jq .count)" -eq 0 ]
  # the other pod's status rotates to the same versions: the workload already has the hash
  spcps web-2 2
  sleep 0.5
  [ "$(nreqs PATCH .)" -eq 1 ]
  # an update that leaves id=version alone (mounted flips) is no change: the oracle is the
  # unchanged counter going up by exactly one (the workload already carries the hash, so a PATCH
  # count alone could not tell), and no SecretProviderClass GET for it
  nodata() { curl -sS "http://127.0.0.1:$port/metrics" | sed -n 's/^reloader_skipped_total{reason="no_data_change"} //p'; }
  u0=$(nodata)
  fake_put '{"apiVersion":"secrets-store.csi.x-k8s.io/v1","kind":"SecretProviderClassPodStatus","metadata":{"name":"web-1-default-vault-db","namespace":"default"},"status":{"podName":"web-1","secretProviderClassName":"vault-db","mounted":false,"objects":[{"id":"secret/api-key","version":"7"},{"id":"secret/db-pass","version":"2"}]}}'
  for _ in $(seq 50); do [ "$(nodata)" = $((u0 + 1)) ] && break; sleep 0.1; done
  [ "$(nodata)" = $((u0 + 1)) ]
  [ "$(nreqs PATCH .)" -eq 1 ]
  [ "$(env_of web)" = "STAKATER_VAULT_DB_SECRETPROVIDERCLASS=$h" ]
  ! grep -q 'error\|not supported\|is off' "$RL_LOG" || false
}

@test "CSI: a status deleted while the watch is down (410, re-list) is swept; reloader_events_received_total counts the statuses" {
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  metrics() { curl -sS "http://127.0.0.1:$port/metrics"; }
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  spcps web-1 1
  spcps web-2 1
  start 8 --listen "127.0.0.1:$port"
  grep -qx 'nodeprobe_reload_objects{resource="secretproviderclasspodstatuses"} 2' <<<"$(metrics)"
  # as Reloader's informers count: the initial LIST's items as adds, then each update
  grep -qx 'reloader_events_received_total{event_type="add",resource_type="secretproviderclasspodstatuses"} 2' <<<"$(metrics)"
  spcps web-1 2
  reqs PATCH /deployments/web$ >/dev/null
  grep -qx 'reloader_events_received_total{event_type="update",resource_type="secretproviderclasspodstatuses"} 1' <<<"$(metrics)"
  # the statuses' watch is down (its reconnect held 1 s): web-2's pod goes, web-1 rotates, and
  # the history is compacted, so the watch gets 410 and the statuses are listed again
  fake_ctl POST /faults '{"path":"/secretproviderclasspodstatuses$","watch":true,"action":"delay","seconds":1,"count":1}' >/dev/null
  fake_ctl POST /drop-watches >/dev/null
  fake_ctl DELETE '/objects?apiVersion=secrets-store.csi.x-k8s.io/v1&kind=SecretProviderClassPodStatus&namespace=default&name=web-2-default-vault-db' >/dev/null
  spcps web-1 3
  fake_ctl POST /compact >/dev/null
  out=$(reqs PATCH /deployments/web$ 2 | tail -1)
  [[ $out == *"$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=3')"* ]]
  grep -q 'secretproviderclasspodstatuses watch .*is gone (410); re-listing\|is gone (410); re-listing' "$RL_LOG"
  # web-2's status is gone from the table: memory stays bounded by the statuses there are
  grep -qx 'nodeprobe_reload_objects{resource="secretproviderclasspodstatuses"} 1' <<<"$(metrics)" ||
    { metrics | grep secretproviderclass >&2; false; }
}

@test "CSI: secretproviderclasses.exclude.reloader.stakater.com/reload keeps an auto workload still; reloader.stakater.com/auto selects" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment skip '{"reloader.stakater.com/auto":"true","secretproviderclasses.exclude.reloader.stakater.com/reload":"other, vault-db"}'
  deployment roll '{"reloader.stakater.com/auto":"true"}'
  spcps p 1
  start 8
  spcps p 2
  reqs PATCH /deployments/roll$ >/dev/null
  sleep 0.5
  [ "$(nreqs PATCH /deployments/skip$)" -eq 0 ]
}

@test "CSI: the SecretProviderClass's own ignore annotation keeps every workload still; its match annotation lets a search workload select it" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /crds "$SPC_CRD" >/dev/null
  spc vault-db '{"reloader.stakater.com/ignore":"true"}'
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  deployment finder '{"reloader.stakater.com/search":"true"}'
  spcps p 1
  spcps q 1
  start 9
  # both pods' statuses rotate in one write: the SecretProviderClass's watch has its ignore,
  # which keeps both workloads still
  q='{"apiVersion":"secrets-store.csi.x-k8s.io/v1","kind":"SecretProviderClassPodStatus","metadata":{"name":"%s-default-vault-db","namespace":"default"},"status":{"podName":"%s","secretProviderClassName":"vault-db","mounted":true,"objects":[{"id":"secret/db-pass","version":"2"},{"id":"secret/api-key","version":"7"}]}}'
  fake_put "{\"items\":[$(printf "$q" p p),$(printf "$q" q q)]}"
  sleep 0.5
  [ "$(nreqs PATCH .)" -eq 0 ]
  [ "$(nreqs GET /secretproviderclasses/vault-db$)" -eq 0 ]
  # match instead of ignore: the search workload selects it, the auto one still rolls (the
  # class's event and the status's come on two watches: let the first be read first)
  spc vault-db '{"reloader.stakater.com/match":"true"}'
  sleep 0.3
  spcps p 3
  h=$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=3')
  [[ $(reqs PATCH /deployments/finder$) == *"$h"* ]]
  [[ $(reqs PATCH /deployments/web$) == *"$h"* ]]
  # neither: search alone selects nothing
  spc vault-db '{}'
  sleep 0.3
  spcps p 4
  reqs PATCH /deployments/web$ 2 >/dev/null
  sleep 0.5
  [ "$(nreqs PATCH /deployments/finder$)" -eq 1 ]
}

@test "CSI: rotations need no request of their own: with secretproviderclasses stalled, 20 rotations send no GET and hold up no ConfigMap rollout" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /crds "$SPC_CRD" >/dev/null
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"a":"1"}}'
  fake_put '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"cm","namespace":"default","annotations":{"configmap.reloader.stakater.com/reload":"cfg"}},"spec":{"selector":{"matchLabels":{"app":"cm"}},"template":{"metadata":{"labels":{"app":"cm"}},"spec":{"containers":[{"name":"app","image":"x"}]}}}}'
  st() { printf '{"apiVersion":"secrets-store.csi.x-k8s.io/v1","kind":"SecretProviderClassPodStatus","metadata":{"name":"p-%s","namespace":"default"},"status":{"podName":"p","secretProviderClassName":"spc-%s","mounted":true,"objects":[{"id":"k","version":"%s"}]}}' "$1" "$1" "$2"; }
  for i in $(seq 1 20); do fake_put "$(st "$i" 1)"; done
  start 9
  # any request to secretproviderclasses from now on would wait 30 s
  fake_ctl POST /faults '{"path":"/secretproviderclasses","action":"delay","seconds":30,"count":-1}' >/dev/null
  fake_ctl DELETE /requests >/dev/null
  for i in $(seq 1 20); do fake_put "$(st "$i" 2)"; done
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"a":"2"}}'
  fake_ctl GET '/requests?method=PATCH&path=/deployments/cm$&wait=20' | jq -e '.items | length == 1' >/dev/null ||
    { grep -v '^$' "$RL_LOG" | tail -5 >&2; false; }
  [ "$(nreqs GET /secretproviderclasses)" -eq 0 ]
  fake_ctl DELETE /faults >/dev/null
}

@test "CSI: --resource-label-selector is sent on the statuses' LIST and WATCH too, as Reloader" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  start 8 --resource-label-selector 'team:a'
  q=$(fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$' | jq -r '.items[] | "\(.watch) \(.query)"')
  echo "$q" >&2
  # the LIST and the WATCH, both with the translated selector
  [ "$(grep -c 'labelSelector=team\(%3D\|=\)a' <<<"$q")" -ge 2 ]
  ! grep -v 'labelSelector=team\(%3D\|=\)a' <<<"$q" || false
}

@test "CSI: a workload's secretproviderclass reload list changed to an invalid one is warned about" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/reload":"vault-db"}'
  start 8
  deployment web '{"secretproviderclass.reloader.stakater.com/reload":"["}'
  fake_ctl GET '/watchers?min=8&wait=2' >/dev/null
  sleep 0.5
  grep -q "secretproviderclass.reloader.stakater.com/reload: invalid regex '\[' skipped" "$RL_LOG" ||
    { cat "$RL_LOG" >&2; false; }
}

@test "CSI: annotations strategy records SECRETPROVIDERCLASS in last-reloaded-from; a named reload list rolls without a CSI volume" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  fake_put '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"named","namespace":"default","annotations":{"secretproviderclass.reloader.stakater.com/reload":"vault-.*"}},"spec":{"selector":{"matchLabels":{"app":"n"}},"template":{"metadata":{"labels":{"app":"n"}},"spec":{"containers":[{"name":"main","image":"x"}]}}}}'
  spcps web-1 1
  start 8 --reload-strategy annotations
  spcps web-1 3
  h=$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=3')
  out=$(reqs PATCH /deployments/web$)
  [[ $out == '200 {"spec":{"template":{"metadata":{"annotations":{"reloader.stakater.com/last-reloaded-from":"{\"type\":\"SECRETPROVIDERCLASS\",\"name\":\"vault-db\",\"namespace\":\"default\",\"hash\":\"'"$h"'\",\"containerRefs\":[\"app\"],\"observedAt\":'* ]]
  out=$(reqs PATCH /deployments/named$)
  [[ $out == *'\"hash\":\"'"$h"'\",\"containerRefs\":[\"main\"]'* ]]
}

@test "CSI: an absent CRD is said once; installed later it is listed and watched within 30 s and a rotation rolls" {
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  start 7 --log-level debug
  n0=$(grep -c 're-list: checking every workload' "$RL_LOG" || true)
  # the 30 s re-check LISTs (404 again): it re-lists nothing, so it checks no workload again
  fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$&min=2&wait=40' | jq -r '.items[] | "\(.time) \(.status)"' >&2
  sleep 0.5
  grep 're-list: checking every workload' "$RL_LOG" >&2 || true
  [ "$(grep -c 're-list: checking every workload' "$RL_LOG")" -eq "$n0" ]
  grep -c 'secrets-store.csi.x-k8s.io/v1 secretproviderclasspodstatuses are not served by this cluster (HTTP 404 on LIST): SecretProviderClassPodStatus objects are not reloaded; checking again every 30 s' "$RL_LOG" | grep -qx 1
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  spcps web-1 1
  fake_ctl GET "/watchers?min=8&wait=40" >/dev/null
  [ "$(fake_ctl GET /watchers | jq '[.items[] | select(.resource == "secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses")] | length')" -eq 1 ]
  grep -q 'secretproviderclasspodstatuses are served now: watching them' "$RL_LOG"
  [ "$(grep -c 'secretproviderclasspodstatuses are not served' "$RL_LOG")" -eq 1 ]
  spcps web-1 2
  out=$(reqs PATCH /deployments/web$)
  [[ $out == *"$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=2')"* ]]
}

@test "CSI: namespaced mode lists and watches the statuses of its namespace only" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}' apps
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}' other
  spcps p 1 apps
  spcps p 1 other
  start 8 --namespaces apps
  [ "$(nreqs GET '^/apis/secrets-store.csi.x-k8s.io/v1/namespaces/apps/secretproviderclasspodstatuses$')" -ge 2 ]
  [ "$(nreqs GET '^/apis/secrets-store.csi.x-k8s.io/v1/secretproviderclasspodstatuses')" -eq 0 ]
  spcps p 2 other
  spcps p 2 apps
  reqs PATCH /namespaces/apps/deployments/web$ >/dev/null
  [ "$(nreqs PATCH /namespaces/other/)" -eq 0 ]
}

@test "CSI: without --enable-csi-integration nothing is listed and a CSI workload is reported once" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  "$BIN" --kubeconfig "$KC" --listen '' --mode once >"$RL_LOG" 2>&1
  [ "$(nreqs GET /secretproviderclasspodstatuses)" -eq 0 ]
  grep -qF "warning: Changes in SecretProviderClass 'vault-db' will not reload 'web' of type 'Deployment' in namespace 'default': --enable-csi-integration is off" "$RL_LOG"
  # and =false is Reloader's pflag bool
  "$BIN" --enable-csi-integration=false --version >/dev/null
  run "$BIN" --enable-csi-integration=maybe
  [ "$status" -eq 2 ]
}

# huge KIND-TEMPLATE: one object over the stream's one-value limit (KUBE_VALUE_MAX, 4.5 MiB):
# "{blob:3600000}" is 4,800,000 base64 characters (POST /generate makes it on the server).
huge() { fake_ctl POST /generate "{\"template\":$1,\"count\":1}" >/dev/null; }
BLOB='{blob:3600000}'

@test "limits: one object over the value limit in a LIST or a watch event is skipped with one warning naming it, for every kind; the rest rolls on" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /crds "$SPC_CRD" >/dev/null
  fake_cm a '{"k":"1"}'
  huge "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"big\",\"namespace\":\"default\"},\"data\":{\"k\":\"$BLOB\"}}"
  fake_cm z '{"k":"1"}'
  huge "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"bigs\",\"namespace\":\"default\"},\"data\":{\"k\":\"$BLOB\"}}"
  fake_deploy web a
  huge "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"bigd\",\"namespace\":\"default\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"b\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"env\":[{\"name\":\"E\",\"value\":\"$BLOB\"}]}]}}}}"
  huge "{\"apiVersion\":\"secrets-store.csi.x-k8s.io/v1\",\"kind\":\"SecretProviderClassPodStatus\",\"metadata\":{\"name\":\"bigp\",\"namespace\":\"default\"},\"status\":{\"secretProviderClassName\":\"vault-db\",\"objects\":[{\"id\":\"$BLOB\",\"version\":\"1\"}]}}"
  huge "{\"apiVersion\":\"secrets-store.csi.x-k8s.io/v1\",\"kind\":\"SecretProviderClass\",\"metadata\":{\"name\":\"bigc\",\"namespace\":\"default\"},\"spec\":{\"provider\":\"vault\",\"parameters\":{\"objects\":\"$BLOB\"}}}"
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # six objects of 4.8 MB to list: give the start more time on a loaded machine
  "$BIN" --kubeconfig "$KC" --listen "127.0.0.1:$port" --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 --enable-csi-integration >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=9&wait=60" >/dev/null
  [ "$(fake_ctl GET /watchers | jq .count)" -ge 9 ] || { cat "$RL_LOG" >&2; false; }
  m=$(curl -sS "http://127.0.0.1:$port/metrics")
  grep -qx 'nodeprobe_reload_objects{resource="configmaps"} 2' <<<"$m"
  grep -qx 'nodeprobe_reload_objects_skipped_total{resource="configmaps"} 1' <<<"$m"
  for w in 'ConfigMap default/big' 'Secret default/bigs' 'Deployment default/bigd' 'SecretProviderClassPodStatus default/bigp' 'SecretProviderClass default/bigc'; do
    [ "$(grep -c "warning: $w: a value over 4718592 bytes" "$RL_LOG")" -eq 1 ] || { cat "$RL_LOG" >&2; false; }
  done
  # a change of a small one still rolls its Deployment
  fake_cm a '{"k":"2"}'
  reqs PATCH /deployments/web$ >/dev/null
  # a watch event over the limit: skipped and named too; the watch goes on
  huge "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"z\",\"namespace\":\"default\"},\"data\":{\"k\":\"$BLOB\"}}"
  for _ in $(seq 50); do grep -q 'warning: ConfigMap default/z: a value over' "$RL_LOG" && break; sleep 0.1; done
  grep -q 'warning: ConfigMap default/z: a value over 4718592 bytes' "$RL_LOG"
  fake_cm a '{"k":"3"}'
  reqs PATCH /deployments/web$ 2 >/dev/null
  # its deletion (the DELETED event carries the big object) forgets it by its name
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&namespace=default&name=z' >/dev/null
  for _ in $(seq 50); do curl -sS "http://127.0.0.1:$port/metrics" | grep -qx 'nodeprobe_reload_objects{resource="configmaps"} 1' && break; sleep 0.1; done
  curl -sS "http://127.0.0.1:$port/metrics" | grep -qx 'nodeprobe_reload_objects{resource="configmaps"} 1'
  kill -0 "$RL_PID"
}

@test "CSI: a 403 on secretproviderclasspodstatuses and secretproviderclasses is warned about once, shown in /healthz and a metric, and a ConfigMap change still rolls; granted later, rotations roll again" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /crds "$SPC_CRD" >/dev/null
  # RBAC without the CSI grants: RBAC's 403 Status on every request to either resource
  fake_ctl POST /faults '[{"path":"/secretproviderclasspodstatuses$","code":403,"count":-1},{"path":"/secretproviderclasses$","code":403,"count":-1}]' >/dev/null
  fake_cm cfg '{"a":"1"}'
  fake_deploy app cfg
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}'
  spcps web-1 1
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  start 7 --listen "127.0.0.1:$port"
  m=$(curl -sS "http://127.0.0.1:$port/metrics")
  grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 0' <<<"$m"
  grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasses"} 0' <<<"$m"
  h=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/healthz")
  [[ $h == "ok"*"secretproviderclasspodstatuses: unavailable: HTTP 403"*"secretproviderclasses: unavailable: HTTP 403"*" 200" ]]
  # everything else runs: a ConfigMap change rolls its Deployment
  fake_cm cfg '{"a":"2"}'
  reqs PATCH /deployments/app$ >/dev/null
  # the statuses are asked again with back-off (2.5-5 s, then 5-10 s): warned about once
  fake_wait_requests 'method=GET&path=/secretproviderclasspodstatuses$&watch=0' 2 >/dev/null
  [ "$(grep -c 'secretproviderclasspodstatuses: forbidden (HTTP 403 on LIST): this service account may not list and watch secretproviderclasspodstatuses in API group secrets-store.csi.x-k8s.io' "$RL_LOG")" -eq 1 ]
  [ "$(grep -c 'secretproviderclasses: forbidden (HTTP 403 on LIST)' "$RL_LOG")" -eq 1 ]
  # granted: listed and watched again, and a rotation rolls
  fake_ctl DELETE /faults >/dev/null
  fake_ctl GET "/watchers?min=9&wait=40" >/dev/null
  [ "$(fake_ctl GET /watchers | jq .count)" -eq 9 ]
  # the episode ends when the WATCH is answered (a granted LIST alone does not end it)
  for _ in $(seq 100); do grep -q 'secretproviderclasspodstatuses are granted now: watching them' "$RL_LOG" && break; sleep 0.1; done
  grep -q 'secretproviderclasspodstatuses are granted now: watching them' "$RL_LOG"
  curl -sS "http://127.0.0.1:$port/metrics" | grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 1'
  [[ $(curl -sS "http://127.0.0.1:$port/healthz") == *"secretproviderclasspodstatuses: available"* ]]
  spcps web-1 2
  out=$(reqs PATCH /deployments/web$)
  [[ $out == *"$(sha1 'SecretProviderClassName=vault-db;secret/api-key=7;secret/db-pass=2')"* ]]
  # revoked while watching (the watch restarts into a 403): unavailable again, said once more
  fake_ctl POST /faults '{"path":"/secretproviderclasspodstatuses$","code":403,"count":-1}' >/dev/null
  fake_ctl POST /drop-watches >/dev/null
  for _ in $(seq 100); do curl -sS "http://127.0.0.1:$port/metrics" | grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 0' && break; sleep 0.1; done
  curl -sS "http://127.0.0.1:$port/metrics" | grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 0'
  [ "$(grep -c 'secretproviderclasspodstatuses: forbidden (HTTP 403 on WATCH)' "$RL_LOG")" -eq 1 ]
  fake_cm cfg '{"a":"3"}'
  reqs PATCH /deployments/app$ 2 >/dev/null
  kill -0 "$RL_PID"
}

# retries OUT RESOURCE-AND-NS: the back-off's retries of the current episode from the debug log,
# "N MS" per line ("secretproviderclasspodstatuses in namespace apps" for a namespaced stream).
retries() {
  sed -n "s/.*debug: $1: HTTP 403, retry \([0-9]*\) of this episode in \([0-9]*\) ms$/\1 \2/p" "$RL_LOG"
}
# grows N: retries 1..N were logged, each delay within its band: 5 s << (k-1), jittered down to
# half (the back-off as documented, read from what was scheduled, not from a clock)
grows() {
  local k=0 n ms base
  while read -r n ms; do
    k=$((k + 1))
    base=$((5000 << (k - 1)))
    [ "$n" -eq "$k" ] && [ "$ms" -ge $((base / 2)) ] && [ "$ms" -le "$base" ] ||
      { echo "retry $n in $ms ms: wanted retry $k in $((base / 2))..$base ms" >&2; return 1; }
  done
  [ "$k" -ge "$1" ] || { echo "$k retries logged, wanted $1" >&2; return 1; }
}

@test "CSI: LIST granted and WATCH forbidden (RBAC's separate verbs) is one failure episode: warned about once, the back-off grows retry by retry, ConfigMaps still roll" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /faults '{"path":"/secretproviderclasspodstatuses$","watch":true,"code":403,"count":-1}' >/dev/null
  fake_cm cfg '{"a":"1"}'
  fake_deploy app cfg
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  start 7 --listen "127.0.0.1:$port" --log-level debug
  n0=$(grep -c 're-list: checking every workload' "$RL_LOG" || true)
  # the fake's log: three WATCHes refused (at start, then retries 1 and 2), each after a LIST
  # that was answered 200; the third's retry is scheduled from the back-off's third step
  fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$&watch=1&min=3&wait=40' >/dev/null
  for _ in $(seq 100); do [ "$(retries secretproviderclasspodstatuses | wc -l)" -ge 3 ] && break; sleep 0.1; done
  fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$' | jq -r '.items[] | "\(.watch) \(.status)"' >&3 || true
  [ "$(fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$&watch=1' | jq '[.items[] | select(.status == 403)] | length')" -eq 3 ]
  [ "$(fake_ctl GET '/requests?method=GET&path=/secretproviderclasspodstatuses$&watch=0' | jq '[.items[] | select(.status == 200)] | length')" -eq 3 ]
  retries secretproviderclasspodstatuses | grows 3
  [ "$(grep -c 'forbidden (HTTP 403' "$RL_LOG")" -eq 1 ]
  grep -q 'secretproviderclasspodstatuses: forbidden (HTTP 403 on WATCH)' "$RL_LOG"
  ! grep -q 'are granted now' "$RL_LOG" || false
  m=$(curl -sS "http://127.0.0.1:$port/metrics")
  grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 0' <<<"$m"
  grep -qx 'nodeprobe_reload_csi_lost_total{resource="secretproviderclasspodstatuses"} 1' <<<"$m"
  [[ $(curl -sS "http://127.0.0.1:$port/healthz") == *"secretproviderclasspodstatuses: unavailable: HTTP 403"* ]]
  # the statuses' re-lists check no workload again (their changes are told by themselves)
  [ "$(grep -c 're-list: checking every workload' "$RL_LOG")" -eq "$n0" ]
  fake_cm cfg '{"a":"2"}'
  reqs PATCH /deployments/app$ >/dev/null
  kill -0 "$RL_PID"
}

@test "CSI: namespaced mode keeps the 403 state per namespace: apps' LIST forbidden is warned about once and backs off growing while other's statuses roll" {
  fake_ctl POST /crds "$SPCPS_CRD" >/dev/null
  fake_ctl POST /faults '{"path":"^/apis/secrets-store.csi.x-k8s.io/v1/namespaces/apps/secretproviderclasspodstatuses$","watch":false,"code":403,"count":-1}' >/dev/null
  deployment web '{"secretproviderclass.reloader.stakater.com/auto":"true"}' other
  spcps p 1 other
  fake_cm cfg '{"a":"1"}' apps
  fake_deploy app cfg apps
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # per namespace 7 watches, and other's statuses (secretproviderclasses: no CRD, 404)
  start 15 --namespaces apps,other --listen "127.0.0.1:$port" --log-level debug
  spcps p 2 other
  reqs PATCH /namespaces/other/deployments/web$ >/dev/null
  fake_ctl GET '/requests?method=GET&path=/namespaces/apps/secretproviderclasspodstatuses$&min=3&wait=40' >/dev/null
  for _ in $(seq 100); do [ "$(retries 'secretproviderclasspodstatuses in namespace apps' | wc -l)" -ge 3 ] && break; sleep 0.1; done
  # apps: three LISTs refused, never a WATCH; one warning naming the namespace
  [ "$(nreqs GET /namespaces/apps/secretproviderclasspodstatuses$)" -eq 3 ]
  retries 'secretproviderclasspodstatuses in namespace apps' | grows 3
  [ "$(grep -c 'forbidden (HTTP 403' "$RL_LOG")" -eq 1 ]
  grep -q 'secretproviderclasspodstatuses in namespace apps: forbidden (HTTP 403 on LIST)' "$RL_LOG"
  [ "$(retries 'secretproviderclasspodstatuses in namespace other' | wc -l)" -eq 0 ]
  # the CRD absent is the cluster's: said once for both namespaces
  [ "$(grep -c 'secretproviderclasses are not served by this cluster' "$RL_LOG")" -eq 1 ]
  m=$(curl -sS "http://127.0.0.1:$port/metrics")
  grep -qx 'nodeprobe_reload_csi_available{resource="secretproviderclasspodstatuses"} 0' <<<"$m"
  grep -qx 'nodeprobe_reload_csi_lost_total{resource="secretproviderclasspodstatuses"} 1' <<<"$m"
  # other's rotations and apps' ConfigMaps roll on
  spcps p 3 other
  reqs PATCH /namespaces/other/deployments/web$ 2 >/dev/null
  fake_cm cfg '{"a":"2"}' apps
  reqs PATCH /namespaces/apps/deployments/app$ >/dev/null
}
