// SPDX-License-Identifier: GPL-2.0

#include <linux/spinlock.h>

__rtun_helper void rtun_helper_spin_lock(spinlock_t *lock)
{
	spin_lock(lock);
}

__rtun_helper void rtun_helper_spin_unlock(spinlock_t *lock)
{
	spin_unlock(lock);
}

__rtun_helper void rtun_helper_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

__rtun_helper void rtun_helper_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

__rtun_helper void rtun_helper_write_lock_bh(rwlock_t *lock)
{
	write_lock_bh(lock);
}

__rtun_helper void rtun_helper_write_unlock_bh(rwlock_t *lock)
{
	write_unlock_bh(lock);
}

__rtun_helper int rtun_helper_spin_trylock(spinlock_t *lock)
{
	return spin_trylock(lock);
}

__rtun_helper int rtun_helper_spin_trylock_bh(spinlock_t *lock)
{
	return spin_trylock_bh(lock);
}

__rtun_helper void rtun_helper_spin_assert_is_held(spinlock_t *lock)
{
	lockdep_assert_held(lock);
}
