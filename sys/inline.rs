// SPDX-License-Identifier: GPL-2.0

//! C's static inline functions that the hot paths call, written out in Rust
//! where the benchmarks showed that a call through a C shim (`tun_helpers.c`)
//! cost measurably. Each names its C source and says under which
//! configuration it is the same code as C's (for Linux 6.12); where a
//! configuration makes C's version different, the shim is used instead, and
//! one of the test kernels builds and runs that configuration.
//!
//! Fields of C structs are read and written through [`CField`]: an offset
//! and a type whose size `bindings_helper.h` checks against the C field's
//! (`RTUN_FIELD`), at compile time.

use crate::bindings;
use core::ffi::{c_ulong, c_void};
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// A field of the C struct `S`: its offset, and a Rust type `T` of the C
/// field's size. It reads and writes only through pointers to `S`.
pub(super) struct CField<S, T> {
    off: usize,
    _ty: PhantomData<(*const S, T)>,
}

impl<S, T> Clone for CField<S, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, T> Copy for CField<S, T> {}

/// `struct skb_shared_info`, which the bindings do not hold: what
/// [`skb_shinfo`] points to.
pub(super) enum SkbSharedInfo {}

/// `struct netdev_queue`, a transmit queue (an element of `dev->_tx`).
pub(super) enum NetdevQueue {}

/// `struct pcpu_sw_netstats`, a device's per-CPU counters (`dev->tstats`):
/// only ever reached through its per-CPU pointer.
pub(super) enum PcpuSwNetstats {}

impl<S, T: Copy> CField<S, T> {
    /// The field at `off`, of C size `size`: fails to compile (in a `const`)
    /// when `T` is not that size.
    pub(super) const fn new(off: c_ulong, size: c_ulong) -> Self {
        assert!(
            size as usize == core::mem::size_of::<T>(),
            "C field size differs from the Rust type's"
        );
        Self {
            off: off as usize,
            _ty: PhantomData,
        }
    }

    /// Reads the field of the object at `base` (a plain read, as C's).
    ///
    /// # Safety
    ///
    /// `base` is a live object of the field's struct type, and nothing
    /// writes the field concurrently (else use [`CField::read_once`]).
    #[inline(always)]
    pub(super) unsafe fn read(self, base: *const S) -> T {
        // SAFETY: As the caller guarantees; the offset and size are the C
        // field's.
        unsafe { ptr::read(base.cast::<u8>().add(self.off).cast::<T>()) }
    }

    /// `READ_ONCE()` of the field of the object at `base`.
    ///
    /// # Safety
    ///
    /// `base` is a live object of the field's struct type.
    #[inline(always)]
    pub(super) unsafe fn read_once(self, base: *const S) -> T {
        // SAFETY: As the caller guarantees; a volatile read sees some value
        // a writer stored, as READ_ONCE does.
        unsafe { ptr::read_volatile(base.cast::<u8>().add(self.off).cast::<T>()) }
    }

    /// Writes the field of the object at `base`.
    ///
    /// # Safety
    ///
    /// `base` is a live object of the field's struct type that the caller
    /// may write, and `v` keeps it consistent.
    #[inline(always)]
    pub(super) unsafe fn write(self, base: *mut S, v: T) {
        // SAFETY: As the caller guarantees.
        unsafe { ptr::write(base.cast::<u8>().add(self.off).cast::<T>(), v) }
    }

    /// The field's offset in its struct.
    pub(super) const fn offset(self) -> usize {
        self.off
    }

    /// The field's address in the object at `base`.
    ///
    /// # Safety
    ///
    /// `base` is a live object of the field's struct type.
    #[inline(always)]
    pub(super) unsafe fn ptr(self, base: *mut S) -> *mut T {
        // SAFETY: In bounds of the object, as the caller guarantees.
        unsafe { base.cast::<u8>().add(self.off).cast::<T>() }
    }
}

/// Declares `CField` constants from `bindings_helper.h`'s `RTUN_FIELD`s.
macro_rules! c_fields {
    ($($name:ident: $s:ty => $ty:ty = $off:ident, $size:ident;)*) => {
        $(pub(super) const $name: CField<$s, $ty> = CField::new(bindings::$off, bindings::$size);)*
    };
}

