// SPDX-License-Identifier: GPL-2.0

//! rust_tun: the hot path of the kernel's TUN/TAP driver (`drivers/net/tun.c`)
//! in Rust.
//!
//! This is the crate root of `rust_tun.ko`. It holds the module, the
//! character device `/dev/net/rust_tun` (tun's ABI: same ioctl numbers, same
//! `struct ifreq`, same `struct tun_pi`) and the net device side. Functions
//! keep tun.c's names so the two files read side by side; where we differ on
//! purpose, the comment says so and `Documentation/rust_tun.rst` lists it.
//! All `unsafe` code is in `sys.rs`; this file is safe Rust.

use core::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::{Arc, ArcBorrow};
use kernel::uaccess::UserSlice;
use kernel::{c_str, ioctl};

mod bindings;
mod sys;

use sys::{
    errno, new_spinlock_bh, poll, DevKind, IovIter, NetDevice, NetDeviceBuilder, NetNs, PollTable,
    RcuArc, RcuDev, RcuReadGuard, Rtnl, SkBuff, SpinLockBh, WaitQueue,
};

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
/// header. tun.c builds paged skbs up to `MAX_SKB_FRAGS` pages instead; no
/// valid frame is larger than this.
const MAX_FRAME: usize = MAX_MTU as usize + ETH_HLEN + 4;
const ETH_HLEN: usize = bindings::ETH_HLEN as usize;

/// `IFF_*` flags of the tun ABI (`include/uapi/linux/if_tun.h`).
pub(crate) const IFF_TUN: u32 = bindings::IFF_TUN;
pub(crate) const IFF_TAP: u32 = bindings::IFF_TAP;
pub(crate) const IFF_NO_CARRIER: u32 = bindings::IFF_NO_CARRIER;
pub(crate) const IFF_NO_PI: u32 = bindings::IFF_NO_PI;
pub(crate) const IFF_ONE_QUEUE: u32 = bindings::IFF_ONE_QUEUE;
pub(crate) const IFF_MULTI_QUEUE: u32 = bindings::IFF_MULTI_QUEUE;
pub(crate) const IFF_PERSIST: u32 = bindings::IFF_PERSIST;
pub(crate) const IFF_TUN_EXCL: u32 = bindings::IFF_TUN_EXCL;
/// `TUN_TYPE_MASK`.
pub(crate) const TUN_TYPE_MASK: u32 = IFF_TUN | IFF_TAP;
/// `TUN_FEATURES`: the `TUNSETIFF` flags we implement. tun.c also has
/// `IFF_VNET_HDR` and `IFF_NAPI*`; like tun.c we mask out what we do not
/// implement, and `TUNGETFEATURES`/`TUNGETIFF` say so.
pub(crate) const TUN_FEATURES: u32 = IFF_NO_PI | IFF_ONE_QUEUE;
/// `TUN_PKT_STRIP`: the reader's buffer was too short for the packet.
const TUN_PKT_STRIP: u16 = bindings::TUN_PKT_STRIP as u16;

/// The tun ioctls, same numbers as `include/uapi/linux/if_tun.h`.
const TUNSETIFF: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 202);
const TUNSETPERSIST: u32 = ioctl::_IOW::<core::ffi::c_int>(b'T' as u32, 203);
const TUNGETFEATURES: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 207);
const TUNGETIFF: u32 = ioctl::_IOR::<core::ffi::c_uint>(b'T' as u32, 210);

/// `sizeof(struct ifreq)` on 64-bit: the `ifreq_len` tun copies.
const IFREQ_LEN: usize = 40;
const IFNAMSIZ: usize = bindings::IFNAMSIZ as usize;
/// `sizeof(struct tun_pi)`.
const TUN_PI_LEN: usize = 4;

const ETH_P_IP: u16 = (bindings::ETH_P_IP as u16).to_be();
const ETH_P_IPV6: u16 = (bindings::ETH_P_IPV6 as u16).to_be();

/// Device counters reported through `ndo_get_stats64`.
#[derive(Default)]
pub(crate) struct TunStats {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    rx_dropped: AtomicU64,
    tx_dropped: AtomicU64,
    rx_frame_errors: AtomicU64,
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
pub(crate) struct Tun {
    /// `IFF_TUN`/`IFF_TAP`, `TUN_FEATURES` and `IFF_PERSIST`; written under rtnl.
    flags: AtomicU32,
    /// The attached queues, `tfiles[0..numqueues]`; RCU for the data path.
    tfiles: [RcuArc<TunFile>; MAX_TAP_QUEUES],
    /// Number of attached queues; written under rtnl.
    numqueues: AtomicU32,
    stats: TunStats,
}

impl Tun {
    fn new(flags: u32) -> Self {
        Self {
            flags: AtomicU32::new(flags),
            tfiles: [const { RcuArc::null() }; MAX_TAP_QUEUES],
            numqueues: AtomicU32::new(0),
            stats: TunStats::default(),
        }
    }

    fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    fn kind(&self) -> DevKind {
        if self.flags() & IFF_TAP != 0 {
            DevKind::Tap
        } else {
            DevKind::Tun
        }
    }
}

/// The bounded transmit ring of one queue (`tfile->tx_ring`, a `ptr_ring`
/// in tun.c): packets sent by the stack, waiting for the reader.
struct TxRing {
    slots: KVec<Option<SkBuff>>,
    head: usize,
    len: usize,
}

impl TxRing {
    const fn new() -> Self {
        Self {
            slots: KVec::new(),
            head: 0,
            len: 0,
        }
    }

    /// `ptr_ring_produce()`: gives the packet back when the ring is full.
    fn produce(&mut self, skb: SkBuff) -> core::result::Result<(), SkBuff> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(skb);
        }
        self.slots[(self.head + self.len) % cap] = Some(skb);
        self.len += 1;
        Ok(())
    }

    /// `ptr_ring_consume()`.
    fn consume(&mut self) -> Option<SkBuff> {
        if self.len == 0 {
            return None;
        }
        let skb = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        skb
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `tun_queue_purge()`: drops every queued packet.
    fn purge(&mut self) {
        while self.consume().is_some() {}
    }

    /// Replaces the storage by `slots` (all `None`), keeping queued packets
    /// that fit and returning the rest to be dropped by the caller outside
    /// the lock.
    fn resize(&mut self, mut slots: KVec<Option<SkBuff>>) -> KVec<Option<SkBuff>> {
        let cap = slots.len();
        let mut n = 0;
        while n < cap {
            match self.consume() {
                Some(skb) => {
                    slots[n] = Some(skb);
                    n += 1;
                }
                None => break,
            }
        }
        self.head = 0;
        self.len = n;
        // What did not fit stays in the old storage, to be dropped outside
        // the lock.
        core::mem::replace(&mut self.slots, slots)
    }
}

