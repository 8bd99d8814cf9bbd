{{/* SPDX-License-Identifier: GPL-2.0-or-later */}}
{{/* nodeprobe chart helpers. */}}

{{- define "nodeprobe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "nodeprobe.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "nodeprobe.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "nodeprobe.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Names of the two parts: <fullname>-reload, <fullname>-mirror (at most 63 characters). */}}
{{- define "nodeprobe.reload" -}}
{{- printf "%s-reload" (include "nodeprobe.fullname" . | trunc 56 | trimSuffix "-") -}}
{{- end -}}
{{- define "nodeprobe.mirror" -}}
{{- printf "%s-mirror" (include "nodeprobe.fullname" . | trunc 48 | trimSuffix "-") -}}
{{- end -}}

{{- define "nodeprobe.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/part-of: nodeprobe
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of a part: include with (list $ "reload"). */}}
{{- define "nodeprobe.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "nodeprobe.name" $ | quote }}
app.kubernetes.io/instance: {{ $.Release.Name | quote }}
app.kubernetes.io/component: {{ index . 1 | quote }}
{{- end -}}

{{- define "nodeprobe.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "nodeprobe.reloadServiceAccount" -}}
{{- if .Values.reload.serviceAccount.create -}}
{{- default (include "nodeprobe.reload" .) .Values.reload.serviceAccount.name -}}
{{- else -}}
{{- required "reload.serviceAccount.name is required when reload.serviceAccount.create is false" .Values.reload.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Namespaces nodeprobe-reload watches when rbac.scope is namespaced. */}}
{{- define "nodeprobe.reloadNamespaces" -}}
{{- if .Values.reload.rbac.namespaces -}}
{{- toJson .Values.reload.rbac.namespaces -}}
{{- else -}}
{{- toJson (list .Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{/*
containerd's registry config path per distribution (../shared/reference/distros.md §2, from
each distribution's source): Talos writes its generated config with /etc/cri/conf.d/hosts
(talos internal/pkg/containers/cri/containerd/containerd.go); k3s and RKE2 write hosts.toml under
<data-dir>/agent/etc/containerd/certs.d (k3s pkg/agent/containerd/config.go); MicroK8s ships
${SNAP_DATA}/args/certs.d in its containerd template; kubeadm and kind use containerd's own
/etc/containerd/certs.d (the first entry of containerd >= 2.2's default list); k0s sets none:
Spegel's k0s instructions and containerd >= 2.2 (k0s 1.36) use /etc/containerd/certs.d, which
also stays out of /etc/k0s/containerd.d, whose changes restart containerd.
*/}}
{{- define "nodeprobe.mirrorConfigPath" -}}
{{- $paths := dict
  "kubeadm" "/etc/containerd/certs.d"
  "kind" "/etc/containerd/certs.d"
  "talos" "/etc/cri/conf.d/hosts"
  "k3s" "/var/lib/rancher/k3s/agent/etc/containerd/certs.d"
  "rke2" "/var/lib/rancher/rke2/agent/etc/containerd/certs.d"
  "k0s" "/etc/containerd/certs.d"
  "microk8s" "/var/snap/microk8s/current/args/certs.d" -}}
{{- if .Values.mirror.configPath -}}
{{- .Values.mirror.configPath -}}
{{- else -}}
{{- required (printf "mirror.distro %q: not one of kubeadm, talos, k3s, rke2, k0s, microk8s, kind" .Values.mirror.distro) (get $paths .Values.mirror.distro) -}}
{{- end -}}
{{- end -}}

{{/* Mirror targets, in order, as a JSON list. */}}
{{- define "nodeprobe.mirrorTargets" -}}
{{- $t := list -}}
{{- $s := .Values.mirror.spegel.targets -}}
{{- if eq $s "node-port-30020" -}}
{{- $t = list "http://$(NODE_IP):30020" -}}
{{- else if eq $s "host-and-node-port" -}}
{{- $t = list "http://$(NODE_IP):30020" "http://$(NODE_IP):30021" -}}
{{- else if eq $s "prefer-same-node" -}}
{{- $t = list "http://$(NODE_IP):30021" -}}
{{- else if eq $s "host-port" -}}
{{- $t = list (printf "http://$(NODE_IP):%d" (int .Values.mirror.spegel.hostPort)) -}}
{{- else if ne $s "none" -}}
{{- fail (printf "mirror.spegel.targets %q: not one of node-port-30020, host-and-node-port, prefer-same-node, host-port, none" $s) -}}
{{- end -}}
{{- $t = concat $t .Values.mirror.mirrorTargets -}}
{{- if not $t -}}
{{- fail "mirror: no mirror target (mirror.spegel.targets is none and mirror.mirrorTargets is empty)" -}}
{{- end -}}
{{- toJson $t -}}
{{- end -}}

{{/* The mirror's hostPath volume and pod basics shared by the DaemonSet and the cleanup hook. */}}
{{- define "nodeprobe.mirrorContainerSecurity" -}}
# uid 0 WITHOUT any capability: the config path is root:root 0755 on the host and only its
# owner may create entries in it. Owner checks need no capability.
runAsUser: 0
runAsGroup: 0
runAsNonRoot: false
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- define "nodeprobe.pauseSecurity" -}}
runAsUser: 65535
runAsGroup: 65535
runAsNonRoot: true
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/*
Registries, as a JSON list: mirror.registries, then mirror.extraRegistries (a scheme-less host
gets https://). Two naming the same host (one hosts.toml directory) fail here: nodeprobe-mirror
refuses them ("given twice"), and would on every node.
*/}}
{{- define "nodeprobe.mirrorRegistries" -}}
{{- $m := .Values.mirror -}}
{{- $all := list -}}
{{- range $m.registries }}
{{- $all = append $all . -}}
{{- end }}
{{- range (regexSplit "[, ]+" ($m.extraRegistries | default "") -1) }}
{{- if . }}
{{- $all = append $all (ternary . (printf "https://%s" .) (contains "://" .)) -}}
{{- end }}
{{- end }}
{{- $seen := dict -}}
{{- range $all }}
{{- $host := regexReplaceAll "^[A-Za-z]+://" . "" -}}
{{- if hasKey $seen $host }}
{{- fail (printf "mirror: registry %s given twice (mirror.registries, mirror.extraRegistries): nodeprobe-mirror would refuse it on every node" $host) -}}
{{- end }}
{{- $_ := set $seen $host true -}}
{{- end }}
{{- toJson $all -}}
{{- end -}}

{{/* The options configure and watch share: include with (list $ PATH). */}}
{{- define "nodeprobe.mirrorArgs" -}}
{{- $ := index . 0 -}}
{{- $path := index . 1 -}}
{{- $m := $.Values.mirror -}}
- {{ printf "--config-path=%s" $path | quote }}
{{- range (include "nodeprobe.mirrorTargets" $ | fromJsonArray) }}
- {{ printf "--mirror-target=%s" . | quote }}
{{- end }}
{{- range (include "nodeprobe.mirrorRegistries" $ | fromJsonArray) }}
- {{ printf "--registry=%s" . | quote }}
{{- end }}
- {{ printf "--resolve-tags=%t" $m.resolveTags | quote }}
{{- with $m.dialTimeout }}
- {{ printf "--dial-timeout=%s" . | quote }}
{{- end }}
{{- if $m.prependExisting }}
- --prepend-existing
{{- end }}
{{- if $m.basicAuthSecretName }}
- --basic-auth-dir=/etc/secrets/basic-auth
{{- end }}
{{- end -}}
