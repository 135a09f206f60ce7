// SPDX-License-Identifier: GPL-2.0

#include <linux/bottom_half.h>

__rtun_helper void rtun_helper_local_bh_disable(void)
{
	local_bh_disable();
}

__rtun_helper void rtun_helper_local_bh_enable(void)
{
	local_bh_enable();
}
