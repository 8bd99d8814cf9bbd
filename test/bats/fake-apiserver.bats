#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# The fake Kubernetes API server the nodeprobe-reload tests run against: its behaviour must match
# the Kubernetes API documentation (see test/fake-apiserver/README.md).

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

setup_file() {
  export FAKE_CERTS="$BATS_FILE_TMPDIR/certs"
  fake_certs "$FAKE_CERTS" >/dev/null
}

setup() {
  WATCH_PIDS=()
}

teardown() {
  local p
  for p in "${WATCH_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  fake_stop
}

# put_cm NAME [DATA-JSON] [LABELS-JSON]: create or replace a ConfigMap in default via control.
put_cm() {
  local data='{"k":"v"}' labels='{}'
  [ $# -lt 2 ] || data=$2
  [ $# -lt 3 ] || labels=$3
  fake_ctl POST /objects "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\",\"labels\":$labels},\"data\":$data}" >/dev/null
}

DEPLOY='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},{"name":"side","image":"busybox"}]}}}}'

# watch_bg FILE PATH: start a watch with curl in the background writing events to FILE.
watch_bg() {
  curl -sS -N --cacert "$FAKE_CA" -H "Authorization: Bearer $FAKE_TOKEN" -D "$1.headers" \
    "$FAKE_URL$2" >"$1" 2>"$1.err" 3>&- &
  WATCH_PIDS+=($!)
}

# wait_lines FILE N: wait (up to 10 s) until FILE has at least N lines.
wait_lines() {
  local i
  for i in $(seq 200); do
    [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  echo "wait_lines: $1 has $(wc -l <"$1") lines, wanted $2:" >&2
  cat "$1" >&2
  return 1
}

@test "serves TLS signed by the test CA; an unrelated CA fails verification" {
  fake_start
  run fake_api GET /version
  [ "$status" -eq 0 ]
  [ "$(jq -r .gitVersion <<<"$output")" = v1.30.0-fake ]
  run curl -sS --cacert "$FAKE_CERTS/other-ca.crt" "$FAKE_URL/version"
  [ "$status" -eq 60 ]
  # the server certificate names 127.0.0.1 and localhost; /healthz needs no credentials
  run curl -sS --cacert "$FAKE_CA" "https://localhost:$FAKE_PORT/healthz"
  [ "$output" = ok ]
}

@test "bearer token: missing or wrong -> 401 Status; rotation replaces the accepted set" {
  fake_start
  run curl -sS --cacert "$FAKE_CA" -w '\n%{http_code}' "$FAKE_URL/api/v1/configmaps"
  [ "${lines[1]}" = 401 ]
  [ "$(jq -c '[.kind,.status,.reason,.code]' <<<"${lines[0]}")" = '["Status","Failure","Unauthorized",401]' ]
  run curl -sS --cacert "$FAKE_CA" -H "Authorization: Bearer nope" -o /dev/null -w '%{http_code}' "$FAKE_URL/api/v1/configmaps"
  [ "$output" = 401 ]
  run fake_api GET /api/v1/configmaps -o /dev/null -w '%{http_code}'
  [ "$output" = 200 ]
  fake_ctl POST /tokens '{"tokens":["rotated-1"]}'
  run fake_api GET /api/v1/configmaps -o /dev/null -w '%{http_code}'
  [ "$output" = 401 ]
  FAKE_TOKEN=rotated-1 run fake_api GET /api/v1/configmaps -o /dev/null -w '%{http_code}'
  [ "$output" = 200 ]
}

@test "client certificate signed by --client-ca authenticates" {
  fake_start --client-ca "$FAKE_CERTS/ca.crt"
  run curl -sS --cacert "$FAKE_CA" --cert "$FAKE_CERTS/client.crt" --key "$FAKE_CERTS/client.key" \
    -o /dev/null -w '%{http_code}' "$FAKE_URL/api/v1/secrets"
  [ "$output" = 200 ]
}

@test "resourceVersion: global, increments per write, unchanged by a no-op update" {
  fake_start
  rv0=$(fake_ctl GET /state | jq .resourceVersion)
  put_cm a
  put_cm b
  rva=$(fake_api GET /api/v1/namespaces/default/configmaps/a | jq -r .metadata.resourceVersion)
  rvb=$(fake_api GET /api/v1/namespaces/default/configmaps/b | jq -r .metadata.resourceVersion)
  [ "$rva" -eq $((rv0 + 1)) ]
  [ "$rvb" -eq $((rv0 + 2)) ]
  # PUT with the same content: not persisted
  obj=$(fake_api GET /api/v1/namespaces/default/configmaps/a)
  run fake_api PUT /api/v1/namespaces/default/configmaps/a -H 'Content-Type: application/json' --data-binary "$obj"
  [ "$(jq -r .metadata.resourceVersion <<<"$output")" = "$rva" ]
  # a real change: next global RV; the list reports the store's RV
  new=$(jq -c '.data.k="w"' <<<"$obj")
  run fake_api PUT /api/v1/namespaces/default/configmaps/a -H 'Content-Type: application/json' --data-binary "$new"
  [ "$(jq -r .metadata.resourceVersion <<<"$output")" -eq $((rv0 + 3)) ]
  [ "$(fake_api GET /api/v1/configmaps | jq -r .metadata.resourceVersion)" -eq $((rv0 + 3)) ]
  # GET of a missing object: NotFound Status naming the resource
  run fake_api GET /apis/apps/v1/namespaces/default/deployments/nope -w '\n%{http_code}'
  [ "${lines[1]}" = 404 ]
  [ "$(jq -r .message <<<"${lines[0]}")" = 'deployments.apps "nope" not found' ]
}

@test "objects are encoded as Go's encoding/json does: struct field order, sorted map keys" {
  fake_start
  fake_ctl POST /objects '{"type":"Opaque","data":{"zz":"MQ==","a":"Mg==","B":"Mw=="},"metadata":{"annotations":{"y":"1","x":"2"},"labels":{"b":"1","a":"2"},"namespace":"default","name":"s"},"kind":"Secret","apiVersion":"v1"}' >/dev/null
  run fake_api GET /api/v1/namespaces/default/secrets/s
  [ "$(jq -c '[keys_unsorted, (.metadata|keys_unsorted), (.data|keys_unsorted), (.metadata.labels|keys_unsorted), (.metadata.annotations|keys_unsorted)]' <<<"$output")" = '[["kind","apiVersion","metadata","data","type"],["name","namespace","uid","resourceVersion","creationTimestamp","labels","annotations"],["B","a","zz"],["a","b"],["x","y"]]' ]
  # the same order in LIST items and watch events
  [ "$(fake_api GET /api/v1/secrets | jq -c '.items[0]|[keys_unsorted, (.data|keys_unsorted)]')" = '[["metadata","data","type"],["B","a","zz"]]' ]
  [ "$(fake_api GET '/api/v1/secrets?watch=1&timeoutSeconds=1' | jq -c '.object.data|keys_unsorted')" = '["B","a","zz"]' ]
}

@test "LIST: limit/continue pages in key order, remainingItemCount, consistent snapshot" {
  fake_start
  fake_ctl POST /generate '{"template":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-{i}","namespace":"ns{i%2}"},"data":{"i":"{i}"}},"count":25,"start":10}' >/dev/null
  p1=$(fake_api GET '/api/v1/configmaps?limit=10')
  [ "$(jq '.items|length' <<<"$p1")" -eq 10 ]
  [ "$(jq .metadata.remainingItemCount <<<"$p1")" -eq 15 ]
  [ "$(jq -r '.items[0].metadata|.namespace+"/"+.name' <<<"$p1")" = ns0/cm-10 ]
  # items carry no kind/apiVersion, the list does
  [ "$(jq -r '.kind+" "+.apiVersion+" "+(.items[0].kind//"none")' <<<"$p1")" = "ConfigMapList v1 none" ]
  rv=$(jq -r .metadata.resourceVersion <<<"$p1")
  # a change after the first page is not seen by the continued list
  fake_ctl POST /objects '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-33","namespace":"ns1"},"data":{"i":"changed"}}' >/dev/null
  c=$(jq -r .metadata.continue <<<"$p1")
  p2=$(fake_api GET "/api/v1/configmaps?limit=10&continue=$c")
  [ "$(jq -r .metadata.resourceVersion <<<"$p2")" = "$rv" ]
  [ "$(jq .metadata.remainingItemCount <<<"$p2")" -eq 5 ]
  c=$(jq -r .metadata.continue <<<"$p2")
  p3=$(fake_api GET "/api/v1/configmaps?limit=10&continue=$c")
  [ "$(jq '.items|length' <<<"$p3")" -eq 5 ]
  [ "$(jq -r '.metadata.continue // "none"' <<<"$p3")" = none ]
  all=$(jq -s -r '[.[].items[]|.metadata.namespace+"/"+.metadata.name]|join(" ")' <<<"$p1$p2$p3")
  want=$(for i in $(seq 10 34); do echo "ns$((i % 2))/cm-$i"; done | LC_ALL=C sort | tr '\n' ' ')
  [ "$all " = "$want" ]
  [ "$(jq -s -r '[.[].items[]|select(.metadata.name=="cm-33")|.data.i]|join(",")' <<<"$p1$p2$p3")" = 33 ]
  # limit + resourceVersion means Exact (the state at rv); NotOlderThan gives the newest
  [ "$(fake_api GET "/api/v1/namespaces/ns1/configmaps?limit=100&resourceVersion=$rv" | jq -r '.items[]|select(.metadata.name=="cm-33").data.i')" = 33 ]
  [ "$(fake_api GET "/api/v1/namespaces/ns1/configmaps?resourceVersion=$rv&resourceVersionMatch=NotOlderThan" | jq -r '.items[]|select(.metadata.name=="cm-33").data.i')" = changed ]
  # namespaced list only sees its namespace
  [ "$(fake_api GET /api/v1/namespaces/ns1/configmaps | jq '[.items[].metadata.namespace]|unique|join(",")' -r)" = ns1 ]
  # once the history is compacted the token has expired
  fake_ctl POST /compact >/dev/null
  run fake_api GET "/api/v1/configmaps?limit=10&continue=$(jq -r .metadata.continue <<<"$p1")" -w '\n%{http_code}'
  [ "${lines[-1]}" = 410 ]
  [ "$(jq -r .reason <<<"${lines[0]}")" = Expired ]
  # its Status carries a token that continues, inconsistently, from the newest state
  c=$(jq -r .metadata.continue <<<"${lines[0]}")
  p2=$(fake_api GET "/api/v1/configmaps?limit=10&continue=$c")
  [ "$(jq -r '.items[0].metadata|.namespace+"/"+.name' <<<"$p2")" = ns0/cm-30 ]
  [ "$(jq -r .metadata.resourceVersion <<<"$p2")" -gt "$rv" ]
}

@test "resourceVersion=0 reads can be served stale (a lagging watch cache); unset is consistent" {
  fake_start
  put_cm a '{"v":"1"}'
  fake_ctl POST /config '{"staleReads":1}' >/dev/null
  put_cm a '{"v":"2"}'
  rv=$(fake_ctl GET /state | jq .resourceVersion)
  [ "$(fake_api GET '/api/v1/configmaps?resourceVersion=0' | jq -r '[.metadata.resourceVersion, .items[0].data.v]|join(" ")')" = "$((rv - 1)) 1" ]
  [ "$(fake_api GET '/api/v1/configmaps' | jq -r '[.metadata.resourceVersion, .items[0].data.v]|join(" ")')" = "$rv 2" ]
  [ "$(fake_api GET '/api/v1/namespaces/default/configmaps/a?resourceVersion=0' | jq -r .data.v)" = 1 ]
  [ "$(fake_api GET '/api/v1/namespaces/default/configmaps/a' | jq -r .data.v)" = 2 ]
  # a watch from "any" starts at the stale state and then catches up
  run fake_api GET '/api/v1/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1'
  [ "$(printf '%s\n' "${lines[@]}" | jq -r '.type+" "+.object.data.v' | tr '\n' ' ')" = "ADDED 1 MODIFIED 2 " ]
}

@test "labelSelector: =, ==, !=, in, notin, exists, !exists" {
  fake_start
  put_cm a '{}' '{"app":"web","tier":"fe"}'
  put_cm b '{}' '{"app":"db"}'
  put_cm c '{}' '{"tier":"be"}'
  sel() { fake_api GET "/api/v1/namespaces/default/configmaps" -G --data-urlencode "labelSelector=$1" | jq -r '[.items[].metadata.name]|join(",")'; }
  [ "$(sel 'app=web')" = a ]
  [ "$(sel 'app==db')" = b ]
  [ "$(sel 'app!=web')" = b,c ]
  [ "$(sel 'app in (web, db)')" = a,b ]
  [ "$(sel 'app notin (web)')" = b,c ]
  [ "$(sel 'tier')" = a,c ]
  [ "$(sel '!tier')" = b ]
  [ "$(sel 'app=web,tier=fe')" = a ]
  [ "$(sel 'app=web,tier=be')" = "" ]
  run fake_api GET "/api/v1/configmaps" -G --data-urlencode "labelSelector=a b c" -o /dev/null -w '%{http_code}'
  [ "$output" = 400 ]
}

@test "fieldSelector: metadata.name, metadata.namespace, Secret type with = and !=" {
  fake_start
  fake_ctl POST /objects '[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"plain","namespace":"default"},"stringData":{"x":"y"}},
    {"apiVersion":"v1","kind":"Secret","type":"helm.sh/release.v1","metadata":{"name":"rel","namespace":"default"},"data":{"release":"AAAA"}},
    {"apiVersion":"v1","kind":"Secret","type":"kubernetes.io/tls","metadata":{"name":"tls","namespace":"other"},"data":{}}]' >/dev/null
  sel() { fake_api GET "/api/v1/secrets" -G --data-urlencode "fieldSelector=$1" | jq -r '[.items[].metadata.name]|join(",")'; }
  [ "$(sel 'type!=helm.sh/release.v1')" = plain,tls ]
  [ "$(sel 'type=helm.sh/release.v1')" = rel ]
  [ "$(sel 'type==Opaque')" = plain ]
  [ "$(sel 'metadata.name=tls')" = tls ]
  [ "$(sel 'metadata.namespace!=other,type!=helm.sh/release.v1')" = plain ]
  # stringData became base64 data
  [ "$(fake_api GET /api/v1/namespaces/default/secrets/plain | jq -r '.data.x|@base64d')" = y ]
  run fake_api GET "/api/v1/configmaps?fieldSelector=type%3Dx" -w '\n%{http_code}'
  [ "${lines[1]}" = 400 ]
  [ "$(jq -r .message <<<"${lines[0]}")" = "field label not supported: type" ]
}

@test "WATCH: chunked stream, events in order with increasing RVs, bookmarks" {
  fake_start --bookmark-interval 3600
  put_cm a
  rv=$(fake_ctl GET /state | jq .resourceVersion)
  watch_bg "$BATS_TEST_TMPDIR/w" "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&allowWatchBookmarks=true"
  fake_wait_watchers 1
  put_cm b
  curl -sS -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary '{"data":{"k":"changed"}}' \
    "$FAKE_CTL/objects?apiVersion=v1&kind=ConfigMap&namespace=default&name=a" >/dev/null
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&namespace=default&name=b' >/dev/null
  fake_ctl POST /objects '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"elsewhere","namespace":"other"}}' >/dev/null
  fake_ctl POST /bookmark >/dev/null
  wait_lines "$BATS_TEST_TMPDIR/w" 4
  grep -qi '^transfer-encoding: chunked' "$BATS_TEST_TMPDIR/w.headers"
  run jq -r '[.type, .object.metadata.name // "-", .object.metadata.resourceVersion] | join(" ")' "$BATS_TEST_TMPDIR/w"
  [ "${lines[0]}" = "ADDED b $((rv + 1))" ]
  [ "${lines[1]}" = "MODIFIED a $((rv + 2))" ]
  [ "${lines[2]}" = "DELETED b $((rv + 3))" ]
  # the bookmark carries the newest RV (the change in another namespace included)
  [ "${lines[3]}" = "BOOKMARK - $((rv + 4))" ]
  [ "$(jq -r 'select(.type=="BOOKMARK").object.kind' "$BATS_TEST_TMPDIR/w")" = ConfigMap ]
  [ "$(jq -r 'select(.type=="MODIFIED").object|.kind+" "+.apiVersion+" "+.data.k' "$BATS_TEST_TMPDIR/w")" = "ConfigMap v1 changed" ]
}

@test "WATCH: with a labelSelector, entering the selection is ADDED and leaving it DELETED" {
  fake_start
  put_cm a '{}' '{"app":"other"}'
  rv=$(fake_ctl GET /state | jq .resourceVersion)
  watch_bg "$BATS_TEST_TMPDIR/w" "/api/v1/configmaps?watch=1&resourceVersion=$rv&labelSelector=app%3Dweb"
  fake_wait_watchers 1
  put_cm a '{"x":"1"}' '{"app":"web"}'
  put_cm a '{"x":"2"}' '{"app":"web"}'
  put_cm a '{"x":"2"}' '{"app":"gone"}'
  wait_lines "$BATS_TEST_TMPDIR/w" 3
  [ "$(jq -r '.type+" "+.object.metadata.labels.app' "$BATS_TEST_TMPDIR/w" | tr '\n' ' ')" = "ADDED web MODIFIED web DELETED web " ]
  [ "$(jq -r 'select(.type=="DELETED").object.metadata.resourceVersion' "$BATS_TEST_TMPDIR/w")" = "$((rv + 3))" ]
  # the open watch shows in the request log
  [ "$(fake_ctl GET '/requests?watch=1&count=1' | jq .count)" = 1 ]
  # a client that goes away leaves the list of open watches (no event needed to notice)
  kill "${WATCH_PIDS[0]}"
  [ "$(fake_ctl GET '/watchers?max=0&wait=10' | jq .count)" = 0 ]
}

@test "WATCH: periodic bookmarks and timeoutSeconds end the stream cleanly" {
  fake_start --bookmark-interval 0.2
  put_cm a
  run fake_api GET '/api/v1/configmaps?watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=3'
  [ "$status" -eq 0 ]
  [ "$(jq -r .type <<<"${lines[0]}")" = ADDED ]
  [ "$(printf '%s\n' "${lines[@]}" | jq -r .type | sort -u | tr '\n' ' ')" = "ADDED BOOKMARK " ]
  [ "$(printf '%s\n' "${lines[@]}" | grep -c BOOKMARK)" -ge 2 ]
  # without allowWatchBookmarks there are none
  run fake_api GET '/api/v1/configmaps?watch=true&timeoutSeconds=1'
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
}

@test "WATCH: one bookmark 2 s before the timeout, as the watch cache sends" {
  fake_start --bookmark-interval 3600
  put_cm a
  rv=$(fake_ctl GET /state | jq .resourceVersion)
  run fake_api GET "/api/v1/configmaps?watch=true&resourceVersion=$rv&allowWatchBookmarks=true&timeoutSeconds=3"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [ "$(jq -r '.type+" "+.object.metadata.resourceVersion' <<<"${lines[0]}")" = "BOOKMARK $rv" ]
}

@test "WATCH: too old resourceVersion -> ERROR event with a 410 Expired Status" {
  fake_start --history 3
  for n in a b c d e; do put_cm "$n"; done
  run fake_api GET '/api/v1/configmaps?watch=1&resourceVersion=101' -w '\n%{http_code}'
  [ "${lines[-1]}" = 200 ]
  [ "$(jq -c '[.type,.object.kind,.object.reason,.object.code]' <<<"${lines[0]}")" = '["ERROR","Status","Expired",410]' ]
  [[ "$(jq -r .object.message <<<"${lines[0]}")" == "too old resource version: 101 ("* ]]
  # within the history: replayed
  rv=$(fake_ctl GET /state | jq .resourceVersion)
  run fake_api GET "/api/v1/configmaps?watch=1&resourceVersion=$((rv - 2))&timeoutSeconds=1"
  [ "$(printf '%s\n' "${lines[@]}" | jq -r '.object.metadata.name' | tr '\n' ' ')" = "d e " ]
}

@test "WATCH: sendInitialEvents ends the initial state with an annotated bookmark" {
  fake_start
  put_cm a
  put_cm b
  run fake_api GET '/api/v1/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1'
  [ "$(printf '%s\n' "${lines[@]}" | jq -r '.type+" "+(.object.metadata.name//(.object.metadata.annotations["k8s.io/initial-events-end"]))' | tr '\n' ' ')" = "ADDED a ADDED b BOOKMARK true " ]
  run fake_api GET '/api/v1/configmaps?watch=1&sendInitialEvents=true' -w '\n%{http_code}'
  [ "${lines[-1]}" = 422 ]
}

@test "PATCH strategic merge: env merged by name, containers by name, fieldManager recorded" {
  fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  run fake_api PATCH '/apis/apps/v1/namespaces/default/deployments/web?fieldManager=nodeprobe-reload' \
    -H 'Content-Type: application/strategic-merge-patch+json' \
    --data-binary '{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"22"},{"name":"STAKATER_CM_CONFIGMAP","value":"abc"}]}]}}}}'
  [ "$status" -eq 0 ]
  [ "$(jq -c '.spec.template.spec.containers[0].env' <<<"$output")" = '[{"name":"A","value":"1"},{"name":"B","value":"22"},{"name":"STAKATER_CM_CONFIGMAP","value":"abc"}]' ]
  [ "$(jq -c '[.spec.template.spec.containers[].name]' <<<"$output")" = '["app","side"]' ]
  [ "$(jq -r '.spec.template.spec.containers[0].image' <<<"$output")" = nginx ]
  [ "$(jq -r '.metadata.generation' <<<"$output")" = 2 ]
  [ "$(jq -r '.metadata.managedFields[0].manager+" "+.metadata.managedFields[0].operation' <<<"$output")" = "nodeprobe-reload Update" ]
  # annotations strategy: a template annotation is a spec change, $patch delete removes an env
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web \
    -H 'Content-Type: application/strategic-merge-patch+json; charset=utf-8' \
    --data-binary '{"spec":{"template":{"metadata":{"annotations":{"reloader.stakater.com/last-reloaded-from":"x"}},"spec":{"containers":[{"name":"app","env":[{"name":"A","$patch":"delete"}]}]}}}}'
  [ "$(jq -c '[.spec.template.spec.containers[0].env[].name]' <<<"$output")" = '["B","STAKATER_CM_CONFIGMAP"]' ]
  [ "$(jq -r '.spec.template.metadata.annotations["reloader.stakater.com/last-reloaded-from"]' <<<"$output")" = x ]
  [ "$(jq -r '.metadata.generation' <<<"$output")" = 3 ]
  # a metadata-only change does not bump generation
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web \
    -H 'Content-Type: application/strategic-merge-patch+json' --data-binary '{"metadata":{"annotations":{"n":"1"}}}'
  [ "$(jq -r '.metadata.generation' <<<"$output")" = 3 ]
  # an element without its merge key is rejected
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -w '\n%{http_code}' \
    -H 'Content-Type: application/strategic-merge-patch+json' --data-binary '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}'
  [ "${lines[-1]}" = 400 ]
}

@test "PATCH strategic merge directives: \$setElementOrder, \$retainKeys, \$patch replace, \$deleteFromPrimitiveList" {
  fake_start
  fake_ctl POST /objects "$(jq -c '.metadata.finalizers=["a","b","c"] | .spec.strategy={"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}' <<<"$DEPLOY")" >/dev/null
  smp() { fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: application/strategic-merge-patch+json' --data-binary "$1"; }
  run smp '{"metadata":{"$deleteFromPrimitiveList/finalizers":["b"],"finalizers":["d","a"]}}'
  [ "$(jq -c .metadata.finalizers <<<"$output")" = '["a","c","d"]' ]
  run smp '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"app"}],"containers":[{"name":"app","image":"nginx:2"}]}}}}'
  [ "$(jq -c '[.spec.template.spec.containers[]|.name+"="+.image]' <<<"$output")" = '["side=busybox","app=nginx:2"]' ]
  run smp '{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}'
  [ "$(jq -c .spec.strategy <<<"$output")" = '{"type":"Recreate"}' ]
  run smp '{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x"},{"$patch":"replace"}]}}}}'
  [ "$(jq -c '[.spec.template.spec.containers[].name]' <<<"$output")" = '["only"]' ]
}

@test "PATCH merge (RFC 7386) replaces lists; JSON patch (RFC 6902) ops and failed test" {
  fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"metadata":{"labels":{"app":null,"x":"y"}},"spec":{"template":{"spec":{"containers":[{"name":"only","image":"i"}]}}}}'
  [ "$(jq -c '[.metadata.labels, [.spec.template.spec.containers[].name]]' <<<"$output")" = '[{"x":"y"},["only"]]' ]
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: application/json-patch+json' \
    --data-binary '[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"only"},{"op":"add","path":"/spec/template/spec/containers/0/env","value":[]},{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"E","value":"1"}},{"op":"replace","path":"/spec/replicas","value":3},{"op":"remove","path":"/metadata/labels/x"},{"op":"add","path":"/metadata/annotations","value":{"a~b/c":"1"}},{"op":"copy","from":"/metadata/annotations/a~0b~1c","path":"/metadata/annotations/d"}]'
  [ "$(jq -c '[.spec.template.spec.containers[0].env, .spec.replicas, (.metadata.labels // {}), .metadata.annotations]' <<<"$output")" = '[[{"name":"E","value":"1"}],3,{},{"a~b/c":"1","d":"1"}]' ]
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: application/json-patch+json' -w '\n%{http_code}' \
    --data-binary '[{"op":"test","path":"/spec/replicas","value":9}]'
  [ "${lines[-1]}" = 422 ]
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: text/plain' -o /dev/null -w '%{http_code}' --data-binary '{}'
  [ "$output" = 415 ]
}

