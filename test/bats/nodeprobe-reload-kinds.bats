#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# nodeprobe-reload beyond apps/v1, against test/fake-apiserver: CronJobs, Jobs, Argo Rollouts (both
# rollout-strategy values, absent CRD), --ignored-workload-types, pause-period (also across a
# restart), annotation-name flags, --reload-on-create/--reload-on-delete, ReloadFail and
# ReloadSkipped Events. Exact request bodies are asserted.

load helpers
source "$NP_ROOT/test/fake-apiserver/fake.bash"

BIN="$BUILD/nodeprobe-reload"

setup() {
  reload_fake_setup
}

teardown() {
  reload_stop --watches-closed
  fake_stop
}

sha1() { printf '%s' "$1" | sha1sum | cut -c1-40; }
AUTO='{"reloader.stakater.com/auto":"true"}'
POD='{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}'

# deployment NAME META-ANNOTATIONS [POD] [SPEC-EXTRA]
deployment() { fake_deployment "$1" "$2" "${3:-$POD}" "${4:-}"; }

# start NWATCHES [ARGS]: run nodeprobe-reload in watch mode; wait until NWATCHES watches are open.
start() {
  local n=$1
  shift
  "$BIN" --kubeconfig "$KC" --listen '' --coalesce-window 0 --min-interval 0 \
    --max-rollouts-per-second 0 "$@" >"$RL_LOG" 2>&1 3>&- &
  RL_PID=$!
  fake_ctl GET "/watchers?min=$n&wait=10" >/dev/null
  [ "$(fake_ctl GET /watchers | jq .count)" -ge "$n" ] || { cat "$RL_LOG" >&2; return 1; }
}

# reqs METHOD PATH-REGEX [MIN]: wait for MIN (default 1) answered requests; print "status body" lines.
reqs() {
  fake_ctl GET "/requests?method=$1&path=$2&min=${3:-1}&wait=10" |
    jq -r '.items[] | "\(.status) \(.body)"'
}
nreqs() { fake_ctl GET "/requests?method=$1&path=$2&count=1" | jq .count; }
uid_of() { fake_ctl GET "/objects?apiVersion=$1&kind=$2&name=$3" | jq -r .metadata.uid; }

@test "CronJob: a change creates a Job from the jobTemplate (exact POST), the CronJob is never written" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"backup","namespace":"default","labels":{"team":"a"},"annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"schedule":"0 1 * * *","jobTemplate":{"metadata":{"labels":{"app":"backup"},"annotations":{"note":"t"}},"spec":{"backoffLimit":2,"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}}}'
  uid=$(uid_of batch/v1 CronJob backup)
  start 7
  # restart safety: nothing recorded on a CronJob, so a start creates no Job
  [ "$(nreqs POST /jobs$)" -eq 0 ]
  fake_cm cfg '{"k":"1"}'
  out=$(reqs POST /apis/batch/v1/namespaces/default/jobs$)
  h=$(sha1 'k=1')
  [ "$out" = "201 {\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"generateName\":\"backup-\",\"namespace\":\"default\",\"labels\":{\"app\":\"backup\"},\"annotations\":{\"cronjob.kubernetes.io/instantiate\":\"manual\",\"note\":\"t\"},\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"backup\",\"uid\":\"$uid\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{\"backoffLimit\":2,\"template\":{\"spec\":{\"restartPolicy\":\"OnFailure\",\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"envFrom\":[{\"configMapRef\":{\"name\":\"cfg\"}}],\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$h\"}]}]}}}}" ]
  fake_ctl GET '/requests?method=POST&path=/jobs$' | jq -r '.items[0].query' | grep -qx 'fieldManager=nodeprobe-reload'
  # the Job exists, owned by the CronJob; the CronJob itself was not written, nothing LISTed
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job' | jq -r '.items[0].metadata.ownerReferences[0].uid')" = "$uid" ]
  [ "$(nreqs 'PATCH|PUT' /cronjobs)" -eq 0 ]
  [ "$(fake_ctl GET '/requests?method=GET&watch=0&path=/(jobs|cronjobs|configmaps)$&count=1' | jq .count)" -eq 3 ]
  # the Event names the CronJob
  ev=$(reqs POST /events$)
  [[ $ev == *'"involvedObject":{"apiVersion":"batch/v1","kind":"CronJob","name":"backup","namespace":"default","uid":"'$uid'"},"reason":"Reloaded","message":"Changes detected in '"'cfg'"' of type '"'CONFIGMAP'"' in namespace '"'default'"', Updated '"'backup'"' of type '"'CronJob'"' in namespace '"'default'"'","type":"Normal"'* ]]
  # every change creates another Job (Reloader's behaviour: nothing is recorded on the CronJob)
  fake_cm cfg '{"k":"2"}'
  reqs POST /jobs$ 2 >/dev/null
  [ "$(nreqs POST /jobs$)" -eq 2 ]
}