c_fields! {
    SKB_LEN: bindings::sk_buff => u32 = RTUN_SKB_LEN, RTUN_SKB_LEN_SIZE;
    SKB_DATA_LEN: bindings::sk_buff => u32 = RTUN_SKB_DATA_LEN, RTUN_SKB_DATA_LEN_SIZE;
    SKB_DATA: bindings::sk_buff => *mut u8 = RTUN_SKB_DATA, RTUN_SKB_DATA_SIZE;
    SKB_HEAD: bindings::sk_buff => *mut u8 = RTUN_SKB_HEAD, RTUN_SKB_HEAD_SIZE;
    // `sk_buff_data_t`: an offset from `head` on 64-bit.
    SKB_END: bindings::sk_buff => u32 = RTUN_SKB_END, RTUN_SKB_END_SIZE;
    SKB_DESTRUCTOR: bindings::sk_buff => *const c_void = RTUN_SKB_DESTRUCTOR, RTUN_SKB_DESTRUCTOR_SIZE;
    SKB_QUEUE_MAPPING: bindings::sk_buff => u16 = RTUN_SKB_QUEUE_MAPPING, RTUN_SKB_QUEUE_MAPPING_SIZE;
    // `__be16`, kept in network byte order.
    SKB_PROTOCOL: bindings::sk_buff => u16 = RTUN_SKB_PROTOCOL, RTUN_SKB_PROTOCOL_SIZE;
    SKB_DEV: bindings::sk_buff => *mut bindings::net_device = RTUN_SKB_DEV, RTUN_SKB_DEV_SIZE;
    SHINFO_FLAGS: SkbSharedInfo => u8 = RTUN_SHINFO_FLAGS, RTUN_SHINFO_FLAGS_SIZE;
    SHINFO_TX_FLAGS: SkbSharedInfo => u8 = RTUN_SHINFO_TX_FLAGS, RTUN_SHINFO_TX_FLAGS_SIZE;
    IOV_ITER_COUNT: bindings::iov_iter => usize = RTUN_IOV_ITER_COUNT, RTUN_IOV_ITER_COUNT_SIZE;
    WQ_HEAD_NEXT: bindings::wait_queue_head => *mut c_void = RTUN_WQ_HEAD_NEXT, RTUN_WQ_HEAD_NEXT_SIZE;
    NETDEV_TX_QUEUE_LEN: bindings::net_device => u32 = RTUN_NETDEV_TX_QUEUE_LEN, RTUN_NETDEV_TX_QUEUE_LEN_SIZE;
    NETDEV_FLAGS: bindings::net_device => u32 = RTUN_NETDEV_FLAGS, RTUN_NETDEV_FLAGS_SIZE;
    NETDEV_REG_STATE: bindings::net_device => u8 = RTUN_NETDEV_REG_STATE, RTUN_NETDEV_REG_STATE_SIZE;
    NETDEV_NAME: bindings::net_device => [u8; 16] = RTUN_NETDEV_NAME, RTUN_NETDEV_NAME_SIZE;
    NETDEV_TYPE: bindings::net_device => u16 = RTUN_NETDEV_TYPE, RTUN_NETDEV_TYPE_SIZE;
    NETDEV_ADDR_LEN: bindings::net_device => u8 = RTUN_NETDEV_ADDR_LEN, RTUN_NETDEV_ADDR_LEN_SIZE;
    NETDEV_IFINDEX: bindings::net_device => i32 = RTUN_NETDEV_IFINDEX, RTUN_NETDEV_IFINDEX_SIZE;
    NETDEV_FEATURES: bindings::net_device => u64 = RTUN_NETDEV_FEATURES, RTUN_NETDEV_FEATURES_SIZE;
    NETDEV_HW_FEATURES: bindings::net_device => u64 = RTUN_NETDEV_HW_FEATURES, RTUN_NETDEV_HW_FEATURES_SIZE;
    NETDEV_WANTED_FEATURES: bindings::net_device => u64 =
        RTUN_NETDEV_WANTED_FEATURES, RTUN_NETDEV_WANTED_FEATURES_SIZE;
    NETDEV_VLAN_FEATURES: bindings::net_device => u64 = RTUN_NETDEV_VLAN_FEATURES, RTUN_NETDEV_VLAN_FEATURES_SIZE;
    NETDEV_TX: bindings::net_device => *mut NetdevQueue = RTUN_NETDEV_TX, RTUN_NETDEV_TX_SIZE;
    NETDEV_QUEUE_TRANS_START: NetdevQueue => u64 = RTUN_NETDEV_QUEUE_TRANS_START, RTUN_NETDEV_QUEUE_TRANS_START_SIZE;
    SPINLOCK_LOCKED: kernel::bindings::spinlock_t => u8 = RTUN_SPINLOCK_LOCKED, RTUN_SPINLOCK_LOCKED_SIZE;
    // `struct pcpu_sw_netstats __percpu *`.
    NETDEV_TSTATS: bindings::net_device => *mut PcpuSwNetstats = RTUN_NETDEV_TSTATS, RTUN_NETDEV_TSTATS_SIZE;
    // `u64_stats_t`: a `local64_t` on 64-bit.
    SW_NETSTATS_RX_PACKETS: PcpuSwNetstats => u64 = RTUN_SW_NETSTATS_RX_PACKETS, RTUN_SW_NETSTATS_RX_PACKETS_SIZE;
    SW_NETSTATS_RX_BYTES: PcpuSwNetstats => u64 = RTUN_SW_NETSTATS_RX_BYTES, RTUN_SW_NETSTATS_RX_BYTES_SIZE;
    SW_NETSTATS_TX_PACKETS: PcpuSwNetstats => u64 = RTUN_SW_NETSTATS_TX_PACKETS, RTUN_SW_NETSTATS_TX_PACKETS_SIZE;
    SW_NETSTATS_TX_BYTES: PcpuSwNetstats => u64 = RTUN_SW_NETSTATS_TX_BYTES, RTUN_SW_NETSTATS_TX_BYTES_SIZE;
    SOCK_FILTER: bindings::sock => *const c_void = RTUN_SOCK_FILTER, RTUN_SOCK_FILTER_SIZE;
    SOCK_WQ: bindings::sock => *mut bindings::wait_queue_head = RTUN_SOCK_WQ, RTUN_SOCK_WQ_SIZE;
    SOCK_SNDBUF: bindings::sock => i32 = RTUN_SOCK_SNDBUF, RTUN_SOCK_SNDBUF_SIZE;
    SOCK_WMEM_ALLOC: bindings::sock => i32 = RTUN_SOCK_WMEM_ALLOC, RTUN_SOCK_WMEM_ALLOC_SIZE;
    SKB_VLAN_ALL: bindings::sk_buff => u32 = RTUN_SKB_VLAN_ALL, RTUN_SKB_VLAN_ALL_SIZE;
    // `__be16`, kept in network byte order.
    SKB_VLAN_PROTO: bindings::sk_buff => u16 = RTUN_SKB_VLAN_PROTO, RTUN_SKB_VLAN_PROTO_SIZE;
    SKB_VLAN_TCI: bindings::sk_buff => u16 = RTUN_SKB_VLAN_TCI, RTUN_SKB_VLAN_TCI_SIZE;
    SKB_CSUM_START: bindings::sk_buff => u16 = RTUN_SKB_CSUM_START, RTUN_SKB_CSUM_START_SIZE;
    SKB_NEXT: bindings::sk_buff => *mut bindings::sk_buff = RTUN_SKB_NEXT, RTUN_SKB_NEXT_SIZE;
    SKB_PREV: bindings::sk_buff => *mut bindings::sk_buff = RTUN_SKB_PREV, RTUN_SKB_PREV_SIZE;
    SKB_HEAD_QLEN: bindings::sk_buff_head => u32 = RTUN_SKB_HEAD_QLEN, RTUN_SKB_HEAD_QLEN_SIZE;
    SKB_HEAD_LOCK: bindings::sk_buff_head => kernel::bindings::spinlock_t = RTUN_SKB_HEAD_LOCK, RTUN_SKB_HEAD_LOCK_SIZE;
    SOCK_WRITE_QUEUE: bindings::sock => bindings::sk_buff_head = RTUN_SOCK_WRITE_QUEUE, RTUN_SOCK_WRITE_QUEUE_SIZE;
    RTUN_SOCK_NAPI: bindings::rtun_sock => bindings::napi_struct = RTUN_RTUN_SOCK_NAPI, RTUN_RTUN_SOCK_NAPI_SIZE;
    // `sk_buff_data_t`: an offset from `head` on 64-bit.
    SKB_TAIL: bindings::sk_buff => u32 = RTUN_SKB_TAIL, RTUN_SKB_TAIL_SIZE;
    SKB_MAC_HEADER: bindings::sk_buff => u16 = RTUN_SKB_MAC_HEADER, RTUN_SKB_MAC_HEADER_SIZE;
    SKB_NETWORK_HEADER: bindings::sk_buff => u16 = RTUN_SKB_NETWORK_HEADER, RTUN_SKB_NETWORK_HEADER_SIZE;
    SKB_TRANSPORT_HEADER: bindings::sk_buff => u16 = RTUN_SKB_TRANSPORT_HEADER, RTUN_SKB_TRANSPORT_HEADER_SIZE;
    PCPU_HOT_PREEMPT_COUNT: bindings::pcpu_hot => i32 = RTUN_PCPU_HOT_PREEMPT_COUNT, RTUN_PCPU_HOT_PREEMPT_COUNT_SIZE;
    SKB_CSUM_OFFSET: bindings::sk_buff => u16 = RTUN_SKB_CSUM_OFFSET, RTUN_SKB_CSUM_OFFSET_SIZE;
    SHINFO_GSO_SIZE: SkbSharedInfo => u16 = RTUN_SHINFO_GSO_SIZE, RTUN_SHINFO_GSO_SIZE_SIZE;
    SHINFO_GSO_TYPE: SkbSharedInfo => u32 = RTUN_SHINFO_GSO_TYPE, RTUN_SHINFO_GSO_TYPE_SIZE;
    NETDEV_PRIV: bindings::net_device => u8 = RTUN_NETDEV_PRIV, RTUN_NETDEV_PRIV_SIZE;
    PCPU_HOT_CPU_NUMBER: bindings::pcpu_hot => u32 = RTUN_PCPU_HOT_CPU_NUMBER, RTUN_PCPU_HOT_CPU_NUMBER_SIZE;
    NET_HOTDATA_RPS_SOCK_FLOW_TABLE: bindings::net_hotdata => *mut bindings::rps_sock_flow_table =
        RTUN_NET_HOTDATA_RPS_SOCK_FLOW_TABLE, RTUN_NET_HOTDATA_RPS_SOCK_FLOW_TABLE_SIZE;
    NET_HOTDATA_RPS_CPU_MASK: bindings::net_hotdata => u32 = RTUN_NET_HOTDATA_RPS_CPU_MASK, RTUN_NET_HOTDATA_RPS_CPU_MASK_SIZE;
}