@test "batch/v1 Jobs: generated selector and pod labels, client selector refused, template immutable" {
  fake_start
  job='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}}'
  out=$(fake_api POST /apis/batch/v1/namespaces/default/jobs -H 'Content-Type: application/json' --data-binary "$job")
  uid=$(jq -r .metadata.uid <<<"$out")
  [ "$(jq -c .spec.selector <<<"$out")" = "{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"$uid\"}}" ]
  [ "$(jq -c .spec.template.metadata.labels <<<"$out")" = "{\"a\":\"b\",\"batch.kubernetes.io/controller-uid\":\"$uid\",\"batch.kubernetes.io/job-name\":\"j\",\"controller-uid\":\"$uid\",\"job-name\":\"j\"}" ]
  # a selector without manualSelector: 422
  bad=$(jq -c '.metadata.name = "k" | .spec.selector = {"matchLabels":{"a":"b"}}' <<<"$job")
  out=$(fake_api POST /apis/batch/v1/namespaces/default/jobs -H 'Content-Type: application/json' --data-binary "$bad" -w ' %{http_code}')
  [[ $out == *'`selector` not auto-generated'*' 422' ]]
  # the pod template cannot change
  out=$(fake_api PATCH /apis/batch/v1/namespaces/default/jobs/j -H 'Content-Type: application/merge-patch+json' --data-binary '{"spec":{"template":{"metadata":{"annotations":{"x":"y"}}}}}' -w ' %{http_code}')
  [[ $out == *'spec.template: Invalid value: field is immutable'*' 422' ]]
  # DELETE: propagationPolicy validated, uid precondition honoured
  out=$(fake_api DELETE /apis/batch/v1/namespaces/default/jobs/j -H 'Content-Type: application/json' --data-binary '{"propagationPolicy":"Sideways"}' -w ' %{http_code}')
  [[ $out == *' 422' ]]
  out=$(fake_api DELETE /apis/batch/v1/namespaces/default/jobs/j -H 'Content-Type: application/json' --data-binary '{"propagationPolicy":"Background","preconditions":{"uid":"other"}}' -w ' %{http_code}')
  [[ $out == *' 409' ]]
  out=$(fake_api DELETE "/apis/batch/v1/namespaces/default/jobs/j?propagationPolicy=Background" -w ' %{http_code}')
  [[ $out == *'"status":"Success"'*' 200' ]]
  [ "$(fake_api GET /apis/batch/v1/namespaces/default/jobs -o /dev/null -w '%{http_code}')" = 200 ]
}

