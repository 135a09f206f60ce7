// SPDX-License-Identifier: GPL-2.0

//! The tun-shaped part of the layer, built into rust_tun only (the
//! `rtun_driver = "tun"` cfg `Kbuild` sets): what no other driver of the
//! kernel has in this form, or what is shaped by tun's ABI rather than by
//! the kernel object it wraps.
//!
//! - [`Sock`] and [`Proto`]: the socket that stands for an open file, a C
//!   struct of the module's own (`struct rtun_sock` in
//!   `bindings_helper.h`: the `sock`, its `socket`, and the NAPI context
//!   and mutex of tun.c's `tun_file`), with [`FileSocket`];
//! - [`SockOps`]: `proto_ops` for vhost-net's `sendmsg`/`recvmsg`, with
//!   tun's `TUN_MSG_PTR` batches ([`BatchOffer`], `struct tun_msg_ctl`)
//!   and the XDP buffers vhost-net builds ([`XdpBuff`]);
//! - the `IFF_NAPI_FRAGS` write path ([`NapiFrags`]);
//! - the vhost-net exports (`vhost.rs`, `export_tun_files!`);
//! - the `ifreq`-shaped hardware-address calls of the file's ioctls
//!   (`netdev.rs`);
//! - the tun LSM hooks ([`TunSecurity`]);
//! - the vnet header ([`VnetHdr`], `tun_vnet.h`'s layout);
//! - the RFS record step (`rps.rs`, tun.c's `tun_flow_update()`'s
//!   `sock_rps_record_flow_hash()`).
//!
//! Their C helpers are `helpers/tun/`.

#![warn(dead_code, unused_imports, unused_macros)]

mod frags;
mod netdev;
mod rps;
mod security;
mod sock;
mod sockops;
pub(crate) mod vhost;
mod vnet;
mod xdp;

pub(crate) use frags::{NapiFrags, NapiFragsLocked};
pub(crate) use netdev::{IFRU_LEN, SOCKADDR_LEN};
pub(in crate::sys) use rps::{private, RawTable};
pub(crate) use rps::{rps_record_sock_flow, rps_sock_flow_entry, GlobalFlowTable, SockFlowTable};
pub(crate) use security::{security_tun_dev_create, TunSecurity};
pub(crate) use sock::{
    impl_file_socket, FasyncBand, FileSocket, Proto, Sock, SockFprog, SockRef, SOCK_FPROG_LEN,
};
pub(crate) use sockops::{BatchOffer, BatchVerdict, RecvMsg, SendMsg, SockOps};
pub(crate) use vnet::{VnetHdr, VNET_F_NEEDS_CSUM, VNET_HDR_LEN, VNET_HDR_TNL_SIZE};
pub(crate) use xdp::{eth_frame, EthFrame, XdpBuff};
