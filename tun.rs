// SPDX-License-Identifier: GPL-2.0

//! rust_tun: the hot path of the kernel's TUN/TAP driver (`drivers/net/tun.c`)
//! in Rust.
//!
//! This is the crate root of `rust_tun.ko`. It holds the module, the
//! character device `/dev/net/rust_tun` (tun's ABI: same ioctl numbers, same
//! `struct ifreq`, same `struct tun_pi`) and the net device side. Functions
//! keep tun.c's names so the two files read side by side; where we differ on
//! purpose, the comment says so and `Documentation/rust_tun.rst` lists it.
//! All `unsafe` code is in `sys.rs` and `sys/`; this file is safe Rust. The flow table
//! is in `flow_table.rs`, the static-key guarded RPS/RFS steps in `rps.rs`.

use core::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};
use kernel::uaccess::UserSlice;
use kernel::{c_str, ioctl};

mod bindings;
#[cfg(rtun_compile_fail)]
mod compile_fail;
mod flow_logic;
mod flow_table;
mod rps;
mod sys;

use core::fmt::Write;
use flow_logic::reciprocal_scale;
use flow_table::FlowTable;
use sys::{
    errno, poll, BhOff, DevDebugfs, DevEvent, DevKind, IovIter, NetDevice, NetDeviceBuilder, NetNs,
    PollTable, RcuArc, RcuDev, RcuReadGuard, RingSlots, Rtnl, RtnlLocked, SkBuff, SkbRing, TextBuf,
    UnpublishedBatch, WaitQueue,
};

// The configurations this module is built and tested for; anything else
// fails here, with the reason, rather than compiling code nobody runs.
#[cfg(not(target_arch = "x86_64"))]
compile_error!("rust_tun supports x86_64 only: its jump-label sites, per-CPU reads and micro-benchmark are x86_64 code");
#[cfg(not(CONFIG_SMP))]
compile_error!("rust_tun needs CONFIG_SMP: its subject is RPS/RFS bookkeeping, which exists only on SMP kernels");
#[cfg(not(CONFIG_RPS))]
compile_error!("rust_tun needs CONFIG_RPS (on with SMP and SYSFS): the rps_needed/rfs_needed guards are its subject");
#[cfg(CONFIG_PREEMPT_RT)]
compile_error!(
    "rust_tun does not support CONFIG_PREEMPT_RT (its transmit ring calls _raw_spin_lock directly)"
);
#[cfg(CONFIG_INLINE_SPIN_LOCK)]
compile_error!("rust_tun expects out-of-line spinlocks (!CONFIG_INLINE_SPIN_LOCK), as on x86_64");

module! {
    type: RustTun,
    name: "rust_tun",
    author: "rust-tun developers",
    description: "Universal TUN/TAP device driver, hot path in Rust",
    license: "GPL",
}

/// Driver name, as ethtool reports it.
pub(crate) const DRV_NAME: &[u8] = b"rust_tun";
/// Driver version, as ethtool reports it.
pub(crate) const DRV_VERSION: &[u8] = b"0.1";
/// The rtnl link kind and misc device name (NUL-terminated).
pub(crate) const DRV_KIND: &[u8] = b"rust_tun\0";
/// The device node under /dev (NUL-terminated): `/dev/net/rust_tun`.
pub(crate) const DEV_NODENAME: &[u8] = b"net/rust_tun\0";

/// `MAX_TAP_QUEUES`.
pub(crate) const MAX_TAP_QUEUES: usize = 256;
/// `TUN_READQ_SIZE`: the default `tx_queue_len`, hence ring length.
pub(crate) const TUN_READQ_SIZE: u32 = 500;
/// `MIN_MTU`.
pub(crate) const MIN_MTU: u32 = 68;
/// `MAX_MTU`.
pub(crate) const MAX_MTU: u32 = 65535;
/// The largest write we accept: `MAX_MTU` plus an Ethernet and a VLAN
/// header. tun.c takes larger writes (with a larger linear part) and lets
/// the stack drop them; no valid frame is larger than this.
const MAX_FRAME: usize = MAX_MTU as usize + ETH_HLEN + 4;
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;
/// `tun->align`: headroom of a written packet (`NET_SKB_PAD`, plus
/// `NET_IP_ALIGN` for TAP).
const TUN_ALIGN: usize = bindings::RTUN_NET_SKB_PAD as usize;
/// `SKB_MAX_HEAD(align)`, tun.c's `good_linear`: the most a written packet
/// keeps in its linear part when it spans pages.
const fn good_linear(align: usize) -> usize {
    let page = bindings::RTUN_PAGE_SIZE as usize;
    // SKB_WITH_OVERHEAD(PAGE_SIZE - align): minus the aligned
    // `skb_shared_info`, which `bindings_helper.h` gives.
    page - align - bindings::RTUN_SKB_SHINFO_SIZE as usize
}

/// `IFF_*` flags of the tun ABI (`include/uapi/linux/if_tun.h`).
pub(crate) const IFF_TUN: u32 = bindings::IFF_TUN;
pub(crate) const IFF_TAP: u32 = bindings::IFF_TAP;
pub(crate) const IFF_NO_CARRIER: u32 = bindings::IFF_NO_CARRIER;
pub(crate) const IFF_NO_PI: u32 = bindings::IFF_NO_PI;
pub(crate) const IFF_ONE_QUEUE: u32 = bindings::IFF_ONE_QUEUE;
pub(crate) const IFF_MULTI_QUEUE: u32 = bindings::IFF_MULTI_QUEUE;
pub(crate) const IFF_PERSIST: u32 = bindings::IFF_PERSIST;
pub(crate) const IFF_TUN_EXCL: u32 = bindings::IFF_TUN_EXCL;
pub(crate) const IFF_ATTACH_QUEUE: u32 = bindings::IFF_ATTACH_QUEUE;
pub(crate) const IFF_DETACH_QUEUE: u32 = bindings::IFF_DETACH_QUEUE;
/// `TUN_TYPE_MASK`.
pub(crate) const TUN_TYPE_MASK: u32 = IFF_TUN | IFF_TAP;
/// `TUN_FEATURES`: the `TUNSETIFF` flags we implement. tun.c also has
/// `IFF_VNET_HDR` and `IFF_NAPI*`; like tun.c we mask out what we do not
/// implement, and `TUNGETFEATURES`/`TUNGETIFF` say so.
pub(crate) const TUN_FEATURES: u32 = IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE;
/// `TUN_PKT_STRIP`: the reader's buffer was too short for the packet.
const TUN_PKT_STRIP: u16 = bindings::TUN_PKT_STRIP as u16;