@test "custom resource: rollouts 404 until installed (also in discovery), then served; no strategic merge patch" {
  fake_start
  [ "$(fake_api GET /apis/argoproj.io/v1alpha1/rollouts -o /dev/null -w '%{http_code}')" = 404 ]
  [ "$(fake_api GET /apis | jq '[.groups[].name] | index("argoproj.io")')" = null ]
  [ "$(fake_ctl POST /crds '{"resource":"argoproj.io/v1alpha1/rollouts"}' | jq -c .items)" = '["argoproj.io/v1alpha1/rollouts"]' ]
  [ "$(fake_api GET /apis | jq '[.groups[].name] | index("argoproj.io") != null')" = true ]
  ro='{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"r"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}'
  [ "$(fake_api POST /apis/argoproj.io/v1alpha1/namespaces/default/rollouts -H 'Content-Type: application/json' --data-binary "$ro" -o /dev/null -w '%{http_code}')" = 201 ]
  out=$(fake_api PATCH /apis/argoproj.io/v1alpha1/namespaces/default/rollouts/r -H 'Content-Type: application/strategic-merge-patch+json' --data-binary '{"spec":{"paused":true}}' -w ' %{http_code}')
  [[ $out == *'"reason":"UnsupportedMediaType"'*' 415' ]]
  out=$(fake_api PATCH /apis/argoproj.io/v1alpha1/namespaces/default/rollouts/r -H 'Content-Type: application/merge-patch+json' --data-binary '{"spec": {"restartAt": "2026-01-01T00:00:00Z"}}')
  [ "$(jq -r .spec.restartAt <<<"$out")" = 2026-01-01T00:00:00Z ]
  fake_ctl DELETE '/crds?resource=argoproj.io/v1alpha1/rollouts' >/dev/null
  [ "$(fake_api GET /apis/argoproj.io/v1alpha1/namespaces/default/rollouts/r -o /dev/null -w '%{http_code}')" = 404 ]
  run fake_ctl POST /crds '{"resource":"example.com/v1/widgets"}'
  [ "$status" -ne 0 ]
}