/// `struct tun_file`: the state of one open file, that is one queue.
#[pin_data]
pub(crate) struct TunFile {
    #[pin]
    ring: SpinLockBh<TxRing>,
    /// Readers and pollers wait here (tun.c: the socket's wait queue).
    #[pin]
    wq: WaitQueue,
    /// `tfile->tun`: the attached device.
    tun: RcuDev,
    /// `tfile->queue_index`; written under rtnl.
    queue_index: AtomicU16,
    /// `sk_shutdown = RCV_SHUTDOWN`: the device went away under a reader.
    shutdown: AtomicBool,
    /// The opener's network namespace (tun.c: the socket's).
    net: NetNs,
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

/// `tun_attach()`: makes `tfile` queue `numqueues` of `dev`.
fn tun_attach(dev: &NetDevice, tfile: ArcBorrow<'_, TunFile>, rtnl: &Rtnl) -> Result {
    let tun = dev.tun();
    if tfile.tun.get_rtnl(rtnl).is_some() {
        return Err(EINVAL);
    }
    let n = tun.numqueues.load(Ordering::Relaxed) as usize;
    if tun.flags() & IFF_MULTI_QUEUE == 0 && n == 1 {
        return Err(EBUSY);
    }
    if n == MAX_TAP_QUEUES {
        return Err(E2BIG);
    }
    // The ring follows the device's tx_queue_len (tun.c: ptr_ring_resize).
    let qlen = dev.tx_queue_len().max(1) as usize;
    let mut slots = KVec::with_capacity(qlen, GFP_KERNEL)?;
    for _ in 0..qlen {
        slots.push(None, GFP_KERNEL)?;
    }
    let old = tfile.ring.lock().resize(slots);
    drop(old);

    tfile.queue_index.store(n as u16, Ordering::Relaxed);
    tfile.shutdown.store(false, Ordering::Relaxed);
    drop(tun.tfiles[n].replace(Some(tfile.into()), rtnl));
    tfile.tun.set(Some(dev), rtnl);
    tun.numqueues.store(n as u32 + 1, Ordering::Release);
    Ok(())
}

/// `__tun_detach()` with `clean`: the file is being closed.
fn __tun_detach(tfile: &TunFile, rtnl: &Rtnl) {
    let Some(dev) = tfile.tun.get_rtnl(rtnl) else {
        tfile.ring.lock().purge();
        return;
    };
    let tun = dev.tun();
    let index = tfile.queue_index.load(Ordering::Relaxed) as usize;
    let last = tun.numqueues.load(Ordering::Relaxed) as usize - 1;

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
    tfile.tun.set(None, rtnl);
    // Waits for a grace period: no transmitter sees this queue after it.
    drop(me);
    tfile.ring.lock().purge();

    if last == 0 {
        dev.carrier_off();
        if tun.flags() & IFF_PERSIST == 0 && dev.is_registered() {
            dev.unregister(rtnl);
        }
    }
}

/// `tun_detach()`.
fn tun_detach(tfile: &TunFile) {
    let rtnl = Rtnl::lock();
    let dev = tfile.tun.get_rtnl(&rtnl).map(NetDevice::hold);
    __tun_detach(tfile, &rtnl);
    if let Some(dev) = dev {
        if dev.is_registered() {
            dev.state_change(&rtnl);
        }
    }
}

/// `tun_net_uninit()` / `tun_detach_all()`: the device is being unregistered;
/// detach every queue and wake its readers.
pub(crate) fn tun_net_uninit(dev: &NetDevice, rtnl: &Rtnl) {
    let tun = dev.tun();
    let n = tun.numqueues.load(Ordering::Relaxed) as usize;
    for slot in &tun.tfiles[..n] {
        if let Some(tfile) = slot.get_rtnl(rtnl) {
            tfile.shutdown.store(true, Ordering::Relaxed);
            tfile.tun.set(None, rtnl);
            tfile.wq.wake_up_poll(poll::IN | poll::ERR);
        }
    }
    tun.numqueues.store(0, Ordering::Release);
    for slot in &tun.tfiles[..n] {
        if let Some(old) = slot.replace(None, rtnl) {
            // `into_arc` waits for the grace period before the purge.
            old.into_arc().ring.lock().purge();
        }
    }
    if tun.flags() & IFF_PERSIST != 0 {
        sys::module_put();
    }
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

/// `tun_net_xmit()`: queue the packet on the ring of its queue and wake the
/// reader; drop it when no file is attached or the ring is full.
pub(crate) fn tun_net_xmit(mut skb: SkBuff, dev: &NetDevice) -> bindings::netdev_tx_t {
    let tun = dev.tun();
    let txq = usize::from(skb.queue_mapping());
    let rcu = RcuReadGuard::new();
    let Some(tfile) = tun.tfiles.get(txq).and_then(|slot| slot.get(&rcu)) else {
        inc(&tun.stats.tx_dropped, 1);
        return sys::NET_XMIT_DROP;
    };

    // Orphan the skb: we may hold it for an indefinite time.
    skb.orphan();

    let full = tfile.ring.lock().produce(skb);
    if let Err(skb) = full {
        inc(&tun.stats.tx_dropped, 1);
        drop(skb);
        return sys::NET_XMIT_DROP;
    }
    // Notify and wake up the reader.
    tfile.wq.wake_up_poll(poll::IN);
    sys::NETDEV_TX_OK
}

// ---------------------------------------------------------------------------
// The character device.

/// `tun_chr_open()`.
pub(crate) fn tun_chr_open() -> Result<Arc<TunFile>> {
    Arc::pin_init(
        pin_init!(TunFile {
            ring <- new_spinlock_bh!(TxRing::new(), "TunFile::ring"),
            wq <- WaitQueue::new(c_str!("TunFile::wq"), kernel::static_lock_class!()),
            tun: RcuDev::null(),
            queue_index: AtomicU16::new(0),
            shutdown: AtomicBool::new(false),
            net: NetNs::current(),
        }),
        GFP_KERNEL,
    )
}

/// `tun_chr_close()`.
pub(crate) fn tun_chr_close(tfile: Arc<TunFile>) {
    tun_detach(&tfile);
}

/// `tun_ring_recv()`: the next packet, waiting for one unless `noblock`.
fn tun_ring_recv(tfile: &TunFile, noblock: bool) -> Result<SkBuff> {
    if let Some(skb) = tfile.ring.lock().consume() {
        return Ok(skb);
    }
    if noblock {
        return Err(EAGAIN);
    }
    tfile.wq.wait_interruptible(|| {
        if let Some(skb) = tfile.ring.lock().consume() {
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

/// `tun_get_user()`: builds a packet from the writer's buffer and hands it
/// to the stack.
fn tun_get_user(dev: &NetDevice, from: &mut IovIter) -> Result<usize> {
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
    let mut skb = SkBuff::alloc(dev, len as u32).map_err(drop)?;
    let data = skb.put(len as u32);
    from.copy_from(data).map_err(drop)?;
    let first = data.first().copied();

    match kind {
        DevKind::Tun => {
            if flags & IFF_NO_PI != 0 {
                proto = match first.map(|b| b >> 4) {
                    Some(4) => ETH_P_IP,
                    Some(6) => ETH_P_IPV6,
                    _ => return Err(drop(EINVAL)),
                };
            }
            skb.set_l3(proto, dev);
        }
        DevKind::Tap => skb.eth_type_trans(dev),
    }

    if dev.flags() & sys::IFF_UP == 0 {
        return Err(drop(EIO));
    }

    skb.netif_rx();
    inc(&tun.stats.rx_packets, 1);
    inc(&tun.stats.rx_bytes, len as u64);
    Ok(total)
}

/// `tun_chr_write_iter()`.
pub(crate) fn tun_chr_write_iter(
    tfile: &TunFile,
    from: &mut IovIter,
    _noblock: bool,
) -> Result<usize> {
    let dev = tfile.tun.get().ok_or_else(errno::EBADFD)?;
    tun_get_user(&dev, from)
}

/// `tun_chr_poll()`.
pub(crate) fn tun_chr_poll(tfile: &TunFile, table: &PollTable) -> u32 {
    let Some(dev) = tfile.tun.get() else {
        return poll::ERR;
    };
    table.wait(&tfile.wq);

    let mut mask = 0;
    if !tfile.ring.lock().is_empty() {
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
    tun.flags() & (TUN_FEATURES | IFF_PERSIST | TUN_TYPE_MASK | IFF_MULTI_QUEUE)
}

/// `tun_permitted()`: may the caller attach to `tun`? Devices have no owner
/// or group yet, so only `CAP_NET_ADMIN` in the opener's namespace may.
fn tun_permitted(tfile: &TunFile) -> bool {
    tfile.net.capable_net_admin()
}

/// `tun_set_iff()`: attaches the file to the named device, creating it if
/// it does not exist.
fn tun_set_iff(tfile: ArcBorrow<'_, TunFile>, ifr: &mut IfReq, rtnl: &Rtnl) -> Result {
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
            if !tun_permitted(&tfile) {
                return Err(EPERM);
            }
            tun_attach(dev, tfile, rtnl)?;
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
            // Multi-queue devices are not implemented yet: refuse rather
            // than pretend (TUNGETFEATURES does not offer the flag).
            if flags & IFF_MULTI_QUEUE != 0 {
                return Err(EINVAL);
            }
            let name = if ifr.name().is_empty() {
                default_name
            } else {
                ifr.name()
            };
            let type_flag = flags
                & (if kind == DevKind::Tun {
                    IFF_TUN
                } else {
                    IFF_TAP
                });
            let tun = Tun::new(type_flag | (flags & TUN_FEATURES));
            let builder = NetDeviceBuilder::alloc(name, kind, 1, &tfile.net, tun)?;
            let dev = builder.register(rtnl)?;
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

/// `tun_chr_ioctl()` / `__tun_chr_ioctl()`.
pub(crate) fn tun_chr_ioctl(tfile: ArcBorrow<'_, TunFile>, cmd: u32, arg: usize) -> Result<isize> {
    let mut ifr = IfReq([0; IFREQ_LEN]);
    if cmd == TUNSETIFF {
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

    let rtnl = Rtnl::lock();
    let dev = tfile.tun.get_rtnl(&rtnl);
    if cmd == TUNSETIFF {
        if dev.is_some() {
            return Err(EEXIST);
        }
        ifr.0[IFNAMSIZ - 1] = 0;
        tun_set_iff(tfile, &mut ifr, &rtnl)?;
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
        _ => return Err(EINVAL),
    }
    Ok(0)
}

// ---------------------------------------------------------------------------
// The module.

struct RustTun {
    // Dropped in this order: no new files, then every device of ours goes.
    _misc: sys::MiscRegistration,
    _link: sys::LinkOpsRegistration,
}

impl kernel::Module for RustTun {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let link = sys::LinkOpsRegistration::register()?;
        let misc = sys::MiscRegistration::register()?;
        pr_info!("Universal TUN/TAP device driver, hot path in Rust\n");
        Ok(Self {
            _misc: misc,
            _link: link,
        })
    }
}