/// The tun ioctls, same numbers as `include/uapi/linux/if_tun.h`.
const TUNSETIFF: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 202);
const TUNSETPERSIST: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 203);
const TUNGETFEATURES: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 207);
const TUNSETOWNER: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 204);
const TUNSETGROUP: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 206);
const TUNGETIFF: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 210);
const TUNSETQUEUE: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 217);

/// `INVALID_UID`/`INVALID_GID`: no owner or group set.
const INVALID_ID: u32 = u32::MAX;

/// `sizeof(struct ifreq)` on 64-bit: the `ifreq_len` tun copies.
const IFREQ_LEN: usize = 40;
const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;
/// `sizeof(struct tun_pi)`.
const TUN_PI_LEN: usize = 4;

const ETH_P_IP: u16 = (bindings::ETH_P_IP as u16).to_be();
const ETH_P_IPV6: u16 = (bindings::ETH_P_IPV6 as u16).to_be();

/// Device counters reported through `ndo_get_stats64` and debugfs.
#[derive(Default)]
pub(crate) struct TunStats {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    rx_dropped: AtomicU64,
    tx_dropped: AtomicU64,
    rx_frame_errors: AtomicU64,
    /// RPS flow hashes computed on transmit (`tun_automq_xmit`).
    rps_hashes: AtomicU64,
    /// RFS record steps run (`sock_rps_record_flow_hash` called).
    rfs_records: AtomicU64,
}

/// A snapshot of [`TunStats`].
pub(crate) struct TunStatsSnapshot {
    pub(crate) rx_packets: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) rx_dropped: u64,
    pub(crate) tx_dropped: u64,
    pub(crate) rx_frame_errors: u64,
}

fn inc(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Ordering::Relaxed);
}

/// `struct tun_struct`: the driver state of one device, in its private area.
#[pin_data]
pub(crate) struct Tun {
    /// `IFF_TUN`/`IFF_TAP`, `TUN_FEATURES` and `IFF_PERSIST`; written under rtnl.
    flags: AtomicU32,
    /// The attached queues, `tfiles[0..numqueues]`; RCU for the data path.
    tfiles: [RcuArc<TunFile>; MAX_TAP_QUEUES],
    /// Number of attached queues; written under rtnl.
    numqueues: AtomicU32,
    /// Files detached with `TUNSETQUEUE` (tun.c's `tun->disabled` list),
    /// linked through `TunFile::next_disabled`. Only rtnl holders look at
    /// it (the data path never does), so taking a file off it needs no
    /// grace period.
    disabled: RtnlLocked<Option<Arc<TunFile>>>,
    /// Number of detached files (written under rtnl, read by debugfs).
    numdisabled: AtomicU32,
    /// `tun->owner`, a kuid, or `INVALID_ID`.
    owner: AtomicU32,
    /// `tun->group`, a kgid, or `INVALID_ID`.
    group: AtomicU32,
    /// Behave like tun before the rps_needed/rfs_needed patches. Fixed at
    /// creation from the `unguarded` module parameter; the transmit path
    /// reads it from the device's ops table, not from here.
    pub(crate) unguarded: bool,
    /// `tun->flows` and its ageing timer.
    #[pin]
    pub(crate) flows: FlowTable,
    stats: TunStats,
    debugfs: DevDebugfs,
}

impl Tun {
    fn new(flags: u32, unguarded: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            flags: AtomicU32::new(flags),
            tfiles: [const { RcuArc::null() }; MAX_TAP_QUEUES],
            numqueues: AtomicU32::new(0),
            disabled: RtnlLocked::new(None),
            numdisabled: AtomicU32::new(0),
            owner: AtomicU32::new(INVALID_ID),
            group: AtomicU32::new(INVALID_ID),
            unguarded,
            flows <- FlowTable::new(),
            stats: TunStats::default(),
            debugfs: DevDebugfs::new(),
        }? Error)
    }

    fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    fn numqueues(&self) -> u32 {
        self.numqueues.load(Ordering::Relaxed)
    }

    fn kind(&self) -> DevKind {
        if self.flags() & IFF_TAP != 0 {
            DevKind::Tap
        } else {
            DevKind::Tun
        }
    }
}

/// The detached files of `tun`, in list order (a snapshot: each file is a
/// new reference).
fn disabled_files(tun: &Tun, rtnl: &Rtnl<'_>) -> KVec<Arc<TunFile>> {
    let mut out = KVec::new();
    let mut cur = tun.disabled.get(rtnl).clone();
    while let Some(f) = cur {
        cur = f.next_disabled.get(rtnl).clone();
        // At most `MAX_TAP_QUEUES` files; if memory is that short, the
        // caller sees fewer.
        if out.push(f, GFP_KERNEL).is_err() {
            break;
        }
    }
    out
}

/// `struct tun_file`: the state of one open file, that is one queue.
#[pin_data]
pub(crate) struct TunFile {
    /// `tfile->tx_ring`: packets from the stack, waiting for the reader.
    #[pin]
    ring: SkbRing,
    /// Readers and pollers wait here (tun.c: the socket's wait queue).
    #[pin]
    wq: WaitQueue,
    /// `tfile->tun`: the device, while attached or detached with
    /// `TUNSETQUEUE` (as in tun.c, a detached file still reads and writes).
    tun: RcuDev,
    /// `tfile->detached`: the device this file is detached from; rtnl.
    detached: RcuDev,
    /// `tfile->queue_index`; written under rtnl.
    queue_index: AtomicU16,
    /// `sk_shutdown = RCV_SHUTDOWN`: the device went away under a reader.
    shutdown: AtomicBool,
    /// The opener's network namespace (tun.c: the socket's).
    net: NetNs,
    /// The next file on the device's disabled list (tun.c: `tfile->next`).
    next_disabled: RtnlLocked<Option<Arc<TunFile>>>,
}