@test "409 Conflict on a stale resourceVersion in a PATCH or PUT body" {
  fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  old=$(fake_api GET /apis/apps/v1/namespaces/default/deployments/web)
  rv=$(jq -r .metadata.resourceVersion <<<"$old")
  fake_ctl POST /objects "$(jq -c '.spec.replicas=2' <<<"$DEPLOY")" >/dev/null
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -w '\n%{http_code}' \
    -H 'Content-Type: application/strategic-merge-patch+json' --data-binary "{\"metadata\":{\"resourceVersion\":\"$rv\"},\"spec\":{\"replicas\":5}}"
  [ "${lines[-1]}" = 409 ]
  [ "$(jq -r .reason <<<"${lines[0]}")" = Conflict ]
  [ "$(jq -r .message <<<"${lines[0]}")" = 'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again' ]
  run fake_api PUT /apis/apps/v1/namespaces/default/deployments/web -o /dev/null -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "$old"
  [ "$output" = 409 ]
  # with the current RV the patch applies
  cur=$(fake_api GET /apis/apps/v1/namespaces/default/deployments/web | jq -r .metadata.resourceVersion)
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web \
    -H 'Content-Type: application/strategic-merge-patch+json' --data-binary "{\"metadata\":{\"resourceVersion\":\"$cur\"},\"spec\":{\"replicas\":5}}"
  [ "$(jq .spec.replicas <<<"$output")" = 5 ]
}