#[cfg(all(CONFIG_PCPU_DEV_REFCNT, not(CONFIG_NET_DEV_REFCNT_TRACKER)))]
c_fields! {
    NETDEV_PCPU_REFCNT: bindings::net_device => *mut i32 = RTUN_NETDEV_PCPU_REFCNT, RTUN_NETDEV_PCPU_REFCNT_SIZE;
}

// Misuses that must not compile (`scripts/compile-fail.sh`): a field read
// through a pointer to another struct, and a field declared with a Rust type
// of another size than C's.
#[cfg(rtun_compile_fail = "cfield_of_other_struct")]
fn cfield_of_other_struct(dev: *const bindings::net_device) -> u32 {
    // SAFETY: Never compiled.
    unsafe { SKB_LEN.read(dev) }
}
#[cfg(rtun_compile_fail = "cfield_of_other_size")]
c_fields! {
    SKB_LEN_AS_U64: bindings::sk_buff => u64 = RTUN_SKB_LEN, RTUN_SKB_LEN_SIZE;
}
#[cfg(rtun_compile_fail = "cfield_of_other_size")]
fn cfield_of_other_size(skb: *const bindings::sk_buff) -> u64 {
    // SAFETY: Never compiled.
    unsafe { SKB_LEN_AS_U64.read(skb) }
}

// Every function below that reads such a field goes through these; the
// constants are checked where they are defined.

/// `netdev_priv()` (include/linux/netdevice.h): `dev->priv`, the private
/// area's address. Same as C in every configuration.
///
/// # Safety
///
/// `dev` is a live net device.
#[inline(always)]
pub(super) unsafe fn netdev_priv(dev: *mut bindings::net_device) -> *mut u8 {
    // SAFETY: As the caller guarantees.
    unsafe { NETDEV_PRIV.ptr(dev) }
}

