// SPDX-License-Identifier: GPL-2.0

//! rust_tun: the hot path of the kernel's TUN/TAP driver (`drivers/net/tun.c`)
//! in Rust.
//!
//! This is the crate root of `rust_tun.ko`: the module, the driver's state
//! (`Tun`, `TunFile`, tun.c's `tun_struct` and `tun_file`) and the static
//! tables the kernel sees. The rest of the driver is split as tun.c reads:
//!
//! - `queue.rs`: attaching and detaching queues, device teardown, the
//!   netdevice notifier;
//! - `xmit.rs`: the net device ops (transmit, queue selection, statistics);
//! - `chr.rs`: the character device's read, write and poll;
//! - `ioctl.rs`: the ioctls and their ABI structures, device creation;
//! - `flow_table.rs`, `flow_logic.rs`: the flow table;
//! - `rps.rs`: the static-key guarded RPS/RFS steps;
//! - `debugfs.rs`: the debugfs files; `bench.rs`: the micro-benchmark.
//!
//! Functions keep tun.c's names so the two read side by side; where we
//! differ on purpose, the comment says so and `Documentation/rust_tun.rst`
//! lists it. All `unsafe` code is in `sys.rs` and `sys/`; the driver is
//! safe Rust.

// `try_pin_init!` of `Tun`'s many fields expands past the default limit.
#![recursion_limit = "256"]
// The driver is safe Rust: `unsafe` is allowed in `sys/` (and the
// generated bindings it wraps) alone, and the compiler checks it.
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Arc;

mod bench;
#[allow(unsafe_code)]
mod bindings;
mod chr;
#[cfg(rtun_compile_fail)]
mod compile_fail;
mod debugfs;
mod flow_logic;
mod flow_table;
mod iff;
mod ioctl;
mod kver;
mod link;
mod napi;
mod queue;
mod rps;
#[allow(unsafe_code)]
mod sys;
mod txfilter;
mod vnet;
mod xdp;
mod xmit;

/// rust_tun's module parameters (`tun_params.c`, where each is described).
mod params {
    crate::sys::module_params! {
        /// `unguarded`: devices created while it is set behave as tun did
        /// before the `rps_needed`/`rfs_needed` guards.
        pub(crate) fn unguarded() -> bool;
        /// `dropin` (read-only after load): serve `/dev/net/tun`.
        pub(crate) fn dropin() -> bool;
        /// `flow_ageing_ms`, in jiffies (`msecs_to_jiffies()`).
        pub(crate) fn flow_ageing() -> u64;
        /// `micro_bench_calls` (100,000 to 100,000,000).
        pub(crate) fn micro_bench_calls() -> u32;
    }
}

use flow_table::{FlowTable, Flows};
use link::{link_ops, tun_default_link_ksettings};
use sys::tun::{Proto, Sock, SockFprog, TunSecurity};
use sys::xdp::{QueueXdpRxq, XdpProg};
use sys::{
    DebugfsFileVTable, DebugfsRoot, DevDebugfs, Features, FileVTable, LinkKsettings, MiscDevice,
    MiscDeviceOptions, NetDevice, NetDeviceNotifierVTable, NetDeviceVTable, NetNs, PerCpuCounters,
    RcuArc, RcuDev, RtnlLocked, SkFilterProg, Stats64, TxRing,
};
use txfilter::TxFilter;

// The configurations this module is built and tested for; anything else
// fails here, with the reason, rather than compiling code nobody runs.
#[cfg(not(target_arch = "x86_64"))]
compile_error!("rust_tun supports x86_64 only: its jump-label sites, per-CPU reads and micro-benchmark are x86_64 code");
#[cfg(not(CONFIG_SMP))]
compile_error!("rust_tun needs CONFIG_SMP: its subject is RPS/RFS bookkeeping, which exists only on SMP kernels");
#[cfg(not(CONFIG_RPS))]
compile_error!("rust_tun needs CONFIG_RPS (on with SMP and SYSFS): the rps_needed/rfs_needed guards are its subject");
// No check of CONFIG_PREEMPT_RT or CONFIG_INLINE_SPIN_LOCK: every lock is
// C's own (`spin_lock()`/`spin_lock_bh()` through helpers/spinlock.c,
// `spin_lock_init()` through the kernel's `__spin_lock_init` helper), so
// either configuration compiles its own locking; nothing here takes a raw
// spinlock or disables preemption or interrupts.

