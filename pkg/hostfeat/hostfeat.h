/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostfeat: NFD v0.19's other node-local features (cpu, kernel, memory, network, storage, system).
 */
#ifndef NP_HOSTFEAT_H
#define NP_HOSTFEAT_H

#include <stdbool.h>
#include <stddef.h>

struct cpu_x86;
struct feat_set;
struct log_err;

/*
 * Each function adds the features of one NFD source part to fs, with NFD's
 * names, attribute names and value formats (NFD v0.19 source/DOMAIN/NAME.go,
 * cited per function), reading under the sysfs root sysfs (and procfs root
 * proc) so that tests run on fixture trees. As NFD, a file that cannot be
 * read leaves its attribute out (every read is bounded: at most
 * HOSTFEAT_FILE_MAX bytes, a FIFO or device is "cannot be read", never a
 * blocked read); a feature NFD makes only when a directory is readable is
 * absent without it. A directory with more than HOSTFEAT_DIR_MAX entries
 * (reading stops at one more) leaves the feature it makes out, with a warning
 * naming it: NFD lists everything, we bound it. Returns 0 or -ENOMEM (err filled).
 */
#define HOSTFEAT_FILE_MAX 4096	/* bytes of one attribute (a sysfs page) */
#define HOSTFEAT_DIR_MAX  65536 /* entries of one listed directory */

/*
 * cpu.topology (source/cpu/cpu.go discoverTopology): hardware_multithreading
 * ("true" when any <sysfs>/bus/cpu/devices/<cpu>/topology/thread_siblings_list
 * holds ',' or '-', else "false") and socket_count (distinct trimmed
 * physical_package_id values, decimal). Always made; empty when the directory
 * or any of those files cannot be read, as NFD.
 */
int hostfeat_cpu_topology(const char *sysfs, struct feat_set *fs, struct log_err *err);

/*
 * cpu.security (source/cpu/security_amd64.go): elements only when true:
 * sgx.enabled + sgx.epc (src has SGX and the EPC sections of cpuid leaf 0x12
 * sum to more than 0: the sum in bytes), tdx.enabled (<sysfs>/module/kvm_intel/
 * parameters/tdx is exactly "Y\n") + tdx.total_keys, tdx.protected (cpuid
 * TDX_GUEST), sev.enabled + sev.asids, sev.es.enabled +
 * sev.encrypted_state_ids, sev.snp.enabled (<sysfs>/module/kvm_amd/parameters/
 * sev, sev_es, sev_snp start with '1' or 'Y'); the counts from the misc cgroup's
 * capacity (<sysfs>/fs/cgroup/misc.capacity, else fs/cgroup/misc/misc.capacity).
 * Always made (empty off x86: src NULL).
 */
int hostfeat_cpu_security(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
			  struct log_err *err);

/*
 * cpu.cstate (source/cpu/cstate_amd64.go): enabled = whether the trimmed
 * <sysfs>/module/intel_idle/parameters/max_cstate (Go's Atoi) is > 0, when
 * <sysfs>/devices/system/cpu/cpuidle/current_driver is "intel_idle". Empty
 * without cpuidle/ or with another driver; absent without devices/system/cpu,
 * or when current_driver or max_cstate cannot be read or parsed. Off amd64
 * (amd64 false) always made and empty, as NFD's stub.
 */
int hostfeat_cpu_cstate(const char *sysfs, bool amd64, struct feat_set *fs, struct log_err *err);

/*
 * cpu.pstate (source/cpu/pstate_amd64.go): with <sysfs>/devices/system/cpu/
 * intel_pstate/status readable and not "off": status (trimmed), turbo ("true"
 * when no_turbo starts with '0', else "false"; left out when unreadable), and
 * for status "active" scaling_governor: the trimmed scaling_governor all
 * devices/system/cpu/cpufreq/<policy> with a non-blank affected_cpus share
 * (left out when two differ). Always made; empty off amd64.
 */
int hostfeat_cpu_pstate(const char *sysfs, bool amd64, struct feat_set *fs, struct log_err *err);