@test "validation: env value with valueFrom -> 422; non-string annotation -> 400; body > 3 MiB -> 413" {
  fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -w '\n%{http_code}' \
    -H 'Content-Type: application/strategic-merge-patch+json' \
    --data-binary '{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c","key":"k"}}}]}]}}}}'
  [ "${lines[-1]}" = 422 ]
  [ "$(jq -r .reason <<<"${lines[0]}")" = Invalid ]
  run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -o /dev/null -w '%{http_code}' \
    -H 'Content-Type: application/merge-patch+json' --data-binary '{"metadata":{"annotations":{"a":1}}}'
  [ "$output" = 400 ]
  # a body over kube-apiserver's 3 MiB limit: the 413 always arrives (the body is drained, so
  # no RST overtakes the answer; this failed about once in 40 before)
  head -c 3200000 /dev/zero | tr '\0' ' ' >"$BATS_TEST_TMPDIR/big"
  for i in $(seq 20); do
    run fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -o /dev/null -w '%{http_code}' \
      -H 'Content-Type: application/merge-patch+json' --data-binary @"$BATS_TEST_TMPDIR/big"
    [ "$output" = 413 ]
  done
  # none was stored
  [ "$(fake_api GET /apis/apps/v1/namespaces/default/deployments/web | jq -r .metadata.generation)" = 1 ]
}