/// A `struct ifreq` as copied from and to user space.
struct IfReq([u8; IFREQ_LEN]);

impl IfReq {
    /// `ifr_name`, cut at its NUL (the caller forced `ifr_name[IFNAMSIZ-1]`).
    fn name(&self) -> &CStr {
        let end = self.0[..IFNAMSIZ]
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(IFNAMSIZ - 1);
        CStr::from_bytes_with_nul(&self.0[..=end]).unwrap_or(c_str!(""))
    }

    fn set_name(&mut self, name: &[u8; IFNAMSIZ]) {
        self.0[..IFNAMSIZ].copy_from_slice(name);
        self.0[IFNAMSIZ - 1] = 0;
    }

    /// `ifr_flags` (a `short`).
    fn flags(&self) -> u32 {
        u32::from(u16::from_ne_bytes([self.0[IFNAMSIZ], self.0[IFNAMSIZ + 1]]))
    }

    fn set_flags(&mut self, flags: u32) {
        self.0[IFNAMSIZ..IFNAMSIZ + 2].copy_from_slice(&(flags as u16).to_ne_bytes());
    }
}

// ---------------------------------------------------------------------------
// Attach and detach.

/// Gives `tfile`'s ring room for `len` packets (`ptr_ring_resize`), keeping
/// what fits; what does not is dropped and counted in `tx_dropped`.
fn tun_ring_resize(tun: &Tun, tfile: &TunFile, len: u32) -> Result {
    let slots = RingSlots::new(len as usize)?;
    let lost = tfile.ring.resize(slots);
    inc(&tun.stats.tx_dropped, lost);
    Ok(())
}

/// `tun_enable_queue()`: takes `tfile` off the device's disabled list.
/// Nobody reads that list without rtnl, so no grace period is needed
/// (tun.c: `list_del_init`).
fn tun_enable_queue(tun: &Tun, tfile: &TunFile, rtnl: &mut Rtnl<'_>) {
    let is_me = |f: &Option<Arc<TunFile>>| f.as_deref().is_some_and(|f| core::ptr::eq(f, tfile));
    let me = if is_me(tun.disabled.get(rtnl)) {
        let me = tun.disabled.get_mut(rtnl).take();
        *tun.disabled.get_mut(rtnl) = tfile.next_disabled.get_mut(rtnl).take();
        me
    } else {
        // Walk to the file before ours (`list_del_init`).
        let mut cur = tun.disabled.get(rtnl).clone();
        loop {
            let Some(prev) = cur else {
                return;
            };
            if is_me(prev.next_disabled.get(rtnl)) {
                let me = prev.next_disabled.get_mut(rtnl).take();
                *prev.next_disabled.get_mut(rtnl) = tfile.next_disabled.get_mut(rtnl).take();
                break me;
            }
            cur = prev.next_disabled.get(rtnl).clone();
        }
    };
    tun.numdisabled.fetch_sub(1, Ordering::Relaxed);
    tfile.detached.set(None, rtnl);
    drop(me);
}

/// `tun_disable_queue()`: puts `tfile` on the device's disabled list.
fn tun_disable_queue(tun: &Tun, tfile: Arc<TunFile>, rtnl: &mut Rtnl<'_>) {
    let head = tun.disabled.get_mut(rtnl).take();
    *tfile.next_disabled.get_mut(rtnl) = head;
    *tun.disabled.get_mut(rtnl) = Some(tfile);
    tun.numdisabled.fetch_add(1, Ordering::Relaxed);
}

/// `tun_attach()`: makes `tfile` queue `numqueues` of `dev`.
fn tun_attach<'g>(
    dev: &'g NetDevice,
    tfile: ArcBorrow<'_, TunFile>,
    rtnl: &mut Rtnl<'g>,
) -> Result {
    let tun = dev.tun();
    let detached = tfile.detached.get_rtnl(rtnl).is_some();
    if tfile.tun.get_rtnl(rtnl).is_some() && !detached {
        return Err(EINVAL);
    }
    let n = tun.numqueues() as usize;
    if tun.flags() & IFF_MULTI_QUEUE == 0 && n == 1 {
        return Err(EBUSY);
    }
    if !detached && n + tun.numdisabled.load(Ordering::Relaxed) as usize == MAX_TAP_QUEUES {
        return Err(E2BIG);
    }
    // The ring follows the device's tx_queue_len (a detached file keeps its own).
    if !detached {
        tun_ring_resize(tun, &tfile, dev.tx_queue_len())?;
    }

    tfile.queue_index.store(n as u16, Ordering::Relaxed);
    tfile.shutdown.store(false, Ordering::Relaxed);
    // Slot `n` is empty: nothing is unpublished, no grace period.
    drop(tun.tfiles[n].replace(Some(tfile.into()), rtnl));
    if detached {
        tun_enable_queue(tun, &tfile, rtnl);
    }
    tfile.tun.set(Some(dev), rtnl);
    // The core learns of the queue before writers may record it (see
    // `tun_get_user`).
    dev.set_real_num_queues(n as u32 + 1, rtnl);
    tun.numqueues.store(n as u32 + 1, Ordering::Release);
    Ok(())
}