sys::compat::module_compat! {
    type: RustTun,
    name: "rust_tun",
    author: "rust-tun developers",
    description: "Universal TUN/TAP device driver, hot path in Rust",
    license: "GPL",
}

/// `MAX_TAP_QUEUES`.
pub(crate) const MAX_TAP_QUEUES: usize = 256;
/// `TUN_READQ_SIZE`: the default `tx_queue_len`, hence ring length.
pub(crate) const TUN_READQ_SIZE: u32 = 500;
/// `MIN_MTU`.
pub(crate) const MIN_MTU: u32 = 68;
/// `MAX_MTU`.
pub(crate) const MAX_MTU: u32 = 65535;

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
pub(crate) const IFF_VNET_HDR: u32 = bindings::IFF_VNET_HDR;
pub(crate) const IFF_NAPI: u32 = bindings::IFF_NAPI;
pub(crate) const IFF_NAPI_FRAGS: u32 = bindings::IFF_NAPI_FRAGS;
pub(crate) const IFF_NOFILTER: u32 = bindings::IFF_NOFILTER;
/// 7.3's `IFF_BACKPRESSURE`; 0 on 6.12, whose tun.c has no such flag
/// (`bindings_helper.h`): there it is in no mask and every test of it is
/// false at compile time.
pub(crate) const IFF_BACKPRESSURE: u32 = bindings::RTUN_IFF_BACKPRESSURE;

/// Whether `flags` ask for `IFF_BACKPRESSURE` (always false on 6.12, where
/// the flag is 0 and the test compiles away).
#[allow(clippy::bad_bit_mask)] // IFF_BACKPRESSURE is 0 on 6.12.
#[inline(always)]
pub(crate) const fn tun_backpressure(flags: u32) -> bool {
    flags & IFF_BACKPRESSURE != 0
}
/// `TUN_TYPE_MASK`.
pub(crate) const TUN_TYPE_MASK: u32 = IFF_TUN | IFF_TAP;
/// `TUN_FEATURES`: the `TUNSETIFF` flags we implement, tun.c's.
pub(crate) const TUN_FEATURES: u32 = IFF_NO_PI
    | IFF_ONE_QUEUE
    | IFF_VNET_HDR
    | IFF_MULTI_QUEUE
    | IFF_NAPI
    | IFF_NAPI_FRAGS
    | IFF_BACKPRESSURE;
/// `TUN_USER_FEATURES`: the offloads `TUNSETOFFLOAD` turns on and off
/// (7.3's include UDP-tunnel GSO and its outer checksum).
pub(crate) const TUN_USER_FEATURES: Features = Features::HW_CSUM
    .union(Features::TSO_ECN)
    .union(Features::TSO)
    .union(Features::TSO6)
    .union(Features::GSO_UDP_L4)
    .union(if kver::HAS_UDP_TUNNEL_GSO {
        Features::GSO_UDP_TUNNEL.union(Features::GSO_UDP_TUNNEL_CSUM)
    } else {
        Features::empty()
    });
/// `TUN_VNET_LE`: `TUNSETVNETLE` was set (kept in `tun->flags` as tun.c).
pub(crate) const TUN_VNET_LE: u32 = 0x8000_0000;
/// `sizeof(struct virtio_net_hdr)`: the default and least vnet header size
/// (`TUNSETVNETHDRSZ`).
pub(crate) const VNET_HDR_SZ_MIN: i32 = 10;

/// A device of this driver.
pub(crate) type TunDev = NetDevice<Tun>;