/*
 * cpu.rdt (source/cpu/rdt_linux_amd64.go): "true" elements from cpuid leaves
 * 7, 0xf and 0x10: RDTMON (+ RDTCMT, RDTMBM), RDTL3CA (+ RDTL3CA_NUM_CLOSID:
 * <sysfs>/fs/resctrl/info/L3/num_closids minus one, decimal, when readable and
 * > 0), RDTL2CA, RDTMBA. Always made; empty when src is NULL (not x86).
 */
int hostfeat_cpu_rdt(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
		     struct log_err *err);

/*
 * cpu.sst (source/cpu/power_amd64.go): bf.enabled = "true" when some
 * <sysfs>/bus/cpu/devices/<cpu>/cpufreq/base_frequency / 1000 exceeds cpuid
 * leaf 0x16's nominal base frequency (EAX, MHz); nothing else. Always made;
 * empty when src is NULL.
 */
int hostfeat_cpu_sst(const char *sysfs, const struct cpu_x86 *src, struct feat_set *fs,
		     struct log_err *err);

/*
 * cpu.coprocessor (source/cpu/coprocessor_ppc64le.go): nx_gzip = "true" when
 * <sysfs>/devices/vio/ibm,compression-v1/nx_gzip_caps exists, on ppc64le only.
 * Always made (empty elsewhere, as NFD's stub).
 */
int hostfeat_cpu_coprocessor(const char *sysfs, bool ppc64le, struct feat_set *fs,
			     struct log_err *err);

/*
 * system.name (source/system/system.go): nodename = nodename ("" when NULL),
 * NFD's NODE_NAME. system.dmiid: the trimmed contents of bios_date bios_vendor
 * bios_version board_asset_tag board_name board_vendor board_version
 * chassis_asset_tag chassis_type chassis_vendor chassis_version product_family
 * product_name product_sku product_version sys_vendor under
 * <sysfs>/devices/virtual/dmi/id, each when readable; absent when none is.
 */
int hostfeat_system(const char *sysfs, const char *nodename, struct feat_set *fs,
		    struct log_err *err);

/*
 * kernel.selinux (source/kernel/selinux.go): enabled = "true" when
 * <sysfs>/fs/selinux/enforce starts with '1', "false" without fs/selinux or
 * otherwise; absent without <sysfs>/fs or when enforce cannot be read.
 * kernel.kvm (source/kernel/kvm.go): enabled = whether
 * <sysfs>/devices/virtual/misc/kvm exists.
 */
int hostfeat_kernel(const char *sysfs, struct feat_set *fs, struct log_err *err);

/*
 * memory (source/memory/memory.go): memory.numa (is_numa, node_count: the
 * entries of <sysfs>/bus/node/devices; absent when unreadable), memory.swap
 * (enabled: more than one non-blank line in <proc>/swaps; absent when
 * unreadable), memory.nv (instances name, devtype, mode of
 * <sysfs>/bus/nd/devices; empty without it), memory.hugepages (enabled, and
 * hugepages-<size> = the trimmed nr_hugepages of each
 * <sysfs>/kernel/mm/hugepages/hugepages-<N>kB, <size> as Kubernetes prints N Ki:
 * 2048kB -> 2Mi, 1048576kB -> 1Gi).
 */
int hostfeat_memory(const char *sysfs, const char *proc, struct feat_set *fs, struct log_err *err);

/*
 * network.device and network.virtual (source/network/network.go): one
 * instance per entry of <sysfs>/class/net but bonding_masters: those with a
 * "device" entry are devices (name, operstate, speed, mtu, sriov_numvfs,
 * sriov_totalvfs from device/), the others virtual (name, operstate, speed, mtu),
 * each trimmed and left out when unreadable. Both absent when class/net
 * cannot be listed.
 */
int hostfeat_network(const char *sysfs, struct feat_set *fs, struct log_err *err);

/*
 * storage.block (source/storage/storage.go): one instance per entry of
 * <sysfs>/block: name, and dax, rotational, nr_zones, zoned from its queue/
 * (trimmed, left out when unreadable). Absent when block/ cannot be listed.
 */
int hostfeat_storage(const char *sysfs, struct feat_set *fs, struct log_err *err);

#endif