/// `__tun_detach()`: takes `tfile`'s queue away; with `clean` the file is
/// being closed, without it the queue is disabled (`TUNSETQUEUE`).
fn __tun_detach<'g>(tfile: &TunFile, clean: bool, rtnl: &mut Rtnl<'g>) {
    let dev = tfile.tun.get_rtnl(rtnl);
    let detached = tfile.detached.get_rtnl(rtnl);

    if let (Some(dev), None) = (dev, detached) {
        let tun = dev.tun();
        let index = tfile.queue_index.load(Ordering::Relaxed) as usize;
        let last = tun.numqueues() as usize - 1;
        // Move the last queue into our slot, as tun.c does.
        let me = if index == last {
            tun.tfiles[index].replace(None, rtnl)
        } else {
            let me = tun.tfiles[index].take_from(&tun.tfiles[last], rtnl);
            if let Some(moved) = tun.tfiles[index].get_rtnl(rtnl) {
                moved.queue_index.store(index as u16, Ordering::Relaxed);
            }
            me
        };
        tun.numqueues.store(last as u32, Ordering::Release);
        if clean {
            tfile.tun.set(None, rtnl);
        }
        // Waits for a grace period (tun.c's `synchronize_net()`): no
        // transmitter sees this queue after it.
        let me = me.map(sys::Unpublished::into_arc);
        if !clean {
            if let Some(me) = me {
                tun_disable_queue(tun, me, rtnl);
            }
            tfile.detached.set(Some(dev), rtnl);
        } else {
            drop(me);
        }
        // Deliberate difference: tun.c deletes the flows of queue
        // `numqueues + 1`, which no queue has; we delete the departed
        // queue's flows and move the moved queue's flows with it.
        tun.flows.detach_queue(index as u16, last as u16);
        // Packets the reader will never see are drops, as far as the
        // counters go: sent = read + dropped.
        let purged = tfile.ring.purge();
        inc(&tun.stats.tx_dropped, purged);
        dev.set_real_num_queues(last as u32, rtnl);
    } else if let (true, Some(dev)) = (clean, detached) {
        tun_enable_queue(dev.tun(), tfile, rtnl);
        tfile.tun.set(None, rtnl);
    }

    if clean {
        if let Some(dev) = dev.or(detached) {
            let tun = dev.tun();
            if tun.numqueues() == 0 && tun.numdisabled.load(Ordering::Relaxed) == 0 {
                dev.carrier_off();
                if tun.flags() & IFF_PERSIST == 0 && dev.is_registered() {
                    dev.unregister(rtnl);
                }
            }
        }
        // A detached file's ring (tun.c: ptr_ring_cleanup).
        let purged = tfile.ring.purge();
        if let Some(dev) = dev.or(detached) {
            inc(&dev.tun().stats.tx_dropped, purged);
        }
    }
}

/// `tun_detach()`.
fn tun_detach(tfile: &TunFile, clean: bool) {
    Rtnl::with(|rtnl| {
        let dev = tfile.tun.get_rtnl(rtnl).or(tfile.detached.get_rtnl(rtnl));
        __tun_detach(tfile, clean, rtnl);
        if let Some(dev) = dev {
            if dev.is_registered() {
                dev.state_change(rtnl);
            }
        }
    })
}

/// `tun_net_uninit()` / `tun_detach_all()`: the device is being
/// unregistered; detach every queue, attached or disabled, wake readers,
/// and after one grace period for all of them, purge their rings.
pub(crate) fn tun_net_uninit<'g>(dev: &'g NetDevice, rtnl: &mut Rtnl<'g>) {
    let tun = dev.tun();
    tun.debugfs.remove();
    let n = tun.numqueues() as usize;
    let shut = |tfile: &TunFile, rtnl: &Rtnl<'g>| {
        tfile.shutdown.store(true, Ordering::Relaxed);
        tfile.tun.set(None, rtnl);
        tfile.detached.set(None, rtnl);
        tfile.wq.wake_up_poll(poll::IN | poll::ERR);
    };
    for slot in &tun.tfiles[..n] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            shut(tfile, rtnl);
        }
    }
    let disabled = disabled_files(tun, rtnl);
    for tfile in disabled.iter() {
        shut(tfile, rtnl);
    }
    tun.numqueues.store(0, Ordering::Release);
    tun.numdisabled.store(0, Ordering::Relaxed);
    let mut batch = UnpublishedBatch::with_capacity(n);
    for slot in &tun.tfiles[..n] {
        if let Some(old) = slot.replace(None, rtnl) {
            batch.push(old);
        }
    }
    // One `synchronize_net()` for every queue, as tun.c.
    batch.finish(|tfile| inc(&tun.stats.tx_dropped, tfile.ring.purge()));
    // Disabled files were out of the transmitters' reach already; the list
    // comes apart one link at a time (no recursive drop of the chain).
    let mut cur = tun.disabled.get_mut(rtnl).take();
    while let Some(tfile) = cur {
        cur = tfile.next_disabled.get_mut(rtnl).take();
        inc(&tun.stats.tx_dropped, tfile.ring.purge());
    }
    drop(disabled);
    // `tun_flow_flush()`: no queue is left to steer to.
    tun.flows.flush();
    if tun.flags() & IFF_PERSIST != 0 {
        sys::module_put();
    }
}

/// `tun_queue_resize()`: `tx_queue_len` changed; resize every ring.
fn tun_queue_resize(dev: &NetDevice, rtnl: &Rtnl<'_>) -> Result {
    let tun = dev.tun();
    let n = tun.numqueues() as usize;
    for slot in &tun.tfiles[..n] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            tun_ring_resize(tun, tfile, dev.tx_queue_len())?;
        }
    }
    for tfile in disabled_files(tun, rtnl).iter() {
        tun_ring_resize(tun, tfile, dev.tx_queue_len())?;
    }
    Ok(())
}

/// `tun_device_event()`: the rings follow `tx_queue_len`; writers waiting
/// for a device to come up wake (tun.c: `sk_write_space` on `NETDEV_UP`);
/// and, ours only, the debugfs directory follows the device's name and
/// namespace.
pub(crate) fn tun_device_event<'g>(
    dev: &'g NetDevice,
    ev: DevEvent,
    rtnl: &mut Rtnl<'g>,
) -> Result {
    let tun = dev.tun();
    match ev {
        DevEvent::ChangeTxQueueLen => return tun_queue_resize(dev, rtnl),
        DevEvent::Up => {
            let n = tun.numqueues() as usize;
            for slot in &tun.tfiles[..n] {
                if let Some(tfile) = slot.get_rtnl(rtnl) {
                    tfile.wq.wake_up_poll(poll::OUT);
                }
            }
        }
        DevEvent::Register | DevEvent::ChangeName => tun.debugfs.create(dev, rtnl),
        DevEvent::Unregister => tun.debugfs.remove(),
    }
    Ok(())
}

/// `tun_net_open()`.
pub(crate) fn tun_net_open(dev: &NetDevice) {
    dev.tx_start_all_queues();
}

/// `tun_net_close()`.
pub(crate) fn tun_net_close(dev: &NetDevice) {
    dev.tx_stop_all_queues();
}