/// The counters the driver keeps beside the device's per-CPU ones
/// (`dev->tstats`: packets and bytes, as tun.c's
/// `NETDEV_PCPU_STAT_TSTATS`) and the core's per-CPU drop counters
/// (`dev_core_stats_*_inc()`, as tun.c).
pub(crate) struct TunStats {
    /// `tun->rx_frame_errors`: writes with a bad virtio-net header (an
    /// atomic, as tun.c's: it only moves on errors).
    rx_frame_errors: AtomicU64,
    /// Packets dropped in bulk when a queue goes: its ring's (transmitted,
    /// never read). tun.c does not count them; we do, so that the counters
    /// balance.
    tx_purged: AtomicU64,
    /// Ours: [`RPS_HASHES`], RFS flow hashes computed on transmit
    /// (`tun_automq_xmit`), [`RFS_RECORDS`], RFS record steps run
    /// (`sock_rps_record_flow_hash` called), and [`WRITE_DROPS`], writes
    /// the driver dropped (also in the core's `rx_dropped`, which counts
    /// the stack's own drops of written packets too); per CPU, as they are
    /// counted on the hot paths.
    pcpu: PerCpuCounters<3>,
}

/// Index of [`TunStats`]'s per-CPU count of RPS hashes.
const RPS_HASHES: usize = 0;
/// Index of [`TunStats`]'s per-CPU count of RFS record steps.
const RFS_RECORDS: usize = 1;
/// Index of [`TunStats`]'s per-CPU count of writes the driver dropped.
const WRITE_DROPS: usize = 2;

impl TunStats {
    fn new() -> Result<Self> {
        Ok(Self {
            rx_frame_errors: AtomicU64::new(0),
            tx_purged: AtomicU64::new(0),
            pcpu: PerCpuCounters::new()?,
        })
    }

    /// A write with a bad virtio-net header (`rx_frame_errors`).
    pub(crate) fn rx_frame_errors_inc(&self) {
        self.rx_frame_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// `n` packets dropped with a queue's ring (`tx_dropped`).
    pub(crate) fn tx_purged_add(&self, n: u64) {
        self.tx_purged.fetch_add(n, Ordering::Relaxed);
    }

    /// An RPS flow hash computed on transmit, on this CPU.
    pub(crate) fn rps_hashes_inc(&self) {
        self.pcpu.inc::<RPS_HASHES>();
    }

    /// An RFS record step, on this CPU.
    pub(crate) fn rfs_records_inc(&self) {
        self.pcpu.inc::<RFS_RECORDS>();
    }

    /// A write the driver dropped, on this CPU.
    pub(crate) fn write_drops_inc(&self) {
        self.pcpu.inc::<WRITE_DROPS>();
    }

    /// What `ndo_get_stats64` adds to the per-CPU counters.
    pub(crate) fn stats64(&self) -> Stats64 {
        Stats64 {
            tx_dropped: self.tx_purged.load(Ordering::Relaxed),
            rx_frame_errors: self.rx_frame_errors.load(Ordering::Relaxed),
            ..Stats64::default()
        }
    }

    /// The per-CPU counts, summed: RPS hashes, RFS records, write drops.
    pub(crate) fn pcpu_sums(&self) -> (u64, u64, u64) {
        (
            self.pcpu.sum::<RPS_HASHES>(),
            self.pcpu.sum::<RFS_RECORDS>(),
            self.pcpu.sum::<WRITE_DROPS>(),
        )
    }
}

/// What kind of device (`IFF_TUN` or `IFF_TAP`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevKind {
    /// Point-to-point L3 device (`IFF_TUN`).
    Tun,
    /// Ethernet device (`IFF_TAP`).
    Tap,
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
    /// `tun->sndbuf`: every attached file's send buffer (`TUNSETSNDBUF`).
    sndbuf: AtomicI32,
    /// `tun->txflt`: the TAP destination filter (`TUNSETTXFILTER`).
    txflt: TxFilter,
    /// Ours: whether the TAP filter or the eBPF filter (`filter_prog`) is
    /// on, so that the transmit path tests both with one load while
    /// neither is ([`Tun::update_tx_filters`]); written under rtnl.
    tx_filters: AtomicBool,
    /// `tun->fprog`: the classic BPF program of `TUNATTACHFILTER`, which
    /// each attached file's socket runs on transmit.
    fprog: RtnlLocked<SockFprog>,
    /// `tun->steering_prog`: the eBPF program of `TUNSETSTEERINGEBPF`,
    /// which picks each transmitted packet's queue in place of the flow
    /// table; RCU for the data path, replaced under rtnl.
    steering_prog: RcuArc<SkFilterProg>,
    /// `tun->filter_prog`: the eBPF program of `TUNSETFILTEREBPF`, which
    /// drops (0) or trims each transmitted packet; as `steering_prog`.
    filter_prog: RcuArc<SkFilterProg>,
    /// `tun->xdp_prog`: the XDP program of a TAP (`ndo_bpf`), run on what
    /// is written to it; RCU for the data path, replaced under rtnl.
    xdp_prog: RcuArc<XdpProg>,
    /// `tun->filter_attached`; rtnl.
    filter_attached: AtomicBool,
    /// `tun->msg_enable` (`TUNSETDEBUG`, ethtool msglvl).
    msg_enable: AtomicU32,
    /// `tun->vnet_hdr_sz` (`TUNSETVNETHDRSZ`).
    vnet_hdr_sz: AtomicI32,
    /// `tun->set_features`: the offloads of the last `TUNSETOFFLOAD`,
    /// which `ndo_fix_features` lets through; rtnl.
    set_features: AtomicU64,
    /// `tun->link_ksettings`: what ethtool reports of the link and stores
    /// when told (`ethtool -s`).
    link_ksettings: RtnlLocked<LinkKsettings>,
    /// `tun->rx_batched`: ethtool's `rx-frames` (`ethtool -C`), at most
    /// `NAPI_POLL_WEIGHT`; see `chr::tun_rx_batched`.
    rx_batched: AtomicU32,
    /// Behave like tun before the rps_needed/rfs_needed patches. Fixed at
    /// creation from the `unguarded` module parameter; the transmit path
    /// reads it from the device's ops table, not from here.
    unguarded: bool,
    /// `tun->security`: the device's LSM blob, allocated by
    /// `tun_net_init()` (`ndo_init`) and freed with the `Tun`, as tun.c's
    /// `tun_free_netdev()` frees it; rtnl.
    security: RtnlLocked<TunSecurity>,
    /// tun.c's `tun->file` and `tun->ifr`'s flags: the file creating the
    /// device and its `TUNSETIFF` flags, which `ndo_init` (`tun_net_init`)
    /// attaches as the first queue; empty from then on.
    file: RtnlLocked<Option<(Arc<TunFile>, u32)>>,
    /// `tun->flows` and its ageing timer.
    #[pin]
    flows: Flows,
    stats: TunStats,
    debugfs: DevDebugfs,
}