@test "control: /requests?wait= long-polls until a matching request has been answered" {
  fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  fake_ctl POST /faults '{"action":"delay","seconds":0.3,"method":"PATCH"}' >/dev/null
  fake_api PATCH /apis/apps/v1/namespaces/default/deployments/web -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"spec":{"replicas":4}}' >/dev/null &
  WATCH_PIDS+=($!)
  out=$(fake_wait_requests 'method=PATCH&path=/deployments/web$')
  [ "$(jq -r '.items[0].status' <<<"$out")" = 200 ]
  # answered means stored
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&namespace=default&name=web' | jq .spec.replicas)" = 4 ]
  [ "$(fake_ctl GET '/requests?method=DELETE&wait=0.1' | jq .count)" = 0 ]
}

@test "POST creates an Event; a second create of the same name -> 409 AlreadyExists" {
  fake_start
  ev='{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":"default"},"involvedObject":{"kind":"Deployment","name":"web","namespace":"default"},"reason":"Reloaded","type":"Normal","message":"m"}'
  run fake_api POST /api/v1/namespaces/default/events -H 'Content-Type: application/json' --data-binary "$ev" -w '\n%{http_code}'
  [ "${lines[-1]}" = 201 ]
  [ "$(jq -r '.metadata.uid|length' <<<"${lines[0]}")" = 36 ]
  run fake_api POST /api/v1/namespaces/default/events -H 'Content-Type: application/json' --data-binary "$ev" -w '\n%{http_code}'
  [ "${lines[-1]}" = 409 ]
  [ "$(jq -r .reason <<<"${lines[0]}")" = AlreadyExists ]
  [ "$(fake_api GET '/api/v1/events?fieldSelector=involvedObject.name%3Dweb,reason%3DReloaded' | jq '.items|length')" = 1 ]
}