/// `tun_net_get_stats64()` (tun.c fills it from per-CPU counters).
pub(crate) fn tun_net_get_stats64(dev: &NetDevice) -> TunStatsSnapshot {
    let s = &dev.tun().stats;
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    TunStatsSnapshot {
        rx_packets: get(&s.rx_packets),
        rx_bytes: get(&s.rx_bytes),
        tx_packets: get(&s.tx_packets),
        tx_bytes: get(&s.tx_bytes),
        rx_dropped: get(&s.rx_dropped),
        tx_dropped: get(&s.tx_dropped),
        rx_frame_errors: get(&s.rx_frame_errors),
    }
}

// ---------------------------------------------------------------------------
// Transmit: the stack hands us a packet for user space.

/// `tun_automq_select_queue()` (`ndo_select_queue`, multi-queue only: the
/// core skips it with one queue): the flow's queue on a flow-table hit
/// (saving the hash for RFS), else `reciprocal_scale(hash, numqueues)`.
pub(crate) fn tun_select_queue(dev: &NetDevice, skb: &SkBuff) -> u16 {
    let tun = dev.tun();
    let rcu = RcuReadGuard::new();
    let numqueues = tun.numqueues();
    let txq = skb.hash_symmetric();
    match tun.flows.find(txq, &rcu) {
        Some(e) => {
            FlowTable::save_rps_rxhash(e, txq);
            e.queue_index.load(Ordering::Relaxed)
        }
        None => reciprocal_scale(txq, numqueues) as u16,
    }
}

/// `tun_automq_xmit()`: with one queue, `ndo_select_queue` did not run, so
/// save the flow's RPS hash here -- only while RPS is in use (`rps_needed`),
/// unless the device is unguarded.
///
/// Deliberate difference: the static key is tested before `numqueues`, so
/// with RPS off the whole step is one NOP (tun.c loads `numqueues` first).
#[inline(always)]
fn tun_automq_xmit<const UNGUARDED: bool>(tun: &Tun, skb: &SkBuff, rcu: &RcuReadGuard) {
    let wanted = if UNGUARDED {
        tun.numqueues() == 1
    } else {
        rps::rps_needed() && tun.numqueues() == 1
    };
    if wanted {
        let rxhash = skb.hash_symmetric();
        inc(&tun.stats.rps_hashes, 1);
        if let Some(e) = tun.flows.find(rxhash, rcu) {
            FlowTable::save_rps_rxhash(e, rxhash);
        }
    }
}

/// `tun_net_xmit()`: queue the packet on the ring of its queue and wake the
/// reader; drop it when no file is attached or the ring is full. The steps
/// before queueing are tun.c's, in its order: release a zerocopy sender's
/// pages (the reader may take its time), timestamp, orphan, forget
/// conntrack. `UNGUARDED` comes from the device's ops table.
pub(crate) fn tun_net_xmit<const UNGUARDED: bool>(
    mut skb: SkBuff,
    dev: &NetDevice,
    bh: &BhOff,
) -> bindings::netdev_tx_t {
    let tun = dev.tun();
    let txq = skb.queue_mapping();
    let rcu = RcuReadGuard::new();
    let Some(tfile) = tun
        .tfiles
        .get(usize::from(txq))
        .and_then(|slot| slot.get(&rcu))
    else {
        return tun_net_xmit_drop(tun, skb);
    };

    tun_automq_xmit::<UNGUARDED>(tun, &skb, &rcu);

    if skb.orphan_frags_rx().is_err() {
        return tun_net_xmit_drop(tun, skb);
    }
    skb.tx_timestamp();
    // Orphan the skb: we may hold it for an indefinite time.
    skb.orphan();
    skb.nf_reset_ct();

    if let Err(skb) = tfile.ring.produce(skb, bh) {
        return tun_net_xmit_drop(tun, skb);
    }
    // `dev->lltx`: we update the queue's `trans_start` ourselves.
    dev.txq_trans_cond_update(txq);
    // Notify and wake up the reader, if one sleeps.
    tfile.wq.wake_up_poll_if_sleeper(poll::IN);
    sys::NETDEV_TX_OK
}

/// The drop path of `tun_net_xmit()`: counted, and `skb_tx_error()` tells a
/// zerocopy sender its data did not go out.
#[cold]
fn tun_net_xmit_drop(tun: &Tun, skb: SkBuff) -> bindings::netdev_tx_t {
    inc(&tun.stats.tx_dropped, 1);
    skb.tx_error_drop();
    sys::NET_XMIT_DROP
}

// ---------------------------------------------------------------------------
// The character device.

/// `tun_chr_open()`.
pub(crate) fn tun_chr_open() -> Result<Arc<TunFile>> {
    Arc::pin_init(
        pin_init!(TunFile {
            ring <- SkbRing::new(),
            wq <- WaitQueue::new(c_str!("TunFile::wq"), kernel::static_lock_class!()),
            tun: RcuDev::null(),
            detached: RcuDev::null(),
            queue_index: AtomicU16::new(0),
            shutdown: AtomicBool::new(false),
            net: NetNs::current(),
            next_disabled: RtnlLocked::new(None),
        }),
        GFP_KERNEL,
    )
}

/// `tun_chr_close()`.
pub(crate) fn tun_chr_close(tfile: Arc<TunFile>) {
    tun_detach(&tfile, true);
}

/// `tun_ring_recv()`: the next packet, waiting for one unless `noblock`.
fn tun_ring_recv(tfile: &TunFile, noblock: bool) -> Result<SkBuff> {
    if let Some(skb) = tfile.ring.consume() {
        return Ok(skb);
    }
    if noblock {
        return Err(EAGAIN);
    }
    tfile.wq.wait_interruptible(|| {
        if let Some(skb) = tfile.ring.consume() {
            return Some(Ok(skb));
        }
        if tfile.shutdown.load(Ordering::Relaxed) {
            return Some(Err(EFAULT));
        }
        None
    })?
}