/// `dev_hold()`/`dev_put()` (include/linux/netdevice.h) with
/// `CONFIG_PCPU_DEV_REFCNT` and without `CONFIG_NET_DEV_REFCNT_TRACKER`:
/// `this_cpu_inc/dec(*dev->pcpu_refcnt)`, one `%gs`-relative instruction.
/// Otherwise (the debug kernel's tracker) the C shims.
///
/// # Safety
///
/// `dev` is a live net device; for a decrement, the caller owns a reference.
#[inline(always)]
pub(super) unsafe fn dev_refcnt_add<const INC: bool>(dev: *mut bindings::net_device) {
    #[cfg(all(CONFIG_PCPU_DEV_REFCNT, not(CONFIG_NET_DEV_REFCNT_TRACKER)))]
    // SAFETY: `pcpu_refcnt` is the device's `int __percpu *`, valid while the
    // device is; per-CPU pointers are offsets from %gs on x86_64.
    unsafe {
        let pcpu = NETDEV_PCPU_REFCNT.read(dev);
        if INC {
            ::core::arch::asm!("incl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
        } else {
            ::core::arch::asm!("decl %gs:({0})", in(reg) pcpu, options(att_syntax, nostack));
        }
    }
    #[cfg(not(all(CONFIG_PCPU_DEV_REFCNT, not(CONFIG_NET_DEV_REFCNT_TRACKER))))]
    // SAFETY: As the caller guarantees.
    unsafe {
        if INC {
            bindings::rtun_dev_hold(dev)
        } else {
            bindings::rtun_dev_put(dev)
        }
    }
}

/// `this_cpu_add()` of a `u64` (arch/x86/include/asm/percpu.h): one
/// `%gs`-relative `addq`, safe from preemption and interrupts on this CPU.
///
/// # Safety
///
/// `pcpu` is a live per-CPU `u64` (a `__percpu` address: an offset from
/// `%gs` on x86_64) that only `this_cpu` operations write.
#[inline(always)]
pub(super) unsafe fn this_cpu_add_u64(pcpu: *mut u64, v: u64) {
    // SAFETY: As the caller guarantees.
    unsafe {
        ::core::arch::asm!("addq {1}, %gs:({0})", in(reg) pcpu, in(reg) v, options(att_syntax, nostack))
    };
}

/// `this_cpu_inc()` of a `u64`: one `%gs`-relative `incq` (as C's
/// `this_cpu_add()` of a constant 1 is; an add of a register would first
/// load the 1 into it).
///
/// # Safety
///
/// As [`this_cpu_add_u64`].
#[inline(always)]
pub(super) unsafe fn this_cpu_inc_u64(pcpu: *mut u64) {
    // SAFETY: As the caller guarantees.
    unsafe { ::core::arch::asm!("incq %gs:({0})", in(reg) pcpu, options(att_syntax, nostack)) };
}

/// `dev_sw_netstats_rx_add()`/`dev_sw_netstats_tx_add()`
/// (include/linux/netdevice.h) on 64-bit, where `u64_stats_sync` is empty
/// (checked in `bindings_helper.h`) and `u64_stats_add()` is
/// `local64_add()` on `this_cpu_ptr(dev->tstats)`'s field: here the same
/// add as one `this_cpu_add()`, which also cannot straddle a migration
/// (C's reads `this_cpu_off`, then adds; tun.c disables preemption around
/// it). Does nothing on a device without per-CPU counters (before
/// registration allocates them).
///
/// # Safety
///
/// `dev` is a live net device whose `pcpu_stat_type` is
/// `NETDEV_PCPU_STAT_TSTATS`, and the caller holds a reference or runs in
/// one of its callbacks (the counters are freed only after the last
/// reference goes).
#[inline(always)]
pub(super) unsafe fn dev_sw_netstats_add(
    dev: *mut bindings::net_device,
    packets_field: CField<PcpuSwNetstats, u64>,
    (bytes_field, bytes): (CField<PcpuSwNetstats, u64>, u64),
) {
    // SAFETY: As the caller guarantees; `tstats` is the device's per-CPU
    // `pcpu_sw_netstats`, written only by `this_cpu` operations. (Two
    // straight calls: a loop over an array goes through `core`'s iterator
    // functions, out of line, at about 25 instructions a step.)
    unsafe {
        let tstats = NETDEV_TSTATS.read(dev);
        if tstats.is_null() {
            return;
        }
        this_cpu_add_u64(bytes_field.ptr(tstats), bytes);
        this_cpu_inc_u64(packets_field.ptr(tstats));
    }
}

/// `skb_record_rx_queue()` (include/linux/skbuff.h): `skb->queue_mapping =
/// rx_queue + 1`. Same as C in every configuration.
///
/// # Safety
///
/// `skb` is an skb the caller owns.
#[inline(always)]
pub(super) unsafe fn skb_record_rx_queue(skb: *mut bindings::sk_buff, queue: u16) {
    // SAFETY: As the caller guarantees.
    unsafe { SKB_QUEUE_MAPPING.write(skb, queue.wrapping_add(1)) }
}

/// `skb->ip_summed`: two bits of the byte at `__pkt_type_offset`, at
/// `RTUN_SKB_IP_SUMMED_SHIFT` (which [`check_skb_layout`] checks against
/// clang's layout when the module loads). Same as C in every configuration.
///
/// # Safety
///
/// `skb` is a live skb the caller owns.
#[inline(always)]
unsafe fn skb_ip_summed(skb: *const bindings::sk_buff) -> u32 {
    // SAFETY: As the caller guarantees; the byte is inside the skb.
    let b = unsafe {
        *skb.cast::<u8>()
            .add(bindings::RTUN_SKB_PKT_TYPE_OFFSET as usize)
    };
    u32::from(b >> bindings::RTUN_SKB_IP_SUMMED_SHIFT) & 3
}

/// The `headers` group of `struct sk_buff` as bindgen laid it out from
/// clang's view of the C (the same size, or this fails to compile).
type SkbHeaders = bindings::sk_buff__bindgen_ty_4__bindgen_ty_2;
const _: () =
    assert!(core::mem::size_of::<SkbHeaders>() == bindings::RTUN_SKB_HEADERS_SIZE as usize);

/// Checks, when the module loads, the one bitfield place the module
/// assumes rather than reads from C (`skb_ip_summed`'s): bindgen's accessor,
/// which knows clang's layout, sets `ip_summed` in a zeroed `headers`
/// group, and the byte at `__pkt_type_offset` must hold it at our shift.
pub(crate) fn check_skb_layout() -> Result {
    let mut h = SkbHeaders::default();
    h.set_ip_summed(3);
    let at = (bindings::RTUN_SKB_PKT_TYPE_OFFSET - bindings::RTUN_SKB_HEADERS) as usize;
    let bytes = core::ptr::from_ref(&h).cast::<u8>();
    // SAFETY: `at` is inside the group (`__pkt_type_offset` is one of its
    // members), and `h` is initialised.
    let b = unsafe { *bytes.add(at) };
    if b == 3 << bindings::RTUN_SKB_IP_SUMMED_SHIFT {
        Ok(())
    } else {
        pr_err!("skb->ip_summed is not where sys/inline.rs reads it ({b:#x})\n");
        Err(EINVAL)
    }
}

/// `virtio_net_hdr_from_skb()` (include/linux/virtio_net.h) for a
/// little-endian header (x86_64: tun's header is little-endian with or
/// without `TUNSETVNETLE`, and `TUNSETVNETBE` is refused) with
/// `has_data_valid`, as `tun_put_user()` calls it: the GSO type and size
/// (`hdr_len` is the linear part, a hint), `NEEDS_CSUM` with the checksum's
/// start (plus `vlan_hlen`, the tag put back in the frame) and offset, or
/// `DATA_VALID`. `None` for a GSO type the header cannot express. Same as
/// C in every configuration (the function has no configuration-dependent
/// part); the arithmetic truncates to 16 bits as `__cpu_to_virtio16()`.
///
/// # Safety
///
/// `skb` is a live skb the caller owns.
#[inline(always)]
pub(super) unsafe fn virtio_net_hdr_from_skb(
    skb: *const bindings::sk_buff,
    vlan_hlen: u16,
) -> Option<bindings::virtio_net_hdr> {
    // `memset(hdr, 0, sizeof(*hdr))`: no info leak.
    let mut hdr = bindings::virtio_net_hdr::default();
    // SAFETY: A live skb (the caller's), read as C's inline function reads
    // it; its shared info is `skb_shinfo()`'s.
    unsafe {
        let shinfo = skb_shinfo(skb);
        let gso_size = SHINFO_GSO_SIZE.read(shinfo);
        // `skb_is_gso()`.
        if gso_size != 0 {
            let gso_type = SHINFO_GSO_TYPE.read(shinfo);
            // `skb_headlen()`.
            hdr.hdr_len = (SKB_LEN.read(skb).wrapping_sub(SKB_DATA_LEN.read(skb)) as u16).to_le();
            hdr.gso_size = gso_size.to_le();
            hdr.gso_type = if gso_type & bindings::RTUN_SKB_GSO_TCPV4 != 0 {
                bindings::VIRTIO_NET_HDR_GSO_TCPV4
            } else if gso_type & bindings::RTUN_SKB_GSO_TCPV6 != 0 {
                bindings::VIRTIO_NET_HDR_GSO_TCPV6
            } else if gso_type & bindings::RTUN_SKB_GSO_UDP_L4 != 0 {
                bindings::VIRTIO_NET_HDR_GSO_UDP_L4
            } else {
                return None;
            } as u8;
            if gso_type & bindings::RTUN_SKB_GSO_TCP_ECN != 0 {
                hdr.gso_type |= bindings::VIRTIO_NET_HDR_GSO_ECN as u8;
            }
        }
        let ip_summed = skb_ip_summed(skb);
        if ip_summed == bindings::RTUN_CHECKSUM_PARTIAL {
            hdr.flags = bindings::VIRTIO_NET_HDR_F_NEEDS_CSUM as u8;
            // `skb_checksum_start_offset()`: from the start of the data.
            let headroom = skb_headroom(skb);
            let start = u32::from(SKB_CSUM_START.read(skb))
                .wrapping_sub(headroom)
                .wrapping_add(u32::from(vlan_hlen));
            hdr.csum_start = (start as u16).to_le();
            hdr.csum_offset = SKB_CSUM_OFFSET.read(skb).to_le();
        } else if ip_summed == bindings::RTUN_CHECKSUM_UNNECESSARY {
            hdr.flags = bindings::VIRTIO_NET_HDR_F_DATA_VALID as u8;
        }
    }
    Some(hdr)
}

/// `skb_shinfo(skb)` (include/linux/skbuff.h): `skb->head + skb->end`, with
/// `NET_SKBUFF_DATA_USES_OFFSET` (always on 64-bit).
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
pub(super) unsafe fn skb_shinfo(skb: *const bindings::sk_buff) -> *const SkbSharedInfo {
    // SAFETY: As the caller guarantees; `head + end` is the skb's
    // `skb_shared_info`.
    unsafe { SKB_HEAD.read(skb).add(SKB_END.read(skb) as usize).cast() }
}

/// `skb_zcopy()` (include/linux/skbuff.h) as a test: whether the skb
/// carries zerocopy pages (`SKBFL_ZEROCOPY_ENABLE` in its shared info's
/// flags). Same as C in every configuration.
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
pub(super) unsafe fn skb_zcopy(skb: *const bindings::sk_buff) -> bool {
    // SAFETY: As the caller guarantees.
    let flags = unsafe { SHINFO_FLAGS.read(skb_shinfo(skb)) };
    flags & bindings::RTUN_SKBFL_ZEROCOPY_ENABLE as u8 != 0
}

/// The test in `skb_tx_timestamp()` (include/linux/skbuff.h): whether the
/// sender asked for a software transmit timestamp (`SKBTX_SW_TSTAMP`).
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
pub(super) unsafe fn skb_wants_sw_tstamp(skb: *const bindings::sk_buff) -> bool {
    // SAFETY: As the caller guarantees.
    let flags = unsafe { SHINFO_TX_FLAGS.read(skb_shinfo(skb)) };
    flags & bindings::RTUN_SKBTX_SW_TSTAMP as u8 != 0
}

/// The test in `skb_orphan()` (include/linux/skbuff.h): whether the skb
/// has a destructor (only then is there an owner to release).
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
pub(super) unsafe fn skb_has_destructor(skb: *const bindings::sk_buff) -> bool {
    // SAFETY: As the caller guarantees.
    unsafe { !SKB_DESTRUCTOR.read(skb).is_null() }
}

/// `consume_skb()` (include/linux/skbuff.h, net/core/skbuff.c): without
/// `CONFIG_TRACEPOINTS` C's is the inline `kfree_skb()`, that is
/// `sk_skb_reason_drop(NULL, skb, SKB_DROP_REASON_NOT_SPECIFIED)`; with them
/// (the debug kernel) the exported function.
///
/// # Safety
///
/// The caller owns `skb` and gives it up.
#[inline(always)]
pub(super) unsafe fn consume_skb(skb: *mut bindings::sk_buff) {
    #[cfg(CONFIG_TRACEPOINTS)]
    // SAFETY: As the caller guarantees.
    unsafe {
        bindings::consume_skb(skb)
    };
    #[cfg(not(CONFIG_TRACEPOINTS))]
    // SAFETY: As the caller guarantees.
    unsafe {
        bindings::sk_skb_reason_drop(
            ptr::null_mut(),
            skb,
            bindings::RTUN_SKB_DROP_REASON_NOT_SPECIFIED,
        )
    };
}

/// `iov_iter_count()` (include/linux/uio.h): `i->count`. Same as C in every
/// configuration.
///
/// # Safety
///
/// `i` is a live iterator.
#[inline(always)]
pub(super) unsafe fn iov_iter_count(i: *const bindings::iov_iter) -> usize {
    // SAFETY: As the caller guarantees.
    unsafe { IOV_ITER_COUNT.read(i) }
}

/// `copy_from_iter_full()` (include/linux/uio.h): `_copy_from_iter()`, and
/// on a short copy `iov_iter_revert()` and failure. Same as C with
/// `!CONFIG_HARDENED_USERCOPY` (its object-size check is compile-time
/// only here); the test kernels do not set it.
///
/// # Safety
///
/// `buf` is valid for `len` bytes of writes, `i` a live iterator.
#[inline(always)]
pub(super) unsafe fn copy_from_iter_full(
    buf: *mut u8,
    len: usize,
    i: *mut bindings::iov_iter,
) -> bool {
    // SAFETY: As the caller guarantees.
    let copied = unsafe { bindings::_copy_from_iter(buf.cast(), len, i) };
    if copied == len {
        return true;
    }
    // SAFETY: Gives back what was consumed.
    unsafe { bindings::iov_iter_revert(i, copied) };
    false
}

/// `copy_to_iter()` (include/linux/uio.h): `_copy_to_iter()`. Same as C
/// with `!CONFIG_HARDENED_USERCOPY`, as `copy_from_iter_full()` above.
///
/// # Safety
///
/// `buf` is valid for `len` bytes of reads, `i` a live iterator.
#[inline(always)]
pub(super) unsafe fn copy_to_iter(buf: *const u8, len: usize, i: *mut bindings::iov_iter) -> usize {
    // SAFETY: As the caller guarantees.
    unsafe { bindings::_copy_to_iter(buf.cast(), len, i) }
}

/// `jiffies` (include/linux/jiffies.h): a volatile read of the exported
/// counter, as C's. Same in every configuration.
#[inline(always)]
pub(super) fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a live, exported `volatile unsigned long`.
    unsafe { ptr::read_volatile(ptr::addr_of!(bindings::jiffies)) as u64 }
}

