// SPDX-License-Identifier: GPL-2.0

#include <linux/bpf.h>
#include <linux/filter.h>

/* bpf_prog_get_type_dev(ufd, type, false); without CONFIG_BPF_SYSCALL,
 * ERR_PTR(-EOPNOTSUPP). */
__rtun_helper struct bpf_prog *rtun_helper_bpf_prog_get_type(u32 ufd,
							      enum bpf_prog_type type)
{
	return bpf_prog_get_type(ufd, type);
}

__rtun_helper u32 rtun_helper_bpf_prog_run_clear_cb(const struct bpf_prog *prog,
						    struct sk_buff *skb)
{
	return bpf_prog_run_clear_cb(prog, skb);
}