/// `tun_put_user()`: copies one packet to the reader, with a `tun_pi`
/// header unless `IFF_NO_PI`. Returns the packet's full size, as tun does.
fn tun_put_user(tun: &Tun, skb: SkBuff, to: &mut IovIter) -> Result<usize> {
    let len = skb.len() as usize;
    let mut total = len;

    if tun.flags() & IFF_NO_PI == 0 {
        if to.count() < TUN_PI_LEN {
            return Err(EINVAL);
        }
        total += TUN_PI_LEN;
        let flags = if to.count() < total { TUN_PKT_STRIP } else { 0 };
        let mut pi = [0u8; TUN_PI_LEN];
        pi[..2].copy_from_slice(&flags.to_ne_bytes());
        pi[2..].copy_from_slice(&skb.protocol().to_ne_bytes());
        to.copy_to(&pi)?;
    }

    // Deliberate difference: tun.c ignores a fault in the middle of the
    // copy and reports success; we report EFAULT.
    let n = len.min(to.count());
    to.copy_skb(&skb, n as u32)?;

    inc(&tun.stats.tx_packets, 1);
    inc(&tun.stats.tx_bytes, len as u64);
    skb.consume();
    Ok(total)
}

/// `tun_chr_read_iter()` / `tun_do_read()`.
pub(crate) fn tun_chr_read_iter(tfile: &TunFile, to: &mut IovIter, noblock: bool) -> Result<usize> {
    let dev = tfile.tun.get().ok_or_else(errno::EBADFD)?;
    let len = to.count();
    if len == 0 {
        return Ok(0);
    }
    let skb = tun_ring_recv(tfile, noblock)?;
    let ret = tun_put_user(dev.tun(), skb, to)?;
    Ok(ret.min(len))
}

/// `tun_flow_update()`: the write path's flow bookkeeping. Refreshes or
/// creates the flow; for a known flow, runs the RFS record step -- behind
/// the `rfs_needed` static key unless the device is unguarded.
fn tun_flow_update(tun: &Tun, rxhash: u32, tfile: &TunFile) {
    let queue_index = tfile.queue_index.load(Ordering::Relaxed);
    let Some(rps_rxhash) = tun.flows.update(rxhash, queue_index) else {
        return;
    };
    let recorded = if tun.unguarded {
        Some(rps::sock_rps_record_flow_hash(rps_rxhash))
    } else {
        rps::sock_rps_record_flow_hash_guarded(rps_rxhash)
    };
    if recorded.is_some() {
        inc(&tun.stats.rfs_records, 1);
    }
}

/// `tun_get_user()`: builds a packet from the writer's buffer and hands it
/// to the stack. The skb is built as tun.c builds it (`tun_alloc_skb`):
/// with a sleeping allocation, linear under a page, paged above.
fn tun_get_user(dev: &NetDevice, tfile: &TunFile, from: &mut IovIter) -> Result<usize> {
    let tun = dev.tun();
    let flags = tun.flags();
    let total = from.count();
    let mut len = total;
    let mut proto = ETH_P_IP;

    if flags & IFF_NO_PI == 0 {
        if len < TUN_PI_LEN {
            return Err(EINVAL);
        }
        len -= TUN_PI_LEN;
        let mut pi = [0u8; TUN_PI_LEN];
        from.copy_from(&mut pi)?;
        proto = u16::from_ne_bytes([pi[2], pi[3]]);
    }

    let kind = tun.kind();
    let align = match kind {
        DevKind::Tun => TUN_ALIGN,
        DevKind::Tap => TUN_ALIGN + bindings::RTUN_NET_IP_ALIGN as usize,
    };
    if kind == DevKind::Tap && len < ETH_HLEN {
        return Err(EINVAL);
    }
    if len > MAX_FRAME {
        return Err(errno::EMSGSIZE());
    }

    let drop = |e: Error| {
        inc(&tun.stats.rx_dropped, 1);
        e
    };
    let skb = SkBuff::alloc_for_write(align, len, good_linear(align)).map_err(drop)?;
    let mut skb = skb.copy_from_iter(from).map_err(drop)?;

    match kind {
        DevKind::Tun => {
            if flags & IFF_NO_PI != 0 {
                proto = match skb.first_byte().map(|b| b >> 4) {
                    Some(4) => ETH_P_IP,
                    Some(6) => ETH_P_IPV6,
                    _ => return Err(drop(EINVAL)),
                };
            }
            skb.set_l3(proto, dev);
        }
        DevKind::Tap => {
            if !skb.eth_type_trans(dev) {
                return Err(drop(ENOMEM));
            }
        }
    }
    skb.reset_network_probe_transport();

    // Flow hashes are only worth it with several queues.
    let rxhash = if tun.numqueues() > 1 && !tfile.detached.is_set() {
        skb.hash_symmetric()
    } else {
        0
    };

    if dev.flags() & sys::IFF_UP == 0 {
        return Err(drop(EIO));
    }

    {
        // Under RCU: `__tun_detach` waits for a grace period between
        // renumbering the queues and shrinking `real_num_rx_queues`, so the
        // queue recorded here is one the device still has when
        // `get_rps_cpu()` checks it (it warns otherwise). A detached file's
        // stale index is not recorded. Deliberate difference: tun.c records
        // `tfile->queue_index` unchecked, before taking the RCU lock.
        let _rcu = RcuReadGuard::new();
        let queue_index = tfile.queue_index.load(Ordering::Relaxed);
        if u32::from(queue_index) < tun.numqueues.load(Ordering::Acquire) {
            skb.record_rx_queue(queue_index);
        }
        // `tun_rx_batched()` without batching (tun.c's default): straight
        // into the stack, with bottom halves off.
        skb.netif_receive_skb(&sys::BhDisabled::new());
    }
    inc(&tun.stats.rx_packets, 1);
    inc(&tun.stats.rx_bytes, len as u64);

    if rxhash != 0 {
        tun_flow_update(tun, rxhash, tfile);
    }
    Ok(total)
}

/// `tun_chr_write_iter()`.
pub(crate) fn tun_chr_write_iter(
    tfile: &TunFile,
    from: &mut IovIter,
    _noblock: bool,
) -> Result<usize> {
    let dev = tfile.tun.get().ok_or_else(errno::EBADFD)?;
    tun_get_user(&dev, tfile, from)
}