/// Whether `rcu_read_lock()`/`rcu_read_unlock()` (include/linux/rcupdate.h)
/// are only compiler barriers here: without `CONFIG_PREEMPT_RCU`,
/// `CONFIG_PREEMPT_COUNT` and `CONFIG_DEBUG_LOCK_ALLOC` they reduce to
/// `preempt_disable()`/`preempt_enable()`, which are `barrier()`. Otherwise
/// (the debug kernel) the C shims.
pub(super) const RCU_READ_LOCK_IS_BARRIER: bool = cfg!(all(
    not(CONFIG_PREEMPT_RCU),
    not(CONFIG_PREEMPT_COUNT),
    not(CONFIG_DEBUG_LOCK_ALLOC)
));

/// `rcu_read_lock()`.
#[inline(always)]
pub(super) fn rcu_read_lock() {
    if RCU_READ_LOCK_IS_BARRIER {
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        // SAFETY: Always allowed; the caller balances it.
        unsafe { bindings::rtun_rcu_read_lock() };
    }
}

/// `rcu_read_unlock()`.
///
/// # Safety
///
/// Balances an earlier [`rcu_read_lock`] of this context.
#[inline(always)]
pub(super) unsafe fn rcu_read_unlock() {
    if RCU_READ_LOCK_IS_BARRIER {
        core::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        // SAFETY: As the caller guarantees.
        unsafe { bindings::rtun_rcu_read_unlock() };
    }
}

/// `raw_smp_processor_id()` (arch/x86/include/asm/smp.h): on x86_64 SMP
/// (the only configuration the module builds for), `this_cpu_read(
/// pcpu_hot.cpu_number)`, the `movl %gs:...` C emits.
#[inline(always)]
pub(super) fn raw_smp_processor_id() -> u32 {
    let cpu: u32;
    // SAFETY: `pcpu_hot` is a per-CPU variable, zero-based on x86_64 SMP and
    // addressed through %gs. It only reads.
    unsafe {
        ::core::arch::asm!(
            "movl %gs:{hot}+{off}, {cpu:e}",
            hot = sym bindings::pcpu_hot,
            off = const bindings::RTUN_PCPU_HOT_CPU_NUMBER,
            cpu = out(reg) cpu,
            options(att_syntax, nostack, readonly, preserves_flags),
        )
    };
    // The constant above is checked as a `CField` too.
    let _ = PCPU_HOT_CPU_NUMBER;
    cpu
}

/// Whether `local_bh_disable()` (include/linux/bottom_half.h) is C's
/// inline `preempt_count_add(SOFTIRQ_DISABLE_OFFSET)` and that the raw
/// `__preempt_count_add()`: not on `PREEMPT_RT`, without irq-flag tracing
/// (lockdep), preempt debugging or the preempt tracer. Otherwise (the debug
/// kernel) the C shims.
const LOCAL_BH_IS_PREEMPT_ADD: bool = cfg!(all(
    not(CONFIG_PREEMPT_RT),
    not(CONFIG_TRACE_IRQFLAGS),
    not(CONFIG_DEBUG_PREEMPT),
    not(CONFIG_TRACE_PREEMPT_TOGGLE)
));

/// `local_bh_disable()`: the `addl` to `pcpu_hot.preempt_count` C emits
/// (x86_64 6.12's `__preempt_count`), then a compiler barrier.
///
/// # Safety
///
/// The caller balances it with [`local_bh_enable`] in the same context.
#[inline(always)]
pub(super) unsafe fn local_bh_disable() {
    if LOCAL_BH_IS_PREEMPT_ADD {
        // SAFETY: `pcpu_hot` is a per-CPU variable addressed through %gs;
        // the add is one instruction, so it cannot straddle a migration.
        unsafe {
            ::core::arch::asm!(
                "addl ${cnt}, %gs:{hot}+{off}",
                cnt = const bindings::RTUN_SOFTIRQ_DISABLE_OFFSET,
                hot = sym bindings::pcpu_hot,
                off = const bindings::RTUN_PCPU_HOT_PREEMPT_COUNT,
                options(att_syntax, nostack),
            )
        };
        // The constant above is checked as a `CField` too.
        let _ = PCPU_HOT_PREEMPT_COUNT;
    } else {
        // SAFETY: As the caller guarantees.
        unsafe { bindings::rtun_local_bh_disable() };
    }
}