/// `INVALID_UID`/`INVALID_GID`: no owner or group set.
pub(crate) const INVALID_ID: u32 = u32::MAX;

impl Tun {
    fn new(
        flags: u32,
        unguarded: bool,
        sndbuf: i32,
        file: (Arc<TunFile>, u32),
    ) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            flags: AtomicU32::new(flags),
            tfiles: [const { RcuArc::null() }; MAX_TAP_QUEUES],
            numqueues: AtomicU32::new(0),
            disabled: RtnlLocked::new(None),
            numdisabled: AtomicU32::new(0),
            owner: AtomicU32::new(INVALID_ID),
            group: AtomicU32::new(INVALID_ID),
            sndbuf: AtomicI32::new(sndbuf),
            txflt: TxFilter::new(),
            tx_filters: AtomicBool::new(false),
            fprog: RtnlLocked::new(SockFprog::default()),
            steering_prog: RcuArc::null(),
            filter_prog: RcuArc::null(),
            xdp_prog: RcuArc::null(),
            filter_attached: AtomicBool::new(false),
            msg_enable: AtomicU32::new(0),
            vnet_hdr_sz: AtomicI32::new(VNET_HDR_SZ_MIN),
            set_features: AtomicU64::new(0),
            link_ksettings: RtnlLocked::new(tun_default_link_ksettings()),
            rx_batched: AtomicU32::new(0),
            unguarded,
            security: RtnlLocked::new(TunSecurity::none()),
            file: RtnlLocked::new(Some(file)),
            flows <- FlowTable::new(params::flow_ageing()),
            stats: TunStats::new()?,
            debugfs: DevDebugfs::new(),
        }? Error)
    }

    fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// `tun->vnet_hdr_sz`, as a size: never below `VNET_HDR_SZ_MIN`
    /// (`TUNSETVNETHDRSZ` refuses less), so the cast through `u32` keeps it
    /// and tells the compiler it is below 4 GB (no overflow check where it
    /// is added to a packet's length).
    fn vnet_hdr_size(&self) -> usize {
        self.vnet_hdr_sz.load(Ordering::Relaxed) as u32 as usize
    }

    /// Sets `tx_filters` after the TAP filter or the eBPF filter changed
    /// (under rtnl, as both change).
    fn update_tx_filters(&self, _rtnl: &sys::Rtnl<'_>) {
        let on = self.txflt.is_on() || self.filter_prog.is_some();
        self.tx_filters.store(on, Ordering::Relaxed);
    }

    fn numqueues(&self) -> u32 {
        self.numqueues.load(Ordering::Relaxed)
    }

    fn numdisabled(&self) -> u32 {
        self.numdisabled.load(Ordering::Relaxed)
    }

    fn kind(&self) -> DevKind {
        if self.flags() & IFF_TAP != 0 {
            DevKind::Tap
        } else {
            DevKind::Tun
        }
    }
}