/// `tun_chr_poll()`.
pub(crate) fn tun_chr_poll(tfile: &TunFile, table: &PollTable) -> u32 {
    let Some(dev) = tfile.tun.get() else {
        return poll::ERR;
    };
    table.wait(&tfile.wq);

    let mut mask = 0;
    if !tfile.ring.is_empty() {
        mask |= poll::IN;
    }
    // tun.c also requires socket send buffer space; we keep no send buffer
    // accounting, so a file of an up device is always writable.
    if dev.flags() & sys::IFF_UP != 0 {
        mask |= poll::OUT;
    }
    if !dev.is_registered() {
        mask = poll::ERR;
    }
    mask
}

/// `tun_flags()`: the flags `TUNGETIFF` reports.
fn tun_flags(tun: &Tun) -> u32 {
    tun.flags() & (TUN_FEATURES | IFF_PERSIST | TUN_TYPE_MASK)
}

/// `tun_permitted()`: may the caller attach to `tun`? If an owner or a
/// group is set and the caller matches what is set (both, if both are),
/// or with `CAP_NET_ADMIN` in the device's namespace.
fn tun_permitted(tun: &Tun, tfile: &TunFile) -> bool {
    let owner = tun.owner.load(Ordering::Relaxed);
    let group = tun.group.load(Ordering::Relaxed);
    if (owner != INVALID_ID || group != INVALID_ID)
        && (owner == INVALID_ID || sys::current_euid_is(owner))
        && (group == INVALID_ID || sys::in_egroup(group))
    {
        return true;
    }
    tfile.net.capable_net_admin()
}

/// `tun_set_iff()`: attaches the file to the named device, creating it if
/// it does not exist.
fn tun_set_iff<'g>(tfile: ArcBorrow<'_, TunFile>, ifr: &mut IfReq, rtnl: &mut Rtnl<'g>) -> Result {
    let flags = ifr.flags();
    let dev = match NetDevice::get_by_name(&tfile.net, ifr.name(), rtnl) {
        Some(found) => {
            let dev = found?;
            if flags & IFF_TUN_EXCL != 0 {
                return Err(EBUSY);
            }
            let tun = dev.tun();
            let kind_ok = match tun.kind() {
                DevKind::Tun => flags & IFF_TUN != 0,
                DevKind::Tap => flags & IFF_TAP != 0,
            };
            if !kind_ok {
                return Err(EINVAL);
            }
            if (flags & IFF_MULTI_QUEUE != 0) != (tun.flags() & IFF_MULTI_QUEUE != 0) {
                return Err(EINVAL);
            }
            if !tun_permitted(tun, &tfile) {
                return Err(EPERM);
            }
            tun_attach(dev, tfile, rtnl)?;
            if tun.flags() & IFF_MULTI_QUEUE != 0
                && tun.numqueues() + tun.numdisabled.load(Ordering::Relaxed) > 1
            {
                // More queues were there: the device is set up already.
                dev.state_change(rtnl);
                ifr.set_name(&dev.name());
                return Ok(());
            }
            let keep = tun.flags() & !TUN_FEATURES;
            tun.flags
                .store(keep | (flags & TUN_FEATURES), Ordering::Relaxed);
            dev.state_change(rtnl);
            dev
        }
        None => {
            if !tfile.net.capable_net_admin() {
                return Err(EPERM);
            }
            let (kind, default_name) = if flags & IFF_TUN != 0 {
                (DevKind::Tun, c_str!("rtun%d"))
            } else if flags & IFF_TAP != 0 {
                (DevKind::Tap, c_str!("rtap%d"))
            } else {
                return Err(EINVAL);
            };
            let queues = if flags & IFF_MULTI_QUEUE != 0 {
                MAX_TAP_QUEUES as u32
            } else {
                1
            };
            let name = if ifr.name().is_empty() {
                default_name
            } else {
                ifr.name()
            };
            let type_flag = if kind == DevKind::Tun {
                IFF_TUN
            } else {
                IFF_TAP
            };
            let tun = Tun::new(type_flag | (flags & TUN_FEATURES), sys::param_unguarded());
            let builder = NetDeviceBuilder::alloc(name, kind, queues, &tfile.net, tun)?;
            let dev = builder.register(rtnl)?;
            // (Its debugfs directory came with `NETDEV_REGISTER`.)
            if let Err(e) = tun_attach(dev, tfile, rtnl) {
                dev.unregister(rtnl);
                return Err(e);
            }
            dev
        }
    };

    if flags & IFF_NO_CARRIER != 0 {
        dev.carrier_off();
    } else {
        dev.carrier_on();
    }
    // Make sure persistent devices do not get stuck in xoff state.
    if dev.is_running() {
        dev.tx_wake_all_queues();
    }
    ifr.set_name(&dev.name());
    Ok(())
}

/// `tun_get_iff()`.
fn tun_get_iff(dev: &NetDevice, ifr: &mut IfReq) {
    ifr.set_name(&dev.name());
    ifr.set_flags(tun_flags(dev.tun()));
}

/// `tun_set_queue()`: `TUNSETQUEUE` with `IFF_ATTACH_QUEUE` or
/// `IFF_DETACH_QUEUE`.
fn tun_set_queue(tfile: ArcBorrow<'_, TunFile>, flags: u32) -> Result {
    Rtnl::with(|rtnl| {
        let dev = if flags & IFF_ATTACH_QUEUE != 0 {
            let dev = tfile.detached.get_rtnl(rtnl).ok_or(EINVAL)?;
            tun_attach(dev, tfile, rtnl)?;
            dev
        } else if flags & IFF_DETACH_QUEUE != 0 {
            let dev = tfile.tun.get_rtnl(rtnl).ok_or(EINVAL)?;
            if dev.tun().flags() & IFF_MULTI_QUEUE == 0 || tfile.detached.get_rtnl(rtnl).is_some() {
                return Err(EINVAL);
            }
            __tun_detach(&tfile, false, rtnl);
            dev
        } else {
            return Err(EINVAL);
        };
        dev.state_change(rtnl);
        Ok(())
    })
}

