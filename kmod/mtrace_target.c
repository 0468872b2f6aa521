// SPDX-License-Identifier: GPL-2.0-only
/*
 * Permission to trace another process. ptrace_may_access() is not exported
 * to modules, so this applies the same credential rule as ptrace attach
 * (kernel/ptrace.c, __ptrace_may_access with PTRACE_MODE_ATTACH_REALCREDS):
 * the caller's real ids must match all of the target's ids, and a
 * non-dumpable target needs CAP_SYS_PTRACE, as does any mismatch. LSM
 * hooks (Yama, SELinux) cannot be consulted from a module.
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/user_namespace.h>

#include "mtrace_target.h"

static bool ids_match(const struct cred *c, const struct cred *t)
{
	return uid_eq(c->uid, t->euid) && uid_eq(c->uid, t->suid) &&
	       uid_eq(c->uid, t->uid) && gid_eq(c->gid, t->egid) &&
	       gid_eq(c->gid, t->sgid) && gid_eq(c->gid, t->gid);
}

static bool may_attach(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	struct mm_struct *mm;
	bool ok;

	if (same_thread_group(task, current))
		return true;
	rcu_read_lock();
	tcred = __task_cred(task);
	ok = ids_match(cred, tcred) || ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (!ok)
		return false;
	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) != SUID_DUMP_USER)
		ok = ns_capable(mm->user_ns, CAP_SYS_PTRACE);
	task_unlock(task);
	return ok;
}

int mtrace_target_lookup(pid_t vpid, struct pid **tgid)
{
	struct task_struct *task;
	int err = 0;

	rcu_read_lock();
	task = get_pid_task(find_vpid(vpid), PIDTYPE_PID);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	if (task->flags & PF_KTHREAD)
		err = -EINVAL;
	else if (!may_attach(task))
		err = -EPERM;
	else
		*tgid = get_pid(task_tgid(task));
	put_task_struct(task);
	/* No thread-group pid: the whole process is being reaped. */
	if (!err && !*tgid)
		err = -ESRCH;
	return err;
}