/// `local_bh_enable()`: C's is a call of `__local_bh_enable_ip(_THIS_IP_,
/// SOFTIRQ_DISABLE_OFFSET)` (which runs pending softirqs); the address is
/// only used by irq-flag tracing, which this path excludes, so 0 is passed.
///
/// # Safety
///
/// Balances an earlier [`local_bh_disable`] of this context.
#[inline(always)]
pub(super) unsafe fn local_bh_enable() {
    if LOCAL_BH_IS_PREEMPT_ADD {
        // SAFETY: As the caller guarantees.
        unsafe { bindings::__local_bh_enable_ip(0, bindings::RTUN_SOFTIRQ_DISABLE_OFFSET) };
    } else {
        // SAFETY: As the caller guarantees.
        unsafe { bindings::rtun_local_bh_enable() };
    }
}

/// `skb_reserve()` (include/linux/skbuff.h): `data` and `tail` move on by
/// `len`. Same as C in every configuration.
///
/// # Safety
///
/// `skb` is a fresh skb of the caller's with `len` bytes of headroom to
/// give.
#[inline(always)]
pub(super) unsafe fn skb_reserve(skb: *mut bindings::sk_buff, len: u32) {
    // SAFETY: As the caller guarantees.
    unsafe {
        SKB_DATA.write(skb, SKB_DATA.read(skb).add(len as usize));
        SKB_TAIL.write(skb, SKB_TAIL.read(skb).wrapping_add(len));
    }
}

/// `skb_headroom()` (include/linux/skbuff.h): `skb->data - skb->head`,
/// also the offset `skb_reset_*_header()` store. Same as C in every
/// configuration.
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
unsafe fn skb_headroom(skb: *const bindings::sk_buff) -> u32 {
    // SAFETY: As the caller guarantees: `data` points into `head`'s buffer.
    unsafe { SKB_DATA.read(skb).offset_from(SKB_HEAD.read(skb)) as u32 }
}

/// `skb_reset_mac_header()` and `skb_reset_network_header()`
/// (include/linux/skbuff.h): the header starts at `data`. Without
/// `CONFIG_DEBUG_NET` (whose range check the network header has) C's
/// inline functions are exactly these stores; with it, the shims.
///
/// # Safety
///
/// `skb` is an skb the caller owns.
#[inline(always)]
pub(super) unsafe fn skb_reset_mac_network_header<const MAC: bool, const NETWORK: bool>(
    skb: *mut bindings::sk_buff,
) {
    // SAFETY: As the caller guarantees.
    unsafe {
        if cfg!(CONFIG_DEBUG_NET) {
            if MAC {
                bindings::rtun_skb_reset_mac_header(skb);
            }
            if NETWORK {
                bindings::rtun_skb_reset_network_header(skb);
            }
        } else {
            let off = skb_headroom(skb) as u16;
            if MAC {
                SKB_MAC_HEADER.write(skb, off);
            }
            if NETWORK {
                SKB_NETWORK_HEADER.write(skb, off);
            }
        }
    }
}

/// `skb_probe_transport_header()` (include/linux/skbuff.h): nothing when
/// the transport header is set (`skb_transport_header_was_set()`, inline
/// here as in C: a virtio-net header with a checksum sets it), else the
/// shim, which dissects the packet. Same as C in every configuration.
///
/// # Safety
///
/// `skb` is an skb the caller owns.
#[inline(always)]
pub(super) unsafe fn skb_probe_transport_header(skb: *mut bindings::sk_buff) {
    // SAFETY: As the caller guarantees.
    unsafe {
        if SKB_TRANSPORT_HEADER.read(skb) == u16::MAX {
            bindings::rtun_skb_probe_transport_header(skb);
        }
    }
}

/// skb lists (`struct sk_buff_head`, include/linux/skbuff.h): circular
/// through the head, whose `next`/`prev` sit where an skb's do (checked in
/// `bindings_helper.h`), so the head is linked as if it were an skb. These
/// are C's inline list functions, the same in every configuration (C's
/// `WRITE_ONCE`s are volatile stores here); locking is the caller's.
pub(super) mod skb_list {
    use super::{SKB_HEAD_LOCK, SKB_HEAD_QLEN, SKB_NEXT, SKB_PREV};
    use crate::bindings;
    use core::ptr;

    type Head = bindings::sk_buff_head;
    type Skb = bindings::sk_buff;

    /// The head as a list node.
    fn node(list: *mut Head) -> *mut Skb {
        list.cast()
    }

    /// `__skb_queue_head_init()`: empty (the lock is left alone).
    ///
    /// # Safety
    ///
    /// `list` is writable and not in use.
    #[inline(always)]
    pub(crate) unsafe fn head_init(list: *mut Head) {
        // SAFETY: As the caller guarantees.
        unsafe {
            SKB_NEXT.write(node(list), node(list));
            SKB_PREV.write(node(list), node(list));
            SKB_HEAD_QLEN.write(list, 0);
        }
    }

    /// `skb_queue_len()`.
    ///
    /// # Safety
    ///
    /// `list` is an initialised list.
    #[inline(always)]
    pub(crate) unsafe fn len(list: *const Head) -> u32 {
        // SAFETY: As the caller guarantees.
        unsafe { SKB_HEAD_QLEN.read(list) }
    }

    /// `skb_queue_empty()`.
    ///
    /// # Safety
    ///
    /// `list` is an initialised list.
    #[inline(always)]
    pub(crate) unsafe fn is_empty(list: *const Head) -> bool {
        // SAFETY: As the caller guarantees.
        unsafe { SKB_NEXT.read(list.cast()) == node(list.cast_mut()) }
    }

    /// `__skb_queue_tail()` (`__skb_insert()` before the head).
    ///
    /// # Safety
    ///
    /// `list` is an initialised list the caller has locked (or owns);
    /// `skb` is the caller's and on no list; the list takes it.
    #[inline(always)]
    pub(crate) unsafe fn queue_tail(list: *mut Head, skb: *mut Skb) {
        // SAFETY: As the caller guarantees.
        unsafe {
            let next = node(list);
            let prev = SKB_PREV.read(next);
            ptr::write_volatile(SKB_NEXT.ptr(skb), next);
            ptr::write_volatile(SKB_PREV.ptr(skb), prev);
            ptr::write_volatile(SKB_PREV.ptr(next), skb);
            ptr::write_volatile(SKB_NEXT.ptr(prev), skb);
            ptr::write_volatile(
                SKB_HEAD_QLEN.ptr(list),
                SKB_HEAD_QLEN.read(list).wrapping_add(1),
            );
        }
    }

