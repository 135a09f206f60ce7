// SPDX-License-Identifier: GPL-2.0

#include <linux/rcupdate.h>

__rtun_helper void rtun_helper_rcu_read_lock(void)
{
	rcu_read_lock();
}

__rtun_helper void rtun_helper_rcu_read_unlock(void)
{
	rcu_read_unlock();
}