/// `struct tun_file`: the state of one open file, that is one queue.
#[pin_data]
pub(crate) struct TunFile {
    /// `tfile->tx_ring`: packets from the stack, waiting for the reader.
    #[pin]
    ring: TxRing,
    /// `tfile->tun`: the device, while attached or detached with
    /// `TUNSETQUEUE` (as in tun.c, a detached file still reads and writes).
    tun: RcuDev<Tun>,
    /// `tfile->detached`: the device this file is detached from; rtnl.
    detached: RcuDev<Tun>,
    /// `tfile->queue_index`; written under rtnl.
    queue_index: AtomicU16,
    /// `tfile->xdp_rxq`: the queue as the device's XDP program sees it.
    xdp_rxq: QueueXdpRxq,
    /// `sk_shutdown = RCV_SHUTDOWN`: the device went away under a reader.
    shutdown: AtomicBool,
    /// The opener's network namespace (tun.c: the socket's).
    net: NetNs,
    /// The next file on the device's disabled list (tun.c: `tfile->next`).
    next_disabled: RtnlLocked<Option<Arc<TunFile>>>,
    /// tun.c's `tfile->socket`/`tfile->sk`: send-buffer accounting, the
    /// classic BPF filter, `SIOCGSKNS`.
    sock: Sock,
    /// `tfile->ifindex`: the index `TUNSETIFINDEX` asks the device to get.
    ifindex: AtomicI32,
    /// `tfile->flags & TUN_FASYNC`: `O_ASYNC` is on, so each queued packet
    /// signals the file's owner (`kill_fasync()` on the socket's list).
    fasync: AtomicBool,
}

// The socket stands for the file (`tfile->socket.file`) while it is open.
sys::tun::impl_file_socket!(TunFile, sock);

// ---------------------------------------------------------------------------
// What the kernel sees: the driver's tables, built at compile time from the
// traits the driver implements (`sys/` turns each into its C table).

/// Drop-in mode (the `dropin` module parameter, fixed at load): rust_tun
/// stands in for tun.ko.
pub(crate) fn dropin() -> bool {
    params::dropin()
}

/// The sockets of open files (tun.c's `tun_proto`).
static TUN_PROTO: Proto = Proto::new::<chr::TunChr>(b"rust_tun");

/// The device ops: TUN guarded, TUN unguarded, TAP guarded, TAP unguarded.
/// The mode is fixed per device by its ops, so the transmit path pays
/// nothing to know it (`xmit::TunNetDev<UNGUARDED>`).
static NETDEV_OPS: [NetDeviceVTable<Tun>; 4] = [
    NetDeviceVTable::new::<xmit::TunNetDev<false>>(),
    NetDeviceVTable::new::<xmit::TunNetDev<true>>(),
    // `tap_netdev_ops`: an Ethernet device's address ops, and frames
    // handed on as they are.
    // XDP: TAP only, as tun.c.
    NetDeviceVTable::new::<xmit::TunNetDev<false>>()
        .eth_addr()
        .passthru_features_check()
        .xdp::<xmit::TunNetDev<false>>(),
    NetDeviceVTable::new::<xmit::TunNetDev<true>>()
        .eth_addr()
        .passthru_features_check()
        .xdp::<xmit::TunNetDev<true>>(),
];

/// The netdevice notifier (`tun_notifier_block`).
static TUN_NOTIFIER: NetDeviceNotifierVTable = NetDeviceNotifierVTable::new::<queue::TunEvents>();