    /// `__skb_dequeue()`: the first skb, unlinked, or null.
    ///
    /// # Safety
    ///
    /// `list` is an initialised list the caller has locked (or owns).
    #[inline(always)]
    pub(crate) unsafe fn dequeue(list: *mut Head) -> *mut Skb {
        // SAFETY: As the caller guarantees: every node of the list is a
        // live skb or the head.
        unsafe {
            let skb = SKB_NEXT.read(node(list));
            if skb == node(list) {
                return ptr::null_mut();
            }
            ptr::write_volatile(
                SKB_HEAD_QLEN.ptr(list),
                SKB_HEAD_QLEN.read(list).wrapping_sub(1),
            );
            let next = SKB_NEXT.read(skb);
            let prev = SKB_PREV.read(skb);
            SKB_NEXT.write(skb, ptr::null_mut());
            SKB_PREV.write(skb, ptr::null_mut());
            ptr::write_volatile(SKB_PREV.ptr(next), prev);
            ptr::write_volatile(SKB_NEXT.ptr(prev), next);
            skb
        }
    }

    /// `__skb_queue_splice()`: `list`'s skbs go between `prev` and `next`.
    ///
    /// # Safety
    ///
    /// `list` is non-empty; `prev` and `next` are adjacent nodes of
    /// another list; both are locked or owned by the caller.
    #[inline(always)]
    unsafe fn splice(list: *const Head, prev: *mut Skb, next: *mut Skb) {
        // SAFETY: As the caller guarantees.
        unsafe {
            let first = SKB_NEXT.read(list.cast());
            let last = SKB_PREV.read(list.cast());
            ptr::write_volatile(SKB_PREV.ptr(first), prev);
            ptr::write_volatile(SKB_NEXT.ptr(prev), first);
            ptr::write_volatile(SKB_NEXT.ptr(last), next);
            ptr::write_volatile(SKB_PREV.ptr(next), last);
        }
    }

    /// `skb_queue_splice()`: `list`'s skbs to the front of `head` (`list`
    /// is left as it was, to be reinitialised or dropped).
    ///
    /// # Safety
    ///
    /// Both are initialised lists, locked or owned by the caller.
    #[inline(always)]
    pub(crate) unsafe fn splice_front(list: *const Head, head: *mut Head) {
        // SAFETY: As the caller guarantees.
        unsafe {
            if !is_empty(list) {
                splice(list, node(head), SKB_NEXT.read(node(head)));
                SKB_HEAD_QLEN.write(head, SKB_HEAD_QLEN.read(head).wrapping_add(len(list)));
            }
        }
    }

    /// `skb_queue_splice_tail_init()`: `list`'s skbs to the back of `head`,
    /// `list` emptied.
    ///
    /// # Safety
    ///
    /// Both are initialised lists, locked or owned by the caller.
    #[inline(always)]
    pub(crate) unsafe fn splice_tail_init(list: *mut Head, head: *mut Head) {
        // SAFETY: As the caller guarantees.
        unsafe {
            if !is_empty(list) {
                splice(list, SKB_PREV.read(node(head)), node(head));
                SKB_HEAD_QLEN.write(head, SKB_HEAD_QLEN.read(head).wrapping_add(len(list)));
                head_init(list);
            }
        }
    }

    /// `spin_lock(&list->lock)`.
    ///
    /// # Safety
    ///
    /// `list`'s lock is initialised; the caller follows its context rules.
    #[inline(always)]
    pub(crate) unsafe fn lock(list: *mut Head) {
        // SAFETY: As the caller guarantees.
        unsafe { super::spin_lock(SKB_HEAD_LOCK.ptr(list)) }
    }

    /// `spin_unlock(&list->lock)`.
    ///
    /// # Safety
    ///
    /// The caller holds `list`'s lock.
    #[inline(always)]
    pub(crate) unsafe fn unlock(list: *mut Head) {
        // SAFETY: As the caller guarantees.
        unsafe { super::spin_unlock(SKB_HEAD_LOCK.ptr(list)) }
    }

    /// `spin_lock_bh(&list->lock)`: out of line in C too on x86_64 without
    /// `PREEMPT_RT` (`_raw_spin_lock_bh()`).
    ///
    /// # Safety
    ///
    /// As [`lock`]; process context.
    #[inline(always)]
    pub(crate) unsafe fn lock_bh(list: *mut Head) {
        // CAST: `rlock` is the first member of `spinlock_t` without PREEMPT_RT.
        // SAFETY: As the caller guarantees.
        unsafe { bindings::_raw_spin_lock_bh(SKB_HEAD_LOCK.ptr(list).cast()) }
    }

    /// `spin_unlock_bh(&list->lock)` (`_raw_spin_unlock_bh()`).
    ///
    /// # Safety
    ///
    /// The caller holds `list`'s lock, taken with [`lock_bh`].
    #[inline(always)]
    pub(crate) unsafe fn unlock_bh(list: *mut Head) {
        // CAST: As in `lock_bh`.
        // SAFETY: As the caller guarantees.
        unsafe { bindings::_raw_spin_unlock_bh(SKB_HEAD_LOCK.ptr(list).cast()) }
    }
}

/// The socket's write queue (`&sk->sk_write_queue`).
///
/// # Safety
///
/// `sk` is a live socket.
#[inline(always)]
pub(super) unsafe fn sk_write_queue(sk: *mut bindings::sock) -> *mut bindings::sk_buff_head {
    // SAFETY: As the caller guarantees.
    unsafe { SOCK_WRITE_QUEUE.ptr(sk) }
}

/// `&rs->napi` and back (`container_of()`): the NAPI context inside our
/// socket.
///
/// # Safety
///
/// `rs` is a live `rtun_sock`.
#[inline(always)]
pub(super) unsafe fn rtun_sock_napi(rs: *mut bindings::rtun_sock) -> *mut bindings::napi_struct {
    // SAFETY: As the caller guarantees.
    unsafe { RTUN_SOCK_NAPI.ptr(rs) }
}

/// The `rtun_sock` whose `napi` this is.
///
/// # Safety
///
/// `napi` is the `napi` member of a live `rtun_sock`.
#[inline(always)]
pub(super) unsafe fn napi_rtun_sock(napi: *mut bindings::napi_struct) -> *mut bindings::rtun_sock {
    // SAFETY: As the caller guarantees: the member is at this offset.
    unsafe { napi.cast::<u8>().sub(RTUN_SOCK_NAPI.offset()).cast() }
}

/// `napi_schedule()` (include/linux/netdevice.h): `napi_schedule_prep()`,
/// then `__napi_schedule()`, both out of line in C too. Same in every
/// configuration.
///
/// # Safety
///
/// `napi` is a context added to a device and not deleted.
#[inline(always)]
pub(super) unsafe fn napi_schedule(napi: *mut bindings::napi_struct) {
    // SAFETY: As the caller guarantees.
    unsafe {
        if bindings::napi_schedule_prep(napi) {
            bindings::__napi_schedule(napi);
        }
    }
}

/// `spin_lock()` (include/linux/spinlock.h): on x86_64 without
/// `CONFIG_PREEMPT_RT` spinlocks are out of line (`!CONFIG_INLINE_SPIN_LOCK`;
/// `tun.rs` refuses other configurations), so C's is a call of
/// `_raw_spin_lock(&lock->rlock)`.
///
/// # Safety
///
/// `lock` is an initialised spinlock; the caller follows its context rules.
#[inline(always)]
pub(super) unsafe fn spin_lock(lock: *mut kernel::bindings::spinlock_t) {
    // CAST: `rlock` is the first member of `spinlock_t` without PREEMPT_RT.
    // SAFETY: As the caller guarantees.
    unsafe { kernel::bindings::_raw_spin_lock(lock.cast()) };
}

