// SPDX-License-Identifier: GPL-2.0

#include <linux/mutex.h>

__rtun_helper void rtun_helper_mutex_lock(struct mutex *lock)
{
	mutex_lock(lock);
}

/* A function on 6.12, an inline on 7.3. */
__rtun_helper void rtun_helper___mutex_init(struct mutex *lock, const char *name,
					    struct lock_class_key *key)
{
	__mutex_init(lock, name, key);
}
