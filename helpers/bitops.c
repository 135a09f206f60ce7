// SPDX-License-Identifier: GPL-2.0

#include <linux/bitops.h>

__rtun_helper bool rtun_helper_test_bit(unsigned long nr, const volatile unsigned long *addr)
{
	return test_bit(nr, addr);
}

__rtun_helper bool rtun_helper_test_and_set_bit(unsigned long nr, volatile unsigned long *addr)
{
	return test_and_set_bit(nr, addr);
}

__rtun_helper bool rtun_helper_test_and_clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	return test_and_clear_bit(nr, addr);
}