/// Whether `spin_unlock()` is C's inline release store and nothing else:
/// no out-of-line unlock, no preempt count to drop, no paravirt unlock, no
/// debug checks (the test and no-jump-label kernels).
const SPIN_UNLOCK_IS_STORE: bool = cfg!(all(
    CONFIG_QUEUED_SPINLOCKS,
    not(CONFIG_UNINLINE_SPIN_UNLOCK),
    not(CONFIG_PREEMPT_COUNT),
    not(CONFIG_PARAVIRT_SPINLOCKS),
    not(CONFIG_DEBUG_SPINLOCK),
    not(CONFIG_DEBUG_LOCK_ALLOC)
));

/// `spin_unlock()` (include/linux/spinlock.h, 6.12): with
/// [`SPIN_UNLOCK_IS_STORE`]'s configuration, `__raw_spin_unlock()` is
/// `queued_spin_unlock()` -- `smp_store_release(&lock->locked, 0)`, on x86
/// a compiler barrier and a byte store -- then `preempt_enable()`, a
/// barrier without a preempt count; written out here (a call of the
/// `kernel` crate's helper costs several instructions per packet on both
/// rings). With `CONFIG_UNINLINE_SPIN_UNLOCK` (the debug kernel) C calls
/// `_raw_spin_unlock()`, and so do we; any other configuration goes
/// through the helper.
///
/// # Safety
///
/// The caller holds `lock`.
#[inline(always)]
pub(super) unsafe fn spin_unlock(lock: *mut kernel::bindings::spinlock_t) {
    if SPIN_UNLOCK_IS_STORE {
        // SAFETY: The caller holds the lock, so the locked byte is ours to
        // clear; the fence orders the critical section's accesses before
        // the store (x86 stores are not reordered with earlier accesses).
        unsafe {
            core::sync::atomic::compiler_fence(Ordering::Release);
            ptr::write_volatile(SPINLOCK_LOCKED.ptr(lock.cast()), 0u8);
            core::sync::atomic::compiler_fence(Ordering::SeqCst);
        }
        return;
    }
    #[cfg(CONFIG_UNINLINE_SPIN_UNLOCK)]
    // CAST: As in `spin_lock`.
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::_raw_spin_unlock(lock.cast())
    };
    #[cfg(not(CONFIG_UNINLINE_SPIN_UNLOCK))]
    // SAFETY: As the caller guarantees.
    unsafe {
        kernel::bindings::spin_unlock(lock)
    };
}

/// `txq_trans_cond_update()` (include/linux/netdevice.h) of
/// `netdev_get_tx_queue(dev, txq)`: `&dev->_tx[txq]`'s `trans_start` set
/// to `jiffies` unless it holds it already (READ_ONCE/WRITE_ONCE). Same as
/// C in every configuration.
///
/// # Safety
///
/// `dev` is a live device and `txq` one of its transmit queues.
#[inline(always)]
pub(super) unsafe fn txq_trans_cond_update(dev: *mut bindings::net_device, txq: u16) {
    let now = jiffies();
    // SAFETY: As the caller guarantees: `_tx` holds `num_tx_queues`
    // queues of `RTUN_NETDEV_QUEUE_SIZE` bytes, `txq` among them.
    unsafe {
        let q = NETDEV_TX
            .read(dev)
            .cast::<u8>()
            .add(usize::from(txq) * bindings::RTUN_NETDEV_QUEUE_SIZE as usize)
            .cast::<NetdevQueue>();
        if NETDEV_QUEUE_TRANS_START.read_once(q) != now {
            ptr::write_volatile(NETDEV_QUEUE_TRANS_START.ptr(q), now);
        }
    }
}

/// `waitqueue_active()` (include/linux/wait.h): a racy `list_empty()` of
/// the head's list, `READ_ONCE(head->next) != head`. Same as C in every
/// configuration.
///
/// # Safety
///
/// `wq` is an initialised wait queue head.
#[inline(always)]
pub(super) unsafe fn waitqueue_active(wq: *mut bindings::wait_queue_head) -> bool {
    // SAFETY: As the caller guarantees.
    unsafe {
        let list = WQ_HEAD_NEXT.ptr(wq).cast::<c_void>();
        WQ_HEAD_NEXT.read_once(wq) != list
    }
}

/// `sock_writeable()` (include/net/sock.h): `refcount_read(&sk->sk_wmem_alloc)
/// < (READ_ONCE(sk->sk_sndbuf) >> 1)`. Same as C in every configuration.
///
/// # Safety
///
/// `sk` is a live socket.
#[inline(always)]
pub(super) unsafe fn sock_writeable(sk: *const bindings::sock) -> bool {
    // SAFETY: As the caller guarantees; `refcount_read()` is an atomic
    // read, as a volatile read of the int is on x86_64.
    unsafe { SOCK_WMEM_ALLOC.read_once(sk) < (SOCK_SNDBUF.read_once(sk) >> 1) }
}

/// `sk_sleep()` (include/net/sock.h): `&rcu_dereference_raw(sk->sk_wq)->wait`,
/// `wait` being `socket_wq`'s first field (checked in `bindings_helper.h`).
/// Same as C in every configuration.
///
/// # Safety
///
/// `sk` is a live socket with a `struct socket`.
#[inline(always)]
pub(super) unsafe fn sk_sleep(sk: *const bindings::sock) -> *mut bindings::wait_queue_head {
    // SAFETY: As the caller guarantees.
    unsafe { SOCK_WQ.read_once(sk) }
}

/// `skb_vlan_tag_present()` (include/linux/if_vlan.h): `skb->vlan_all != 0`.
/// Same as C in every configuration.
///
/// # Safety
///
/// `skb` is a live skb.
#[inline(always)]
pub(super) unsafe fn skb_vlan_tag_present(skb: *const bindings::sk_buff) -> bool {
    // SAFETY: As the caller guarantees.
    unsafe { SKB_VLAN_ALL.read(skb) != 0 }
}

/// `rcu_dereference(net_hotdata.rps_sock_flow_table)` (include/net/rps.h).
/// Same as C in every configuration with `CONFIG_RPS`.
///
/// # Safety
///
/// Inside an RCU read-side section.
#[inline(always)]
pub(super) unsafe fn rps_sock_flow_table() -> *mut bindings::rps_sock_flow_table {
    // SAFETY: `net_hotdata` is a live kernel object; READ_ONCE.
    unsafe { NET_HOTDATA_RPS_SOCK_FLOW_TABLE.read_once(ptr::addr_of!(bindings::net_hotdata)) }
}

/// `net_hotdata.rps_cpu_mask` (include/net/rps.h), a plain read as C's.
#[inline(always)]
pub(super) fn rps_cpu_mask() -> u32 {
    // SAFETY: `net_hotdata` is a live kernel object; the mask is set once
    // at boot.
    unsafe { NET_HOTDATA_RPS_CPU_MASK.read(ptr::addr_of!(bindings::net_hotdata)) }
}

/// `NET_SKB_PAD` (include/linux/skbuff.h): `max(32, L1_CACHE_BYTES)`, x86
/// defining no override (Linux 6.12).
pub(crate) const NET_SKB_PAD: usize = if bindings::RTUN_L1_CACHE_BYTES > 32 {
    bindings::RTUN_L1_CACHE_BYTES as usize
} else {
    32
};
