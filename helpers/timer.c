// SPDX-License-Identifier: GPL-2.0

#include <linux/timer.h>

__rtun_helper void rtun_helper_timer_setup(struct timer_list *timer,
					  void (*func)(struct timer_list *), unsigned int flags)
{
	timer_setup(timer, func, flags);
}

__rtun_helper int rtun_helper_timer_pending(const struct timer_list *timer)
{
	return timer_pending(timer);
}