@test "faults: 409, 410, 429 with Retry-After, 500, 503; count and path filters" {
  fake_start
  put_cm a
  fake_ctl POST /faults '[{"path":"/configmaps/a$","method":"GET","code":409},{"path":"/configmaps$","code":410},{"path":"/configmaps","code":429,"retryAfter":7},{"code":500},{"code":503,"count":2}]' >/dev/null
  code() { fake_api GET "$1" -o "$BATS_TEST_TMPDIR/body" -D "$BATS_TEST_TMPDIR/hdr" -w '%{http_code}'; }
  [ "$(code /api/v1/namespaces/default/configmaps/a)" = 409 ]
  [ "$(jq -r .message "$BATS_TEST_TMPDIR/body")" = 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again' ]
  [ "$(code /api/v1/configmaps)" = 410 ]
  [ "$(jq -r .reason "$BATS_TEST_TMPDIR/body")" = Expired ]
  [ "$(code /api/v1/configmaps)" = 429 ]
  grep -qi '^retry-after: 7' "$BATS_TEST_TMPDIR/hdr"
  [ "$(jq -r '.reason+" "+(.details.retryAfterSeconds|tostring)' "$BATS_TEST_TMPDIR/body")" = "TooManyRequests 7" ]
  [ "$(code /version)" = 500 ]
  [ "$(code /version)" = 503 ]
  [ "$(code /version)" = 503 ]
  [ "$(code /version)" = 200 ]
  [ "$(fake_ctl GET /faults | jq -c '[.items[].remaining]')" = '[0,0,0,0,0]' ]
  fake_ctl DELETE /faults >/dev/null
  [ "$(fake_ctl GET /faults | jq '.items|length')" = 0 ]
}

@test "faults: 403 worded as an RBAC denial (cluster-wide list forbidden, namespaced allowed)" {
  fake_start
  fake_ctl POST /faults '{"path":"^/api/v1/(watch/)?configmaps$","code":403,"count":-1}' >/dev/null
  run fake_api GET /api/v1/configmaps -w '\n%{http_code}'
  [ "${lines[-1]}" = 403 ]
  [ "$(jq -r .message <<<"${lines[0]}")" = 'configmaps is forbidden: User "system:serviceaccount:default:nodeprobe-reload" cannot list resource "configmaps" in API group "" at the cluster scope' ]
  run fake_api GET '/api/v1/configmaps?watch=1' -w '\n%{http_code}'
  [ "$(jq -r .message <<<"${lines[0]}")" = 'configmaps is forbidden: User "system:serviceaccount:default:nodeprobe-reload" cannot watch resource "configmaps" in API group "" at the cluster scope' ]
  run fake_api GET /api/v1/namespaces/default/configmaps -o /dev/null -w '%{http_code}'
  [ "$output" = 200 ]
  fake_ctl POST /faults '{"path":"/deployments/","method":"PATCH","code":403,"user":"u1"}' >/dev/null
  run fake_api PATCH /apis/apps/v1/namespaces/ns1/deployments/web -H 'Content-Type: application/merge-patch+json' --data-binary '{}'
  [ "$(jq -r .message <<<"$output")" = 'deployments.apps "web" is forbidden: User "u1" cannot patch resource "deployments" in API group "apps" in the namespace "ns1"' ]
}

@test "faults: drop closes without a response; drop-after cuts a watch mid-stream; drop-response" {
  fake_start
  put_cm a
  put_cm b
  fake_ctl POST /faults '{"action":"drop"}' >/dev/null
  rc=0
  fake_api GET /api/v1/configmaps >"$BATS_TEST_TMPDIR/out" 2>/dev/null || rc=$?
  [ "$rc" -eq 52 ]   # curl: empty reply from server
  [ ! -s "$BATS_TEST_TMPDIR/out" ]
  fake_ctl POST /faults '{"action":"drop-after","after":1,"watch":true}' >/dev/null
  rc=0
  fake_api GET '/api/v1/configmaps?watch=1' >"$BATS_TEST_TMPDIR/out" 2>/dev/null || rc=$?
  [ "$rc" -eq 18 ]   # curl: transfer closed with outstanding read data remaining
  [ "$(jq -r '.type+" "+.object.metadata.name' "$BATS_TEST_TMPDIR/out")" = "ADDED a" ]
  fake_ctl POST /faults '{"action":"drop-after","after":100,"watch":false}' >/dev/null
  rc=0
  fake_api GET /api/v1/configmaps >"$BATS_TEST_TMPDIR/out" 2>/dev/null || rc=$?
  [ "$rc" -eq 18 ]
  [ "$(wc -c <"$BATS_TEST_TMPDIR/out")" -eq 100 ]
  # drop-response: the PATCH is applied, its answer lost
  fake_ctl POST /faults '{"action":"drop-response","method":"PATCH"}' >/dev/null
  rc=0
  fake_api PATCH /api/v1/namespaces/default/configmaps/a -H 'Content-Type: application/merge-patch+json' \
    --data-binary '{"data":{"k":"patched"}}' >"$BATS_TEST_TMPDIR/out" 2>/dev/null || rc=$?
  [ "$rc" -eq 52 ]
  [ "$(fake_api GET /api/v1/namespaces/default/configmaps/a | jq -r .data.k)" = patched ]
  [ "$(fake_ctl GET '/requests?method=PATCH' | jq -c '.items[0]|[.status,.unsentStatus]')" = '["dropped",200]' ]
  # a watch cut by /drop-watches
  watch_bg "$BATS_TEST_TMPDIR/w" '/api/v1/configmaps?watch=1'
  fake_wait_watchers 1
  fake_ctl POST /drop-watches >/dev/null
  rc=0
  wait "${WATCH_PIDS[0]}" || rc=$?
  [ "$rc" -eq 18 ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/w")" -eq 2 ]
}

@test "faults: watch-error sends a 410 ERROR event; reject-token -> 401; delay" {
  fake_start
  fake_ctl POST /faults '[{"action":"watch-error","code":410,"watch":true},{"action":"reject-token"},{"action":"delay","seconds":0.1}]' >/dev/null
  run fake_api GET '/api/v1/secrets?watch=1&resourceVersion=100' -w '\n%{http_code}'
  [ "${lines[-1]}" = 200 ]
  [ "$(jq -c '[.type,.object.code,.object.reason]' <<<"${lines[0]}")" = '["ERROR",410,"Expired"]' ]
  run fake_api GET /api/v1/secrets -o /dev/null -w '%{http_code}'
  [ "$output" = 401 ]
  run fake_api GET /api/v1/secrets -o /dev/null -w '%{http_code}'
  [ "$output" = 200 ]
  [ "$(fake_ctl GET /faults | jq -c '[.items[].hits]')" = '[1,1,1]' ]
}

@test "faults: hold keeps a request until POST /release, then it is answered" {
  fake_start
  fake_ctl POST /faults '{"action":"hold","path":"/configmaps/held$","count":-1}' >/dev/null
  fake_api GET /api/v1/namespaces/default/configmaps/held -o /dev/null -w '%{http_code}' >"$BATS_TEST_TMPDIR/code" &
  local pid=$! i
  for i in $(seq 100); do
    [ "$(fake_ctl GET /faults | jq '.items[0].held')" = 1 ] && break
    sleep 0.1
  done
  [ "$(fake_ctl GET /faults | jq '.items[0].held')" = 1 ]
  kill -0 "$pid"   # still waiting
  [ "$(fake_ctl POST /release | jq .released)" = 1 ]
  wait "$pid"
  [ "$(cat "$BATS_TEST_TMPDIR/code")" = 404 ]
  # released: later requests pass at once
  run fake_api GET /api/v1/namespaces/default/configmaps/held -o /dev/null -w '%{http_code}'
  [ "$output" = 404 ]
  [ "$(fake_ctl GET /faults | jq -c '[.items[0].hits, .items[0].held]')" = '[2,0]' ]
}

@test "request log: exact PATCH body, Content-Type, Authorization presence only, LIST count" {
  FAKE_TOKEN=s3cr3t-token-value fake_start
  fake_ctl POST /objects "$DEPLOY" >/dev/null
  body='{"spec":{"template":{"metadata":{"annotations":{"reloader.stakater.com/last-reloaded-from":"{\"kind\":\"ConfigMap\"}"}}}}}'
  fake_api PATCH '/apis/apps/v1/namespaces/default/deployments/web?fieldManager=nodeprobe-reload' \
    -H 'Content-Type: application/strategic-merge-patch+json' --data-binary "$body" >/dev/null
  fake_api GET /api/v1/configmaps >/dev/null
  fake_api GET '/api/v1/configmaps?limit=1' >/dev/null
  fake_api GET '/api/v1/configmaps?watch=1&timeoutSeconds=0.1' >/dev/null
  curl -sS --cacert "$FAKE_CA" "$FAKE_URL/api/v1/configmaps" >/dev/null
  log=$(fake_ctl GET '/requests?method=PATCH')
  [ "$(jq -r '.items[0].body' <<<"$log")" = "$body" ]
  [ "$(jq -r '.items[0].contentType' <<<"$log")" = application/strategic-merge-patch+json ]
  [ "$(jq -r '.items[0].params.fieldManager' <<<"$log")" = nodeprobe-reload ]
  [ "$(jq -r '.items[0].authorization' <<<"$log")" = true ]
  [ "$(fake_ctl GET '/requests?method=GET&path=/configmaps$&watch=0&count=1' | jq .count)" = 3 ]
  [ "$(fake_ctl GET '/requests?watch=1&count=1' | jq .count)" = 1 ]
  [ "$(fake_ctl GET '/requests' | jq -c '[.items[]|.status]')" = '[200,200,200,200,401]' ]
  [ "$(fake_ctl GET '/requests' | jq -r '.items[-1].authorization')" = false ]
  [ -z "$(fake_ctl GET /requests | grep -o s3cr3t)" ]
  next=$(fake_ctl DELETE /requests | jq .next)
  fake_api GET /version >/dev/null
  [ "$(fake_ctl GET "/requests?since=$next" | jq -r '[.items[].path]|join(",")')" = /version ]
}

@test "bulk load: generate 500 KB Helm-like Secrets, excluded server-side by type" {
  fake_start
  run fake_ctl POST /generate '[{"template":{"apiVersion":"v1","kind":"Secret","type":"helm.sh/release.v1","metadata":{"name":"sh.helm.release.v1.app{i}.v1","namespace":"bench","labels":{"owner":"helm"}},"data":{"release":"{blob:375000}"}},"count":20},
    {"template":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s{i}","namespace":"bench"},"data":{"k":"{blob:30}"}},"count":300}]'
  [ "$(jq .count <<<"$output")" = 320 ]
  [ "$(fake_ctl GET /state | jq '.objects["/v1/secrets"]')" = 320 ]
  size=$(fake_api GET /api/v1/namespaces/bench/secrets/sh.helm.release.v1.app3.v1 | jq -r '.data.release|length')
  [ "$size" -eq 500000 ]
  [ "$(fake_api GET '/api/v1/secrets?fieldSelector=type%21%3Dhelm.sh%2Frelease.v1' | jq '.items|length')" = 300 ]
  [ "$(fake_api GET '/api/v1/secrets' | jq '.items|length')" = 320 ]
}

@test "--load at start; SIGTERM with an open watch exits 0; bad cert exits 1" {
  printf '%s\n' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pre","namespace":"default"}}' \
    '{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds","namespace":"kube-system"},"spec":{}}' >"$BATS_TEST_TMPDIR/load.ndjson"
  fake_start --load "$BATS_TEST_TMPDIR/load.ndjson"
  [ "$(fake_api GET /apis/apps/v1/daemonsets | jq -r '.items[0].metadata.name')" = ds ]
  watch_bg "$BATS_TEST_TMPDIR/w" '/api/v1/configmaps?watch=1'
  fake_wait_watchers 1
  kill -TERM "$FAKE_PID"
  rc=0
  wait "$FAKE_PID" || rc=$?
  FAKE_PID=
  [ "$rc" -eq 0 ]
  run "$FAKE_BIN" --cert /nonexistent --key /nonexistent
  [ "$status" -eq 1 ]
  [[ "$output" == "fake-apiserver: error: "* ]]
  run "$FAKE_BIN" --bogus
  [ "$status" -eq 2 ]
}