@test "CronJob: a create whose answer was lost is not sent again (one Job, not two)" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"backup","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"schedule":"0 1 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}}}'
  start 7
  # the API server creates the Job, the connection drops before the answer
  fake_ctl POST /faults '{"method":"POST","path":"/jobs$","action":"drop-response","count":1}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  reqs POST /jobs$ >/dev/null
  sleep 3
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job' | jq '.items | length')" -eq 1 ] || { cat "$RL_LOG"; fake_ctl GET '/requests?method=POST&path=/jobs$' | jq -c '.items[] | [.status, .unsentStatus]'; false; }
  [ "$(nreqs POST /jobs$)" -eq 1 ]
  name=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job' | jq -r '.items[0].metadata.name')
  grep -q "CronJob default/backup: created Job default/$name (its answer was lost)" "$RL_LOG"
  grep -q 'rolled CronJob default/backup for ConfigMap default/cfg' "$RL_LOG"
  # a create the server did not make (500) is sent again by the rollout's retry: one Job more
  fake_ctl POST /faults '{"method":"POST","path":"/jobs$","action":"status","code":500,"count":1}' >/dev/null
  fake_cm cfg '{"k":"2"}'
  reqs POST /jobs$ 3 >/dev/null
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job' | jq '.items | length')" -eq 2 ]
  [ "$(fake_ctl GET '/requests?method=POST&path=/jobs$' | jq -r '[.items[].status] | join(" ")')" = "dropped 500 201" ]
}

@test "Job: deleted (Background, uid precondition) and created again without server-set fields (exact bodies)" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","labels":{"app":"migrate"},"annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"backoffLimit":1,"template":{"metadata":{"labels":{"app":"migrate"}},"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  old=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate')
  uid=$(jq -r .metadata.uid <<<"$old")
  # the fake server generated the selector and pod labels, as the Job strategy does
  [ "$(jq -r '.spec.template.metadata.labels["batch.kubernetes.io/job-name"]' <<<"$old")" = migrate ]
  start 7
  fake_cm cfg '{"k":"1"}'
  h=$(sha1 'k=1')
  [ "$(reqs DELETE /apis/batch/v1/namespaces/default/jobs/migrate$)" = "200 {\"propagationPolicy\":\"Background\",\"preconditions\":{\"uid\":\"$uid\"}}" ]
  out=$(reqs POST /apis/batch/v1/namespaces/default/jobs$)
  [ "$out" = "201 {\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"migrate\",\"namespace\":\"default\",\"generation\":1,\"labels\":{\"app\":\"migrate\"},\"annotations\":{\"reloader.stakater.com/auto\":\"true\"}},\"spec\":{\"backoffLimit\":1,\"template\":{\"metadata\":{\"labels\":{\"app\":\"migrate\"}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"envFrom\":[{\"configMapRef\":{\"name\":\"cfg\"}}],\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$h\"}]}]}}}}" ]
  # DELETE before POST; the new Job has a new uid and a generated selector
  [ "$(fake_ctl GET '/requests?path=/jobs' | jq -r '[.items[] | select(.method=="DELETE" or .method=="POST") | .method] | join(" ")')" = "DELETE POST" ]
  new=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate')
  [ "$(jq -r .metadata.uid <<<"$new")" != "$uid" ]
  [ "$(jq -r '.spec.selector.matchLabels["batch.kubernetes.io/controller-uid"]' <<<"$new")" = "$(jq -r .metadata.uid <<<"$new")" ]
  grep -q 'rolled Job default/migrate for ConfigMap default/cfg' "$RL_LOG"
  # the recreated Job records the hash: a restart rolls nothing, the next change rolls again
  reload_stop --watches-closed
  start 7
  sleep 0.5
  [ "$(nreqs DELETE /jobs/migrate$)" -eq 1 ]
  fake_cm cfg '{"k":"2"}'
  reqs POST /jobs$ 2 >/dev/null
  [ "$(nreqs DELETE /jobs/migrate$)" -eq 2 ]
}

