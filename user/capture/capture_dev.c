// SPDX-License-Identifier: MIT
/* /dev/mtrace access (see capture_dev.h). */
#include "capture/capture_dev.h"
#include "util/errmsg.h"
#include "util/regfile.h"
#include "util/mt_array.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SB_CHUNK 4096U

const char *mt_dev_path(void)
{
	const char *p = getenv("MTRACE_DEVICE");

	return p && *p ? p : MTRACE_DEVICE;
}

static int open_error(const char *path, int e, char *err, size_t errlen)
{
	struct stat st;

	switch (e) {
	case ENOENT:
		if (stat("/sys/module/mtrace", &st) == 0)
			return mt_errmsg(err, errlen, e,
					 "%s does not exist although the mtrace module is loaded: is devtmpfs mounted on /dev?",
					 path);
		/* modprobe is no advice where the kernel cannot load modules at all. */
		if (stat("/proc/modules", &st))
			return mt_errmsg(err, errlen, e,
					 "%s does not exist: the mtrace kernel module is not loaded, and this kernel cannot load modules (CONFIG_MODULES is off; 'mtrace-user doctor' checks every prerequisite)",
					 path);
		return mt_errmsg(err, errlen, e,
				 "%s does not exist: the mtrace kernel module is not loaded (load it with 'modprobe mtrace'; 'mtrace-user doctor' checks every prerequisite)",
				 path);
	case EACCES:
	case EPERM:
		return mt_errmsg(err, errlen, e,
				 "cannot open %s: permission denied (it needs CAP_PERFMON or CAP_SYS_ADMIN: run as root)",
				 path);
	case EBUSY:
		return mt_errmsg(err, errlen, e,
				 "%s is busy: another capture owns it (one capture at a time)", path);
	case ENODEV:
	case ENXIO:
		return mt_errmsg(err, errlen, e,
				 "cannot open %s: the mtrace module found no usable Intel PT ('mtrace-user doctor' says why)",
				 path);
	default:
		return mt_errmsg(err, errlen, e, "cannot open %s: %s", path, strerror(e));
	}
}

/*
 * The module's device is the misc device it registers as "mtrace"
 * (kmod/mtrace_dev.c); sysfs tells which device a node is without opening
 * it. Where sysfs cannot tell (not mounted, a node no driver has), the
 * open and GET_VERSION decide.
 */
static int check_identity(const char *path, dev_t rdev, char *err, size_t errlen)
{
	char cls[NAME_MAX + 1], name[NAME_MAX + 1];

	if (mt_chardev_sysfs(rdev, cls, name, sizeof(cls)) ||
	    (!strcmp(cls, "misc") && !strcmp(name, "mtrace")))
		return 0;
	return mt_errmsg(err, errlen, ENODEV,
			 "%s is a character device but not mtrace's (class %s, device %s)", path, cls,
			 name);
}

int mt_dev_check(char *err, size_t errlen)
{
	const char *path = mt_dev_path();
	struct stat st;

	if (stat(path, &st))
		return open_error(path, errno, err, errlen);
	if (!S_ISCHR(st.st_mode))
		return mt_errmsg(err, errlen, ENODEV, "%s is not an mtrace device: it is %s", path,
				 mt_file_kind(st.st_mode));
	return check_identity(path, st.st_rdev, err, errlen);
}

int mt_dev_open(struct mt_dev *d, char *err, size_t errlen)
{
	int e;

	memset(d, 0, sizeof(*d));
	d->path = mt_dev_path();
	d->fd = -1;
	/* Not opened unless mtrace's device: a FIFO's open waits for a
	 * writer, with the signals that could end the wait blocked, and
	 * another device's open can act on it. */
	if ((e = mt_dev_check(err, errlen)))
		return e;
	d->fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return open_error(d->path, errno, err, errlen);
	if (ioctl(d->fd, MTRACE_IOC_GET_VERSION, &d->version) < 0) {
		int e = errno;

		mt_dev_close(d);
		return mt_errmsg(err, errlen, e, "%s is not an mtrace device (GET_VERSION: %s)",
				 mt_dev_path(), strerror(e));
	}
	if (d->version.abi_version != MTRACE_ABI_VERSION) {
		int abi = (int)d->version.abi_version;

		mt_dev_close(d);
		return mt_errmsg(err, errlen, EPROTO,
				 "the loaded mtrace module speaks ABI %d, this mtrace-user needs ABI %d: install matching versions of both",
				 abi, MTRACE_ABI_VERSION);
	}
	d->version.module_version[sizeof(d->version.module_version) - 1] = '\0';
	if (ioctl(d->fd, MTRACE_IOC_GET_CAPS, &d->caps) < 0) {
		int e = errno;

		mt_dev_close(d);
		return mt_errmsg(err, errlen, e, "GET_CAPS on %s failed: %s", mt_dev_path(),
				 strerror(e));
	}
	return 0;
}

