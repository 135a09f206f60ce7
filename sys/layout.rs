// SPDX-License-Identifier: GPL-2.0

//! Compile-time checks that bindgen's Rust types are laid out as the C
//! compiler lays out the kernel's structs, for every type the module
//! embeds, allocates or reads fields of (`bindings_helper.h`: the sizes and
//! offsets clang computes for C, which bindgen only evaluates).
//!
//! bindgen can get a layout wrong without an error: 0.71.1 drops a tagged
//! struct used as an anonymous member (`-fms-extensions`), and 7.3's
//! `socket_lock_t` is such a union; under lockdep that made `sock.sk_lock`
//! 64 bytes shorter in Rust, so every `struct sock` field after it was read
//! and written 64 bytes early (lockdep's "non-static key" on
//! `sk_callback_lock`, then a write to rodata through `sk_write_queue`).
//! `socket_lock_t` is now opaque to bindgen (Kbuild), and these checks
//! stop the build of any such mismatch, on any kernel and configuration.

use crate::bindings;
use core::mem::{offset_of, size_of};

/// `c_size!(T)`: bindgen's `T` has C's size (`RTUN_SIZEOF_T`);
/// `c_size!(T, C)` checks it against `RTUN_SIZEOF_C` (the compile-fail
/// case below: a type against another's size must not build).
macro_rules! c_size {
    ($t:ident) => {
        c_size!($t, $t);
    };
    ($t:ident, $c:ident) => {
        ::kernel::macros::paste! {
            const _: () = assert!(
                size_of::<bindings::$t>() == bindings::[<RTUN_SIZEOF_ $c>] as usize,
                concat!("bindgen's ", stringify!($t), " differs in size from C's"),
            );
        }
    };
}

macro_rules! c_sizes {
    ($($t:ident),* $(,)?) => {
        $( c_size!($t); )*
    };
}

// The check can fail: `struct socket` against `struct sock`'s C size
// (scripts/compile-fail.sh, on every kernel).
#[cfg(rtun_compile_fail = "layout_size_mismatch")]
c_size!(socket, sock);

macro_rules! c_offsets {
    ($($t:ident . $f:ident),* $(,)?) => {
        $(
            const _: () = assert!(
                offset_of!(bindings::$t, $f) == ::kernel::macros::paste!(bindings::[<RTUN_OFFSETOF_ $t _ $f>]) as usize,
                concat!("bindgen's ", stringify!($t), ".", stringify!($f), " is not at C's offset"),
            );
        )*
    };
}
c_sizes!(
    sk_buff,
    sk_buff_head,
    net_device,
    netdev_queue,
    napi_struct,
    mutex,
    wait_queue_head_t,
    wait_queue_entry,
    rwlock_t,
    spinlock_t,
    timer_list,
    file,
    file_operations,
    miscdevice,
    net_device_ops,
    ethtool_ops,
    rtnl_link_ops,
    rtnl_link_stats64,
    ethtool_drvinfo,
    ethtool_link_ksettings,
    device_attribute,
    attribute_group,
    notifier_block,
    ifreq,
    sockaddr,
    iovec,
    cpumask,
    ptr_ring,
);

c_offsets!(
    ptr_ring.producer_lock,
    ptr_ring.consumer_lock,
    ptr_ring.size,
    sk_buff.len,
    sk_buff.data_len,
    sk_buff.data,
    sk_buff.truesize,
    net_device.flags,
    net_device.mtu,
    net_device.tx_queue_len,
    net_device.netdev_ops,
    net_device.ethtool_ops,
    net_device.header_ops,
    net_device.hard_header_len,
    net_device.hw_enc_features,
    net_device.features,
    net_device.wanted_features,
    net_device.ifindex,
    net_device.sysfs_groups,
    net_device.addr_len,
    net_device.num_tx_queues,
    net_device.name,
    net_device.rtnl_link_ops,
    napi_struct.skb,
    file.private_data,
);

// The tun part's types (sys/tun/): rust_tun's build only.
#[cfg(rtun_driver = "tun")]
c_sizes!(
    sock,
    socket,
    rtun_sock,
    socket_lock_t,
    proto,
    proto_ops,
    sock_fprog,
    virtio_net_hdr,
    tun_pi,
    rtun_vnet_hdr_tnl,
    msghdr,
    tun_msg_ctl,
    xdp_buff,
);

#[cfg(rtun_driver = "tun")]
c_offsets!(
    sock.sk_socket,
    sock.sk_write_queue,
    sock.sk_sndbuf,
    sock.sk_callback_lock,
    sock.sk_write_space,
    sock.sk_filter,
    socket.file,
    msghdr.msg_iter,
    msghdr.msg_controllen,
    msghdr.msg_flags,
    xdp_buff.data,
    xdp_buff.data_end,
    xdp_buff.data_meta,
    xdp_buff.data_hard_start,
    tun_msg_ctl.ptr,
    socket.ops,
    socket.wq,
    rtun_sock.socket,
    rtun_sock.napi,
    rtun_sock.napi_mutex,
);
