// SPDX-License-Identifier: GPL-2.0

#include <linux/preempt.h>

__rtun_helper void rtun_helper_preempt_disable(void)
{
	preempt_disable();
}

__rtun_helper void rtun_helper_preempt_enable(void)
{
	preempt_enable();
}

__rtun_helper int rtun_helper_preempt_count(void)
{
	return preempt_count();
}
