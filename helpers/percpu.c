// SPDX-License-Identifier: GPL-2.0

#include <linux/cpumask.h>
#include <linux/percpu.h>

__rtun_helper void __percpu *rtun_helper___alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu(size, align);
}

__rtun_helper void *rtun_helper_per_cpu_ptr(void __percpu *ptr, int cpu)
{
	return per_cpu_ptr(ptr, cpu);
}

/* this_cpu_inc() of a u64: the macro is generic, the helper typed. */
__rtun_helper void rtun_helper_this_cpu_inc_u64(u64 __percpu *ptr)
{
	this_cpu_inc(*ptr);
}

__rtun_helper unsigned int rtun_helper_cpumask_next(int n, const struct cpumask *srcp)
{
	return cpumask_next(n, srcp);
}

__rtun_helper const struct cpumask *rtun_helper_cpu_possible_mask(void)
{
	return cpu_possible_mask;
}

__rtun_helper int rtun_helper_smp_processor_id(void)
{
	return smp_processor_id();
}
