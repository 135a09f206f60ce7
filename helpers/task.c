// SPDX-License-Identifier: GPL-2.0

#include <linux/sched.h>
#include <linux/sched/signal.h>

__rtun_helper struct task_struct *rtun_helper_get_current(void)
{
	return current;
}

__rtun_helper void rtun_helper_set_current_state(unsigned int state)
{
	set_current_state(state);
}

__rtun_helper void rtun_helper___set_current_state(unsigned int state)
{
	__set_current_state(state);
}

__rtun_helper int rtun_helper_signal_pending(struct task_struct *p)
{
	return signal_pending(p);
}

__rtun_helper struct pid *rtun_helper_task_pid(struct task_struct *task)
{
	return task_pid(task);
}

__rtun_helper void rtun_helper_cond_resched(void)
{
	cond_resched();
}