@test "Job: a POST refused as AlreadyExists after the DELETE is retried, the Job is not lost; manualSelector kept" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"manualSelector":true,"selector":{"matchLabels":{"run":"m"}},"template":{"metadata":{"labels":{"run":"m"}},"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  start 7
  fake_ctl POST /faults '{"method":"POST","path":"/jobs$","action":"status","code":409,"message":"jobs.batch \"migrate\" already exists","count":2}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  [ "$(reqs POST /jobs$ 3 | cut -d' ' -f1 | tr '\n' ' ')" = "409 409 201 " ]
  new=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate')
  [ "$(jq -r '.spec.template.spec.containers[0].env[0].value' <<<"$new")" = "$(sha1 'k=1')" ]
  # a Job with its own selector keeps it (Reloader strips it and its create fails)
  [ "$(jq -c '[.spec.selector, .spec.template.metadata.labels]' <<<"$new")" = '[{"matchLabels":{"run":"m"}},{"run":"m"}]' ]
  # the old Job's DELETED event does not drop the new one: the next change rolls it again
  fake_cm cfg '{"k":"2"}'
  reqs DELETE /jobs/migrate$ 2 >/dev/null
  [ "$(nreqs DELETE /jobs/migrate$)" -eq 2 ]
}

@test "Job: a POST refused after the DELETE (quota, webhook) is tried again; the Job is not lost" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  start 7
  # a ResourceQuota on count/jobs.batch or an admission webhook refuses the first create
  fake_ctl POST /faults '{"method":"POST","path":"/jobs$","action":"status","code":403,"message":"jobs.batch \"migrate\" is forbidden: exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1","count":1}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  [ "$(reqs POST /jobs$ 2 | cut -d' ' -f1 | tr '\n' ' ')" = "403 201 " ] || { cat "$RL_LOG"; false; }
  new=$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate')
  [ "$(jq -r '.spec.template.spec.containers[0].env[0].value' <<<"$new")" = "$(sha1 'k=1')" ]
  # deleted once: the retry creates the copy it kept, it does not delete again
  [ "$(nreqs DELETE /jobs/migrate$)" -eq 1 ]
  # and the recreated Job is still tracked: the next change rolls it
  fake_cm cfg '{"k":"2"}'
  reqs DELETE /jobs/migrate$ 2 >/dev/null
  reqs POST /jobs$ 3 >/dev/null
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$(sha1 'k=2')" ]
  grep -q 'Job default/migrate was deleted and could not be created again: HTTP error; trying again' "$RL_LOG"
  grep -q 'Job default/migrate: created again$' "$RL_LOG"
}

@test "Job: a DELETE whose answer was lost still ends with the Job created again" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  start 7
  # the API server deletes the Job, the connection drops before the answer
  fake_ctl POST /faults '{"method":"DELETE","path":"/jobs/migrate$","action":"drop-response","count":1}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  reqs POST /jobs$ >/dev/null
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$(sha1 'k=1')" ] || { cat "$RL_LOG"; fake_ctl GET '/requests?path=/jobs&watch=0' | jq -c '.items[] | [.method, .status]'; false; }
  # and it is still tracked: the next change rolls it
  fake_cm cfg '{"k":"2"}'
  reqs POST /jobs$ 2 >/dev/null
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$(sha1 'k=2')" ]
}