void mt_dev_close(struct mt_dev *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int mt_dev_configure(struct mt_dev *d, const struct mtrace_config *cfg, char *err, size_t errlen)
{
	if (ioctl(d->fd, MTRACE_IOC_SET_CONFIG, cfg) == 0)
		return 0;
	switch (errno) {
	case ESRCH:
		return mt_errmsg(err, errlen, ESRCH, "process %d does not exist (or exited)", cfg->pid);
	case EPERM:
	case EACCES:
		if (cfg->flags & MTRACE_CFG_SYSTEM_WIDE)
			return mt_errmsg(err, errlen, errno,
					 "permission denied: tracing every process needs CAP_PERFMON or CAP_SYS_ADMIN (--kernel: CAP_SYS_ADMIN)");
		if (cfg->flags & MTRACE_CFG_KERNEL)
			return mt_errmsg(err, errlen, errno,
					 "permission denied: --kernel needs CAP_SYS_ADMIN, and tracing process %d needs the right to ptrace it",
					 cfg->pid);
		return mt_errmsg(err, errlen, errno,
				 "permission denied: tracing process %d needs the right to ptrace it (same user, or CAP_SYS_PTRACE)",
				 cfg->pid);
	case EDQUOT:
		return mt_errmsg(err, errlen, EDQUOT,
				 "%llu bytes of ring per CPU exceed the module's ring memory limit (/sys/module/mtrace/parameters/ring_limit_kb; CAP_IPC_LOCK lifts it): try a smaller --buffer-size",
				 (unsigned long long)cfg->ring_size);
	case ENOMEM:
		return mt_errmsg(err, errlen, ENOMEM,
				 "the module could not allocate %llu bytes of ring per CPU: try a smaller --buffer-size",
				 (unsigned long long)cfg->ring_size);
	case EOPNOTSUPP:
	case EINVAL:
		return mt_errmsg(err, errlen, errno,
				 "the mtrace module rejected the configuration (%s): this CPU does not support the requested timing or buffer options",
				 strerror(errno));
	default:
		return mt_errmsg(err, errlen, errno, "SET_CONFIG failed: %s", strerror(errno));
	}
}

int mt_dev_arm(struct mt_dev *d, char *err, size_t errlen)
{
	if (ioctl(d->fd, MTRACE_IOC_ARM) == 0)
		return 0;
	if (errno == EBUSY)
		return mt_errmsg(err, errlen, EBUSY,
				 "cannot arm: Intel PT is already in use on some CPU (perf's intel_pt event?); stop the other PT user and retry");
	if (errno == EOPNOTSUPP)
		return mt_errmsg(err, errlen, EOPNOTSUPP,
				 "cannot arm: a CPU is in VMX operation (KVM: kvm_intel enables it when loaded) and this CPU cannot trace there (IA32_VMX_MISC[14]=0); unload kvm_intel or load it with enable_virt_at_load=0");
	if (errno == EIO)
		return mt_errmsg(err, errlen, EIO,
				 "cannot arm: a PT register write faulted on some CPU (see dmesg); the registers were restored");
	return mt_errmsg(err, errlen, errno, "ARM failed: %s", strerror(errno));
}

int mt_dev_freeze(struct mt_dev *d, uint32_t path, uint64_t cookie, char *err, size_t errlen)
{
	struct mtrace_freeze fr = { .path = path, .cookie = cookie };

	if (ioctl(d->fd, MTRACE_IOC_FREEZE, &fr) == 0)
		return 0;
	return mt_errmsg(err, errlen, errno, "FREEZE failed: %s", strerror(errno));
}

int mt_dev_status(struct mt_dev *d, struct mtrace_status *st, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(d->fd, MTRACE_IOC_GET_STATUS, st) == 0)
		return 0;
	return mt_errmsg(err, errlen, errno, "GET_STATUS failed: %s", strerror(errno));
}

int mt_dev_cpu(struct mt_dev *d, uint32_t cpu, struct mtrace_cpu_info *ci, char *err,
	       size_t errlen)
{
	memset(ci, 0, sizeof(*ci));
	ci->cpu = cpu;
	if (ioctl(d->fd, MTRACE_IOC_GET_CPU, ci) == 0)
		return 0;
	return mt_errmsg(err, errlen, errno, "GET_CPU %u failed: %s", cpu, strerror(errno));
}

int mt_dev_map_ring(struct mt_dev *d, const struct mtrace_cpu_info *ci, const void **ring,
		    char *err, size_t errlen)
{
	void *p = mmap(NULL, ci->ring_size, PROT_READ, MAP_SHARED, d->fd, (off_t)ci->mmap_offset);

	if (p == MAP_FAILED)
		return mt_errmsg(err, errlen, errno, "cannot map the ring of CPU %u: %s", ci->cpu,
				 strerror(errno));
	*ring = p;
	return 0;
}

int mt_dev_read_sideband(struct mt_dev *d, uint32_t cpu, struct mtrace_sb_record **recs,
			 size_t *n, uint64_t *lost, char *err, size_t errlen)
{
	struct mtrace_sb_record *all = NULL;
	size_t used = 0, cap = 0;
	uint64_t next = 0;

	*lost = 0;
	for (;;) {
		struct mtrace_sb_read rd = { .cpu = cpu, .count = SB_CHUNK, .start_seq = next };

		if (MT_ARRAY_RESERVE(all, cap, used, SB_CHUNK)) {
			free(all);
			return mt_errmsg(err, errlen, ENOMEM, "out of memory reading sideband");
		}
		rd.records_ptr = (uint64_t)(uintptr_t)(all + used);
		if (ioctl(d->fd, MTRACE_IOC_READ_SIDEBAND, &rd) < 0) {
			int e = errno;

			free(all);
			return mt_errmsg(err, errlen, e, "READ_SIDEBAND of CPU %u failed: %s", cpu,
					 strerror(e));
		}
		/* Records before first_seq were overwritten in the ring. */
		*lost += rd.first_seq - next;
		if (rd.count == 0)
			break;
		used += rd.count;
		next = rd.first_seq + rd.count;
	}
	*recs = all;
	*n = used;
	return 0;
}
