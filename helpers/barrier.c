// SPDX-License-Identifier: GPL-2.0

#include <asm/barrier.h>

__rtun_helper void rtun_helper_smp_mb(void)
{
	smp_mb();
}

__rtun_helper void rtun_helper_smp_mb__after_atomic(void)
{
	smp_mb__after_atomic();
}
