// SPDX-License-Identifier: GPL-2.0-or-later
//
// cdi-consumer: a real CDI consumer for nodeprobe-devices' specs, on the CDI reference library
// (Debian's golang-github-container-orchestrated-devices-container-device-interface-dev, 0.5.2),
// built in GOPATH mode by test/bats/devices-cdi.bats. It does what a runtime does with the CDI
// names of an Allocate answer: load every spec of the spec directory into a cache (cdi.NewCache,
// no auto-refresh), then inject each name into an empty OCI spec (Cache.InjectDevices, which fills
// each device node's type and major:minor from its hostPath, as containerd and CRI-O do).
//
//	cdi-consumer DIR                list every device the specs define, one name a line
//	cdi-consumer DIR NAME...        inject the NAMEs; print the OCI spec's devices and mounts
//
// Printed (sorted): "device <path> <type> <major>:<minor> <access>" (access from the device
// cgroup rule the edit added) and "mount <destination> <source> <type> <options,...>".
// Any spec the library refuses, any error it records or an unresolved name: exit 1, the
// library's message on stderr.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/container-orchestrated-devices/container-device-interface/pkg/cdi"
	oci "github.com/opencontainers/runtime-spec/specs-go"
)

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "cdi-consumer: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: cdi-consumer DIR [NAME...]")
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(os.Args[1]), cdi.WithAutoRefresh(false))
	if err != nil {
		fail("NewCache: %v", err)
	}
	bad := false
	for path, errs := range cache.GetErrors() {
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "cdi-consumer: %s: %v\n", path, e)
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
	if len(os.Args) == 2 {
		for _, name := range cache.ListDevices() {
			fmt.Println(name)
		}
		return
	}
	spec := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
	unresolved, err := cache.InjectDevices(spec, os.Args[2:]...)
	if len(unresolved) > 0 {
		fail("unresolved CDI devices: %s", strings.Join(unresolved, ", "))
	}
	if err != nil {
		fail("InjectDevices: %v", err)
	}
	var out []string
	access := map[string]string{}
	if spec.Linux.Resources != nil {
		for _, r := range spec.Linux.Resources.Devices {
			if r.Major != nil && r.Minor != nil && r.Allow {
				access[fmt.Sprintf("%s %d:%d", r.Type, *r.Major, *r.Minor)] = r.Access
			}
		}
	}
	for _, d := range spec.Linux.Devices {
		key := fmt.Sprintf("%s %d:%d", d.Type, d.Major, d.Minor)
		out = append(out, fmt.Sprintf("device %s %s %s", d.Path, key, access[key]))
	}
	for _, m := range spec.Mounts {
		out = append(out, fmt.Sprintf("mount %s %s %s %s", m.Destination, m.Source, m.Type,
			strings.Join(m.Options, ",")))
	}
	sort.Strings(out)
	for _, l := range out {
		fmt.Println(l)
	}
}
