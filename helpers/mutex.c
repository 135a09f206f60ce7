// SPDX-License-Identifier: GPL-2.0

#include <linux/mutex.h>

__rtun_helper void rtun_helper_mutex_lock(struct mutex *lock)
{
	mutex_lock(lock);
}
