// SPDX-License-Identifier: GPL-2.0

#include <linux/filter.h>
#include <linux/skbuff.h>
#include <net/xdp.h>
#include <trace/events/xdp.h>

__rtun_helper u32 rtun_helper_bpf_prog_run_xdp(const struct bpf_prog *prog,
					       struct xdp_buff *xdp)
{
	return bpf_prog_run_xdp(prog, xdp);
}

__rtun_helper void rtun_helper_bpf_prog_inc(struct bpf_prog *prog)
{
	bpf_prog_inc(prog);
}

__rtun_helper void rtun_helper_xdp_init_buff(struct xdp_buff *xdp, u32 frame_sz,
					     struct xdp_rxq_info *rxq)
{
	xdp_init_buff(xdp, frame_sz, rxq);
}

__rtun_helper void rtun_helper_xdp_prepare_buff(struct xdp_buff *xdp,
						unsigned char *hard_start,
						int headroom, int data_len,
						const bool meta_valid)
{
	xdp_prepare_buff(xdp, hard_start, headroom, data_len, meta_valid);
}

__rtun_helper struct xdp_frame *
rtun_helper_xdp_convert_buff_to_frame(struct xdp_buff *xdp)
{
	return xdp_convert_buff_to_frame(xdp);
}

__rtun_helper void rtun_helper_trace_xdp_exception(const struct net_device *dev,
						   const struct bpf_prog *xdp,
						   u32 act)
{
	trace_xdp_exception(dev, xdp, act);
}

__rtun_helper struct bpf_net_context *
rtun_helper_bpf_net_ctx_set(struct bpf_net_context *bpf_net_ctx)
{
	return bpf_net_ctx_set(bpf_net_ctx);
}

__rtun_helper void rtun_helper_bpf_net_ctx_clear(struct bpf_net_context *bpf_net_ctx)
{
	bpf_net_ctx_clear(bpf_net_ctx);
}
