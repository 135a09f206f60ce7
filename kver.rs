// SPDX-License-Identifier: GPL-2.0

//! What tun.c does differently on the kernels rust_tun builds for, which
//! the driver branches on: [`HAS_BACKPRESSURE`] (7.3's `IFF_BACKPRESSURE`
//! and the transmit-queue wakes that came with it),
//! [`VNET_AFTER_NETWORK_HEADER`], [`VNET_HDR_PAD_ZEROED`],
//! [`VNET_HDR_LEN_BOUND_HAS_PAD`] and [`HAS_UDP_TUNNEL_GSO`] (7.3's
//! `tun_vnet.h`). Each follows the uapi header or the `rtun_kernel` cfg
//! `Kbuild` sets; what the kernel crate lacks on 6.12 is
//! `sys/compat.rs`'s.

/// Whether `tun_get_user()` sets `skb->dev` and the network header before
/// the vnet header's step (7.3: its `virtio_net_hdr_to_skb()` reads both
/// for GSO without NEEDS_CSUM), or after it (6.12: there the step, seeing
/// a network header, would also dissect the protocol, which 6.12's tun.c
/// never lets it do; `fuzz_vs_tun` found writes that 6.12's tun accepts
/// and the 7.3 order refuses).
pub(crate) const VNET_AFTER_NETWORK_HEADER: bool = cfg!(rtun_kernel = "7.3");

/// Whether `tun_put_user()` zero-fills the vnet header's bytes past what
/// it fills, up to `vnet_hdr_sz` (7.3's `__tun_vnet_hdr_put()`:
/// `iov_iter_zero()`), or skips them, leaving what the reader's buffer
/// held (6.12: `iov_iter_advance()`).
pub(crate) const VNET_HDR_PAD_ZEROED: bool = cfg!(rtun_kernel = "7.3");

/// Whether `tun_get_user()` bounds the vnet header's `hdr_len` by what
/// follows the parsed header, its padding included (7.3's
/// `__tun_vnet_hdr_get()`: `iov_iter_count()` before skipping the
/// padding), or by the packet alone (6.12: the length less
/// `vnet_hdr_sz`).
pub(crate) const VNET_HDR_LEN_BOUND_HAS_PAD: bool = cfg!(rtun_kernel = "7.3");

/// Whether this kernel's tun.c has UDP-tunnel GSO (7.3): `TUNSETOFFLOAD`'s
/// `TUN_F_UDP_TUNNEL_GSO(_CSUM)`, `NETIF_F_GSO_UDP_TUNNEL(_CSUM)` in
/// `TUN_USER_FEATURES`, `hw_enc_features`, and the
/// `virtio_net_hdr_v1_hash_tunnel` header. Taken from the uapi
/// (`RTUN_TUN_F_UDP_TUNNEL_GSO` is 0 where the kernel lacks it).
pub(crate) const HAS_UDP_TUNNEL_GSO: bool = crate::bindings::RTUN_TUN_F_UDP_TUNNEL_GSO != 0;

/// Whether this kernel's tun.c has `IFF_BACKPRESSURE` (7.3) and with it
/// `tun_force_wake_queue()` at attach, `TUNSETIFF`, a resize and
/// `__tun_detach()`, and `tun_net_close()`'s pass over the ring locks.
/// Taken from the uapi (`RTUN_IFF_BACKPRESSURE` is 0 where the kernel
/// lacks the flag), so it follows the headers, not a version number.
pub(crate) const HAS_BACKPRESSURE: bool = crate::bindings::RTUN_IFF_BACKPRESSURE != 0;