@test "Job: a deleted Job whose create failed is created again even when no rollout is pending any more" {
  fake_cm cfg '{"k":"0"}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  start 7
  fake_ctl POST /faults '{"method":"POST","path":"/jobs$","action":"status","code":403,"count":1}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  reqs POST /jobs$ >/dev/null
  # the ConfigMap goes too: the retried rollout has nothing to roll for, the Job is still owed
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  [ "$(fake_ctl GET '/requests?method=POST&path=/jobs$&min=2&wait=20' | jq -r '[.items[].status] | join(" ")')" = "403 201" ] || { cat "$RL_LOG"; false; }
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$(sha1 'k=1')" ]
  [ "$(nreqs DELETE /jobs/migrate$)" -eq 1 ]
}

# rollout NAME META-ANNOTATIONS-JSON: an Argo Rollout using ConfigMap cfg.
rollout() {
  fake_put "{\"apiVersion\":\"argoproj.io/v1alpha1\",\"kind\":\"Rollout\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\",\"annotations\":$2},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"$1\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"$1\"}},\"spec\":$POD}}}"
}

@test "Rollout: restart sets spec.restartAt, rollout patches the template (env-vars and annotations), merge patches" {
  fake_ctl POST /crds '{"resource":"argoproj.io/v1alpha1/rollouts"}' >/dev/null
  fake_cm cfg '{"k":"0"}'
  rollout r-restart '{"reloader.stakater.com/auto":"true","reloader.stakater.com/rollout-strategy":"restart"}'
  rollout r-rollout '{"reloader.stakater.com/auto":"true","reloader.stakater.com/rollout-strategy":"rollout"}'
  start 8 --is-Argo-Rollouts true
  fake_cm cfg '{"k":"1"}'
  h=$(sha1 'k=1')
  out=$(reqs PATCH /rollouts/r-restart$)
  [[ $out =~ ^200\ \{\"spec\":\ \{\"restartAt\":\ \"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\"\}\}$ ]]
  st=$(fake_ctl GET "/requests?method=GET&path=/rollouts/r-rollout$" | jq -r ".items[0].status")
  [ "$st" = 200 ]
  out=$(reqs PATCH /apis/argoproj.io/v1alpha1/namespaces/default/rollouts/r-rollout$)
  [[ $out =~ ^200\ \{\"metadata\":\{\"resourceVersion\":\"[0-9]+\"\},\"spec\":\{\"template\":\{\"spec\":\{\"containers\":\[\{\"name\":\"app\",\"image\":\"x\",\"envFrom\":\[\{\"configMapRef\":\{\"name\":\"cfg\"\}\}\],\"env\":\[\{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$h\"\}\]\}\]\}\}\}\}$ ]]
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/rollouts/' | jq -r '[.items[].contentType] | unique | join(" ")')" = application/merge-patch+json ]
  [ "$(fake_ctl GET '/objects?apiVersion=argoproj.io/v1alpha1&kind=Rollout&name=r-rollout' | jq -r '.spec.template.spec.containers[0].env[0].value')" = "$h" ]
  # restart records nothing: every change restarts; rollout is idempotent for the same data
  fake_cm cfg '{"k":"2"}'
  reqs PATCH /rollouts/r-restart$ 2 >/dev/null
  reqs PATCH /rollouts/r-rollout$ 2 >/dev/null
  reload_stop --watches-closed
  fake_ctl DELETE /requests >/dev/null
  # annotations strategy: the Deployment body, as a merge patch
  fake_cm cfg '{"k":"3"}'
  start 8 --is-Argo-Rollouts=true --reload-strategy annotations
  fake_cm cfg '{"k":"4"}'
  out=$(reqs PATCH /rollouts/r-rollout$)
  out=$(sed -E 's/(observedAt\\":)[0-9]+\}/\1N}/' <<<"$out")
  [ "$out" = '200 {"spec":{"template":{"metadata":{"annotations":{"reloader.stakater.com/last-reloaded-from":"{\"type\":\"CONFIGMAP\",\"name\":\"cfg\",\"namespace\":\"default\",\"hash\":\"'"$(sha1 'k=4')"'\",\"containerRefs\":[\"app\"],\"observedAt\":N}"}}}}}' ]
  # Argo Rollouts disabled (Reloader's default): no rollouts LIST or WATCH at all
  reload_stop --watches-closed
  fake_ctl DELETE /requests >/dev/null
  start 7
  fake_cm cfg '{"k":"5"}'
  sleep 0.5
  [ "$(nreqs '.*' /rollouts)" -eq 0 ]
}

@test "Rollout: an absent CRD (404) is said once; Deployments still roll; installed later, it is found within 30 s" {
  fake_cm cfg '{"k":"0"}'
  deployment web "$AUTO"
  rollout r '{"reloader.stakater.com/auto":"true"}'
  start 7 --is-Argo-Rollouts true
  grep -c 'argoproj.io/v1alpha1 rollouts are not served by this cluster (HTTP 404 on LIST): Rollout objects are not reloaded; checking again every 30 s' "$RL_LOG" | grep -qx 1
  fake_cm cfg '{"k":"1"}'
  reqs PATCH /deployments/web$ >/dev/null
  [ "$(nreqs GET /rollouts)" -eq 1 ]
  ! grep -q 'error' "$RL_LOG" || false
  # installed: the next check lists and watches it, without saying "absent" again
  fake_ctl POST /crds '{"resource":"argoproj.io/v1alpha1/rollouts"}' >/dev/null
  fake_ctl GET "/watchers?min=8&wait=40" >/dev/null
  [ "$(fake_ctl GET /watchers | jq '[.items[] | select(.resource == "argoproj.io/v1alpha1/rollouts")] | length')" -eq 1 ]
  grep -q 'argoproj.io/v1alpha1 rollouts are served now: watching them' "$RL_LOG"
  [ "$(grep -c 'not served' "$RL_LOG")" -eq 1 ]
  fake_cm cfg '{"k":"2"}'
  [ "$(reqs PATCH /rollouts/r$ | cut -c1-4)" = "200 " ]
}

@test "--ignored-workload-types: jobs and cronjobs are neither listed, watched nor rolled; bad values exit 2" {
  fake_cm cfg '{"k":"0"}'
  deployment web "$AUTO"
  fake_put '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"backup","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"schedule":"0 1 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}}}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}'
  start 5 --ignored-workload-types jobs,cronjobs
  fake_cm cfg '{"k":"1"}'
  reqs PATCH /deployments/web$ >/dev/null
  sleep 0.3
  [ "$(nreqs '.*' '/(jobs|cronjobs)')" -eq 0 ]
  reload_stop --watches-closed
  # one type only: the other is still handled
  start 6 --ignored-workload-types=cronjobs
  fake_cm cfg '{"k":"2"}'
  reqs POST /jobs$ >/dev/null
  [ "$(nreqs '.*' /cronjobs)" -eq 0 ]
  reload_stop --watches-closed
  # RBAC without jobs: a clear error at start, unless the kind is ignored
  fake_ctl POST /faults '{"method":"GET","path":"/jobs$","action":"status","code":403}' >/dev/null
  run_expect_fail 1 "$BIN" --kubeconfig "$KC" --mode once --no-events
  [[ $output == *'jobs.batch is forbidden: User \"system:serviceaccount:default:nodeprobe-reload\" cannot list resource \"jobs\" in API group \"batch\" at the cluster scope'* ]]
  run "$BIN" --kubeconfig "$KC" --mode once --no-events --ignored-workload-types jobs
  [ "$status" -eq 0 ]
  run_expect_fail 2 "$BIN" --ignored-workload-types jobs,deployments
  [[ $output == *"--ignored-workload-types: 'deployments' is not jobs or cronjobs"* ]]
  run_expect_fail 2 "$BIN" --is-Argo-Rollouts True
  [[ $output == *"--is-Argo-Rollouts: 'True' is not true or false (Reloader enables it only for exactly 'true')"* ]]
  run_expect_fail 2 "$BIN" --reload-on-delete 1
}

@test "pause-period: pause PATCH, the reload on the paused Deployment, resume PATCH when the period ends" {
  fake_cm cfg '{"k":"0"}'
  deployment web '{"reloader.stakater.com/auto":"true","deployment.reloader.stakater.com/pause-period":"2s"}'
  start 7
  fake_cm cfg '{"k":"1"}'
  out=$(reqs PATCH /apis/apps/v1/namespaces/default/deployments/web$ 2)
  [[ $(sed -n 1p <<<"$out") =~ ^200\ \{\"metadata\":\{\"annotations\":\{\"deployment.reloader.stakater.com/paused-at\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\"\}\},\"spec\":\{\"paused\":true\}\}$ ]]
  [ "$(sed -n 2p <<<"$out")" = "200 {\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$(sha1 'k=1')\"}]}]}}}}" ]
  # a change within the period lands on the paused Deployment; the window is not extended
  fake_cm cfg '{"k":"2"}'
  out=$(reqs PATCH /deployments/web$ 4)
  [ "$(sed -n 3p <<<"$out")" = "200 {\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$(sha1 'k=2')\"}]}]}}}}" ]
  [ "$(sed -n 4p <<<"$out")" = '200 {"metadata":{"annotations":{"deployment.reloader.stakater.com/paused-at":null}},"spec":{"paused":false}}' ]
  d=$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web')
  [ "$(jq -r '.spec.paused' <<<"$d")" = false ]
  [ "$(jq -r '.metadata.annotations["deployment.reloader.stakater.com/paused-at"]' <<<"$d")" = null ]
  grep -q 'Deployment default/web: paused for its pause-period 2s' "$RL_LOG"
  grep -q 'Deployment default/web: resumed, its pause-period 2s since' "$RL_LOG"
}

@test "pause-period across a restart: resumed when due from paused-at; paused by someone else left alone" {
  fake_cm cfg '{"k":"0"}'
  now=$(date -u +%s)
  at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
  deployment due '{"reloader.stakater.com/auto":"true","deployment.reloader.stakater.com/pause-period":"5m","deployment.reloader.stakater.com/paused-at":"'"$(at $((now - 600)))"'"}' "$POD" '"paused":true,'
  deployment soon '{"reloader.stakater.com/auto":"true","deployment.reloader.stakater.com/pause-period":"3s","deployment.reloader.stakater.com/paused-at":"'"$(at "$now")"'"}' "$POD" '"paused":true,'
  deployment theirs '{"reloader.stakater.com/auto":"true","deployment.reloader.stakater.com/pause-period":"1s"}' "$POD" '"paused":true,'
  start 7
  # the one whose period is over resumes at once, the other when its 3 s have passed
  [ "$(reqs PATCH /deployments/due$)" = '200 {"metadata":{"annotations":{"deployment.reloader.stakater.com/paused-at":null}},"spec":{"paused":false}}' ]
  [ "$(nreqs PATCH /deployments/soon$)" -eq 0 ]
  [ "$(reqs PATCH /deployments/soon$)" = '200 {"metadata":{"annotations":{"deployment.reloader.stakater.com/paused-at":null}},"spec":{"paused":false}}' ]
  # not before paused-at + 3 s (paused-at has whole seconds: now), however late the start was
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/soon$' | jq ".items[0].time >= $now + 3")" = true ]
  grep -q 'Deployment default/soon: paused at .* by pause-period; resuming in [123] s' "$RL_LOG"
  # paused without paused-at: not ours
  fake_cm cfg '{"k":"1"}'
  reqs PATCH /deployments/theirs$ >/dev/null
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/theirs$' | jq -r '.items[].body' | grep -c paused)" -eq 0 ]
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=theirs' | jq -r .spec.paused)" = true ]
}

@test "annotation-name flags: --auto-annotation, --search-match-annotation, --ignore-annotation, pause keys" {
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default","annotations":{"my/match":"true"}},"data":{"k":"0"}}'
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"skip","namespace":"default","annotations":{"my/ignore":"true"}},"data":{"k":"0"}}'
  deployment mine '{"my/auto":"true","my/pause":"1s"}'
  deployment std "$AUTO"
  deployment search '{"my/search":"true"}'
  deployment skipper '{"my/auto":"true"}' '{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"skip"}}]}]}'
  start 7 --auto-annotation my/auto --auto-search-annotation my/search --search-match-annotation my/match \
    --ignore-annotation my/ignore --pause-deployment-annotation my/pause --pause-deployment-time-annotation my/at
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default","annotations":{"my/match":"true"}},"data":{"k":"1"}}'
  fake_put '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"skip","namespace":"default","annotations":{"my/ignore":"true"}},"data":{"k":"1"}}'
  out=$(reqs PATCH /deployments/mine$ 3)
  [[ $(sed -n 1p <<<"$out") =~ ^200\ \{\"metadata\":\{\"annotations\":\{\"my/at\":\"[-0-9T:]+Z\"\}\},\"spec\":\{\"paused\":true\}\}$ ]]
  [ "$(sed -n 3p <<<"$out")" = '200 {"metadata":{"annotations":{"my/at":null}},"spec":{"paused":false}}' ]
  reqs PATCH /deployments/search$ >/dev/null
  sleep 0.3
  [ "$(nreqs PATCH /deployments/std$)" -eq 0 ]
  [ "$(nreqs PATCH /deployments/skipper$)" -eq 0 ]
  run_expect_fail 2 "$BIN" --auto-annotation ''
}

@test "--reload-on-delete: env-vars removes the variable (test+remove JSON patch), annotations records the delete hash" {
  fake_cm cfg '{"k":"0"}'
  h0=$(sha1 'k=0')
  deployment web "$AUTO" '{"containers":[{"name":"side","image":"y"},{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}],"env":[{"name":"A","value":"1"},{"name":"STAKATER_CFG_CONFIGMAP","value":"'"$h0"'"}]}]}'
  start 7 --reload-on-delete true
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  [ "$(reqs PATCH /deployments/web$)" = "200 [{\"op\":\"test\",\"path\":\"/spec/template/spec/containers/1/env/1/name\",\"value\":\"STAKATER_CFG_CONFIGMAP\"},{\"op\":\"remove\",\"path\":\"/spec/template/spec/containers/1/env/1\"}]" ]
  [ "$(fake_ctl GET '/requests?method=PATCH&path=/deployments/web$' | jq -r '.items[0].contentType')" = application/json-patch+json ]
  [ "$(fake_ctl GET '/objects?apiVersion=apps/v1&kind=Deployment&name=web' | jq -c '.spec.template.spec.containers[1].env')" = '[{"name":"A","value":"1"}]' ]
  # --reload-on-create: created again while watching rolls with the new hash
  reload_stop --watches-closed
  start 7 --reload-on-create true
  fake_cm cfg '{"k":"9"}'
  out=$(reqs PATCH /deployments/web$ 2)
  [ "$(sed -n 2p <<<"$out")" = "200 {\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"STAKATER_CFG_CONFIGMAP\",\"value\":\"$(sha1 'k=9')\"}]}]}}}}" ]
  reload_stop --watches-closed
  # annotations strategy: a delete is a rollout recording Reloader's delete-marker hash
  start 7 --reload-on-delete true --reload-strategy annotations
  fake_ctl DELETE /requests >/dev/null
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  out=$(reqs PATCH /deployments/web$)
  [[ $out == *'\"hash\":\"aae45badef99284e4dae01d6046154ea9d99532f\"'* ]]
  # without the flags (Reloader's default) creates and deletes roll nothing
  reload_stop --watches-closed
  fake_ctl DELETE /requests >/dev/null
  start 7
  fake_cm cfg '{"k":"0"}'
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  sleep 0.5
  [ "$(nreqs PATCH .)" -eq 0 ] || { fake_ctl GET "/requests?method=PATCH"; cat "$RL_LOG"; false; }
}

@test "Events: ReloadFail with Reloader's message on a failed rollout; ReloadSkipped for a SecretProviderClass" {
  fake_cm cfg '{"k":"0"}'
  deployment web "$AUTO"
  deployment csi "$AUTO" '{"containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}],"volumeMounts":[{"name":"s","mountPath":"/s"}]}],"volumes":[{"name":"s","csi":{"driver":"secrets-store.csi.k8s.io","volumeAttributes":{"secretProviderClass":"vault-db"}}}]}'
  start 7
  msg="Changes in SecretProviderClass 'vault-db' will not reload 'csi' of type 'Deployment' in namespace 'default': --enable-csi-integration is off"
  ev=$(reqs POST /events$)
  [[ $ev == *'"involvedObject":{"apiVersion":"apps/v1","kind":"Deployment","name":"csi","namespace":"default","uid":"'*'"},"reason":"ReloadSkipped","message":"'"$msg"'","type":"Warning"'* ]]
  grep -qF "warning: $msg" "$RL_LOG"
  fake_ctl DELETE /requests >/dev/null
  fake_ctl POST /faults '{"method":"PATCH","path":"/deployments/web$","action":"status","code":403,"count":1}' >/dev/null
  fake_cm cfg '{"k":"1"}'
  ev=$(fake_ctl GET '/requests?method=POST&path=/events$&min=2&wait=10' | jq -r '.items[].body' | grep '"ReloadFail"')
  [[ $ev == *'"reason":"ReloadFail","message":"Update for '"'web'"' of type '"'Deployment'"' in namespace '"'default'"' failed with error deployments.apps \"web\" is forbidden: User \"system:serviceaccount:default:nodeprobe-reload\" cannot patch resource \"deployments\" in API group \"apps\" in the namespace \"default\"","type":"Warning"'* ]]
  # the retry succeeds: a Reloaded Event follows
  fake_ctl GET '/requests?method=POST&path=/events$&min=3&wait=10' | jq -r '.items[].body' | grep -q '"reason":"Reloaded"'
}

@test "--reload-on-delete on the batch kinds: annotations gives a CronJob a Job with the delete hash; env-vars recreates a Job without the var" {
  fake_cm cfg '{"k":"0"}'
  h0=$(sha1 'k=0')
  fake_put '{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"backup","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"schedule":"0 1 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}]}]}}}}}}'
  fake_put '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default","annotations":{"reloader.stakater.com/auto":"true"}},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"x","envFrom":[{"configMapRef":{"name":"cfg"}}],"env":[{"name":"STAKATER_CFG_CONFIGMAP","value":"'"$h0"'"}]}]}}}}'
  start 7 --reload-on-delete true
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  out=$(reqs POST /jobs$)
  [[ $out == '201 {"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"migrate",'* ]]
  [ "$(fake_ctl GET '/objects?apiVersion=batch/v1&kind=Job&name=migrate' | jq -c '.spec.template.spec.containers[0].env')" = '[]' ]
  # env-vars: the CronJob template never had the var, so its delete creates nothing
  sleep 0.5
  [ "$(nreqs POST /jobs$)" -eq 1 ]
  reload_stop --watches-closed
  fake_cm cfg '{"k":"0"}'
  fake_ctl DELETE /requests >/dev/null
  start 7 --reload-on-delete true --reload-strategy annotations
  fake_ctl DELETE '/objects?apiVersion=v1&kind=ConfigMap&name=cfg' >/dev/null
  reqs POST /jobs$ 2 >/dev/null
  job=$(fake_ctl GET '/requests?method=POST&path=/jobs$' | jq -r '.items[].body | select(contains("generateName"))')
  [ "$(jq -r '.spec.template.metadata.annotations["reloader.stakater.com/last-reloaded-from"] | fromjson | .hash' <<<"$job")" = aae45badef99284e4dae01d6046154ea9d99532f ]
  [ "$(jq -r '.metadata.ownerReferences[0].name' <<<"$job")" = backup ]
}