/// `tun_chr_ioctl()` / `__tun_chr_ioctl()`.
pub(crate) fn tun_chr_ioctl(tfile: ArcBorrow<'_, TunFile>, cmd: u32, arg: usize) -> Result<isize> {
    let mut ifr = IfReq([0; IFREQ_LEN]);
    if cmd == TUNSETIFF || cmd == TUNSETQUEUE {
        UserSlice::new(arg, IFREQ_LEN)
            .reader()
            .read_slice(&mut ifr.0)?;
    }
    if cmd == TUNGETFEATURES {
        // "What IFF flags are valid?" (tun never checked TUNSETIFF's flags).
        let features: u32 = IFF_TUN | IFF_TAP | IFF_NO_CARRIER | TUN_FEATURES;
        let out = UserSlice::new(arg, core::mem::size_of::<u32>());
        out.writer().write_slice(&features.to_ne_bytes())?;
        return Ok(0);
    }
    if cmd == TUNSETQUEUE {
        tun_set_queue(tfile, ifr.flags())?;
        return Ok(0);
    }

    Rtnl::with(|rtnl| {
        let dev = tfile.tun.get_rtnl(rtnl);
        if cmd == TUNSETIFF {
            if dev.is_some() {
                return Err(EEXIST);
            }
            ifr.0[IFNAMSIZ - 1] = 0;
            tun_set_iff(tfile, &mut ifr, rtnl)?;
            UserSlice::new(arg, IFREQ_LEN)
                .writer()
                .write_slice(&ifr.0)?;
            return Ok(0);
        }

        let dev = dev.ok_or_else(errno::EBADFD)?;
        let tun = dev.tun();
        match cmd {
            TUNGETIFF => {
                tun_get_iff(dev, &mut ifr);
                let mut flags = ifr.flags();
                if tfile.detached.get_rtnl(rtnl).is_some() {
                    flags |= IFF_DETACH_QUEUE;
                }
                // No socket filter can be attached: report IFF_NOFILTER, as
                // tun does for a file without one.
                flags |= bindings::IFF_NOFILTER;
                ifr.set_flags(flags);
                UserSlice::new(arg, IFREQ_LEN)
                    .writer()
                    .write_slice(&ifr.0)?;
            }
            TUNSETPERSIST => {
                let flags = tun.flags();
                if arg != 0 && flags & IFF_PERSIST == 0 {
                    tun.flags.store(flags | IFF_PERSIST, Ordering::Relaxed);
                    sys::module_get();
                } else if arg == 0 && flags & IFF_PERSIST != 0 {
                    tun.flags.store(flags & !IFF_PERSIST, Ordering::Relaxed);
                    sys::module_put();
                }
            }
            TUNSETOWNER => {
                let owner = sys::make_kuid(arg as isize).ok_or(EINVAL)?;
                tun.owner.store(owner, Ordering::Relaxed);
            }
            TUNSETGROUP => {
                let group = sys::make_kgid(arg as isize).ok_or(EINVAL)?;
                tun.group.store(group, Ordering::Relaxed);
            }
            _ => return Err(EINVAL),
        }
        Ok(0)
    })
}

// ---------------------------------------------------------------------------
// debugfs: <debugfs>/rust_tun/<ifname>/{flows,stats}.

/// `flows`: the flow count, then one line per flow with its RFS entry.
pub(crate) fn tun_show_flows(dev: &NetDevice, t: &mut TextBuf) -> core::fmt::Result {
    let flows = dev.tun().flows.snapshot().map_err(|_| core::fmt::Error)?;
    writeln!(t, "flow_count {}", flows.len())?;
    for f in flows.iter() {
        write!(
            t,
            "rxhash={:08x} rps_rxhash={:08x} queue={} age_ms={}",
            f.rxhash, f.rps_rxhash, f.queue_index, f.age_ms
        )?;
        match (f.rps_rxhash, sys::rps_sock_flow_entry(f.rps_rxhash)) {
            (0, _) | (_, None) => writeln!(t, " rfs_ent=none")?,
            (_, Some(ent)) => writeln!(t, " rfs_ent={:08x}", ent)?,
        }
    }
    Ok(())
}

/// `stats`: the mode and the RPS/RFS counters.
pub(crate) fn tun_show_stats(dev: &NetDevice, t: &mut TextBuf) -> core::fmt::Result {
    let tun = dev.tun();
    let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
    writeln!(
        t,
        "mode {}",
        if tun.unguarded {
            "unguarded"
        } else {
            "guarded"
        }
    )?;
    writeln!(t, "numqueues {}", tun.numqueues())?;
    writeln!(t, "numdisabled {}", tun.numdisabled.load(Ordering::Relaxed))?;
    writeln!(t, "flow_count {}", tun.flows.flow_count())?;
    writeln!(
        t,
        "flow_table {}",
        if tun.flows.has_pool() {
            "allocated"
        } else {
            "none"
        }
    )?;
    // The driver's own counters (the device's statistics add the core's).
    let s = &tun.stats;
    writeln!(t, "rx_packets {}", get(&s.rx_packets))?;
    writeln!(t, "rx_bytes {}", get(&s.rx_bytes))?;
    writeln!(t, "rx_dropped {}", get(&s.rx_dropped))?;
    writeln!(t, "tx_packets {}", get(&s.tx_packets))?;
    writeln!(t, "tx_bytes {}", get(&s.tx_bytes))?;
    writeln!(t, "tx_dropped {}", get(&s.tx_dropped))?;
    writeln!(t, "rps_hashes {}", get(&tun.stats.rps_hashes))?;
    writeln!(t, "rfs_records {}", get(&tun.stats.rfs_records))
}

// ---------------------------------------------------------------------------
// The module.

struct RustTun {
    // Dropped in this order: no new files, every device of ours goes, no
    // more device events, then the debugfs root.
    _misc: sys::MiscRegistration,
    _link: sys::LinkOpsRegistration,
    _notifier: sys::NotifierRegistration,
    _debugfs: Option<sys::Dentry>,
}

impl kernel::Module for RustTun {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = sys::debugfs_root_create();
        if let Some(root) = &debugfs {
            root.module_file(c_str!("jump_sites"), &sys::JUMP_SITES_FOPS);
            root.module_file(c_str!("micro_bench"), &sys::MICRO_BENCH_FOPS);
        }
        let notifier = sys::NotifierRegistration::register()?;
        let link = sys::LinkOpsRegistration::register()?;
        let misc = sys::MiscRegistration::register()?;
        pr_info!("Universal TUN/TAP device driver, hot path in Rust\n");
        Ok(Self {
            _misc: misc,
            _link: link,
            _notifier: notifier,
            _debugfs: debugfs,
        })
    }
}
