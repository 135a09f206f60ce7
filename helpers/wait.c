// SPDX-License-Identifier: GPL-2.0

#include <linux/poll.h>
#include <linux/wait.h>

__rtun_helper void rtun_helper_init_waitqueue_entry(struct wait_queue_entry *wq_entry,
						   struct task_struct *p)
{
	init_waitqueue_entry(wq_entry, p);
}

__rtun_helper int rtun_helper_waitqueue_active(struct wait_queue_head *wq_head)
{
	return waitqueue_active(wq_head);
}

__rtun_helper void rtun_helper_wake_up_interruptible_poll(struct wait_queue_head *wq_head,
							 __poll_t mask)
{
	wake_up_interruptible_poll(wq_head, mask);
}

__rtun_helper void rtun_helper_wake_up_interruptible_sync_poll(struct wait_queue_head *wq_head,
							      __poll_t mask)
{
	wake_up_interruptible_sync_poll(wq_head, mask);
}

__rtun_helper void rtun_helper_poll_wait(struct file *filp, wait_queue_head_t *wait_address,
					poll_table *p)
{
	poll_wait(filp, wait_address, p);
}