@test "leases (coordination.k8s.io/v1): create, GET, PUT with a stale resourceVersion is 409, validation, MicroTime" {
  fake_start
  L=/apis/coordination.k8s.io/v1/namespaces/ns1/leases
  body='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock"},"spec":{"leaseTransitions":0,"holderIdentity":"a","renewTime":"2026-01-02T03:04:05.5+01:00","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.123456Z"}}'
  out=$(fake_api POST "$L" -H 'Content-Type: application/json' --data-binary "$body" -w '\n%{http_code}')
  [ "$(tail -1 <<<"$out")" = 201 ]
  created=$(head -n -1 <<<"$out")
  # LeaseSpec in Go's field order; MicroTime re-encoded in UTC with microseconds
  [ "$(jq -c .spec <<<"$created")" = '{"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.123456Z","renewTime":"2026-01-02T02:04:05.500000Z","leaseTransitions":0}' ]
  [ "$(fake_api GET "$L/lock" | jq -r '.kind + " " + .metadata.namespace')" = "Lease ns1" ]
  [ "$(fake_api GET /apis/coordination.k8s.io/v1/leases | jq '.items | length')" = 1 ]
  rv=$(jq -r .metadata.resourceVersion <<<"$created")
  # update with the current resourceVersion: 200, new resourceVersion; again with the old: 409
  upd=$(jq -c '.spec.holderIdentity = "b"' <<<"$created")
  [ "$(fake_api PUT "$L/lock" -H 'Content-Type: application/json' --data-binary "$upd" | jq -r .spec.holderIdentity)" = b ]
  run fake_api PUT "$L/lock" -H 'Content-Type: application/json' --data-binary "$(jq -c '.spec.holderIdentity = "c"' <<<"$created")"
  [ "$(jq -c '[.code, .reason, .details.kind, .details.group]' <<<"$output")" = '[409,"Conflict","leases","coordination.k8s.io"]' ]
  [[ $(jq -r .message <<<"$output") == 'Operation cannot be fulfilled on leases.coordination.k8s.io "lock": the object has been modified; please apply your changes to the latest version and try again' ]]
  [ "$(fake_api GET "$L/lock" | jq -r .spec.holderIdentity)" = b ]
  [ "$rv" -lt "$(fake_api GET "$L/lock" | jq -r .metadata.resourceVersion)" ]
  # ValidateLeaseSpec and decoding
  run fake_api POST "$L" -H 'Content-Type: application/json' --data-binary '{"metadata":{"name":"x"},"spec":{"leaseDurationSeconds":0}}'
  [ "$(jq -c '[.code, .reason]' <<<"$output")" = '[422,"Invalid"]' ]
  run fake_api POST "$L" -H 'Content-Type: application/json' --data-binary '{"metadata":{"name":"x"},"spec":{"leaseTransitions":-1}}'
  [ "$(jq .code <<<"$output")" = 422 ]
  run fake_api POST "$L" -H 'Content-Type: application/json' --data-binary '{"metadata":{"name":"x"},"spec":{"renewTime":"yesterday"}}'
  [ "$(jq .code <<<"$output")" = 400 ]
  run fake_api POST "$L" -H 'Content-Type: application/json' --data-binary '{"metadata":{"name":"x"},"spec":{"preferredHolder":"a"}}'
  [ "$(jq .code <<<"$output")" = 422 ]
  [ "$(fake_api GET "$L/x" | jq .code)" = 404 ]
}