/// The character device (tun.c's `tun_miscdev`): `/dev/net/rust_tun` with
/// a dynamic minor beside tun.ko, `/dev/net/tun` (minor 200) in drop-in
/// mode.
static TUN_FOPS: FileVTable = FileVTable::new::<chr::TunChr>();

// tun.ko's exports for vhost-net, as `rtun_*` (sys/vhost.rs).
sys::tun::vhost::export_tun_files!(chr::TunChr, TUN_FOPS);
static TUN_MISCDEV: MiscDevice = MiscDevice::new(MiscDeviceOptions {
    name: c_str!("rust_tun"),
    nodename: Some(c_str!("net/rust_tun")),
    minor: None,
    mode: 0o666,
    fops: &TUN_FOPS,
});
static DROPIN_MISCDEV: MiscDevice = MiscDevice::new(MiscDeviceOptions {
    name: c_str!("tun"),
    nodename: Some(c_str!("net/tun")),
    minor: Some(bindings::RTUN_TUN_MINOR as u8),
    mode: 0o666,
    fops: &TUN_FOPS,
});

/// `<debugfs>/rust_tun` and its files.
static DEBUGFS_ROOT: DebugfsRoot = DebugfsRoot::new();
static JUMP_SITES_FOPS: DebugfsFileVTable = DebugfsFileVTable::new::<debugfs::JumpSites>();
static MICRO_BENCH_FOPS: DebugfsFileVTable = DebugfsFileVTable::new::<bench::MicroBench>();
#[cfg(rtun_helpers_oracle)]
static HELPERS_ORACLE_FOPS: DebugfsFileVTable = DebugfsFileVTable::new::<debugfs::HelpersOracle>();
static DEV_FLOWS_FOPS: DebugfsFileVTable<Tun> = DebugfsFileVTable::new_dev::<debugfs::Flows>();
static DEV_STATS_FOPS: DebugfsFileVTable<Tun> = DebugfsFileVTable::new_dev::<debugfs::Stats>();

// ---------------------------------------------------------------------------
// The module.

struct RustTun {
    // Dropped in this order: no new files, every device of ours goes, no
    // more device events, then the debugfs root.
    _misc: sys::MiscDeviceRegistration,
    _link: sys::RtnlLinkRegistration<Tun>,
    _notifier: sys::NetDeviceNotifierRegistration,
    _debugfs: Option<sys::DebugfsRootRegistration>,
}

impl kernel::Module for RustTun {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = DEBUGFS_ROOT.create(c_str!("rust_tun"));
        if let Some(root) = &debugfs {
            root.dir().text_file(c_str!("jump_sites"), &JUMP_SITES_FOPS);
            root.dir()
                .text_file(c_str!("micro_bench"), &MICRO_BENCH_FOPS);
            #[cfg(rtun_helpers_oracle)]
            root.dir()
                .text_file(c_str!("helpers_oracle"), &HELPERS_ORACLE_FOPS);
        }
        let notifier = sys::NetDeviceNotifierRegistration::register(&TUN_NOTIFIER)?;
        let link = sys::RtnlLinkRegistration::register(link_ops()).inspect_err(|e| {
            if dropin() && *e == EEXIST {
                pr_err!("dropin: rtnl link kind \"tun\" is registered already (tun.ko loaded?)\n");
            }
        })?;
        let misc = if dropin() {
            &DROPIN_MISCDEV
        } else {
            &TUN_MISCDEV
        };
        let misc = sys::MiscDeviceRegistration::register(misc).inspect_err(|e| {
            if dropin() && *e == EBUSY {
                pr_err!(
                    "dropin: misc minor 200 (/dev/net/tun) is taken already (tun.ko loaded?)\n"
                );
            }
        })?;
        if dropin() {
            pr_info!(
                "Universal TUN/TAP device driver, hot path in Rust, as /dev/net/tun (built for Linux {})\n",
                sys::compat::KERNEL
            );
        } else {
            pr_info!(
                "Universal TUN/TAP device driver, hot path in Rust (built for Linux {})\n",
                sys::compat::KERNEL
            );
        }
        Ok(Self {
            _misc: misc,
            _link: link,
            _notifier: notifier,
            _debugfs: debugfs,
        })
    }
}
