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

use core::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};
use kernel::c_str;
use kernel::prelude::*;
use kernel::sync::Arc;

mod bench;
mod bindings;
mod chr;
#[cfg(rtun_compile_fail)]
mod compile_fail;
mod debugfs;
mod flow_logic;
mod flow_table;
mod ioctl;
mod queue;
mod rps;
mod sys;
mod xmit;

use flow_table::FlowTable;
use sys::{
    DebugfsFops, DebugfsRoot, DevDebugfs, DevOps, DrvInfo, FileOperations, LinkOps, MiscDevice,
    NetDevice, NetDriver, NetNs, Notifier, RcuArc, RcuDev, RtnlLocked, SkbRing, WaitQueue,
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
/// `TUN_TYPE_MASK`.
pub(crate) const TUN_TYPE_MASK: u32 = IFF_TUN | IFF_TAP;
/// `TUN_FEATURES`: the `TUNSETIFF` flags we implement. tun.c also has
/// `IFF_VNET_HDR` and `IFF_NAPI*`; like tun.c we mask out what we do not
/// implement, and `TUNGETFEATURES`/`TUNGETIFF` say so.
pub(crate) const TUN_FEATURES: u32 = IFF_NO_PI | IFF_ONE_QUEUE | IFF_MULTI_QUEUE;

/// A device of this driver.
pub(crate) type TunDev = NetDevice<Tun>;

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

fn inc(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Ordering::Relaxed);
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
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
    /// Behave like tun before the rps_needed/rfs_needed patches. Fixed at
    /// creation from the `unguarded` module parameter; the transmit path
    /// reads it from the device's ops table, not from here.
    unguarded: bool,
    /// `tun->flows` and its ageing timer.
    #[pin]
    flows: FlowTable,
    stats: TunStats,
    debugfs: DevDebugfs,
}

/// `INVALID_UID`/`INVALID_GID`: no owner or group set.
pub(crate) const INVALID_ID: u32 = u32::MAX;

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
    ring: SkbRing,
    /// Readers and pollers wait here (tun.c: the socket's wait queue).
    #[pin]
    wq: WaitQueue,
    /// `tfile->tun`: the device, while attached or detached with
    /// `TUNSETQUEUE` (as in tun.c, a detached file still reads and writes).
    tun: RcuDev<Tun>,
    /// `tfile->detached`: the device this file is detached from; rtnl.
    detached: RcuDev<Tun>,
    /// `tfile->queue_index`; written under rtnl.
    queue_index: AtomicU16,
    /// `sk_shutdown = RCV_SHUTDOWN`: the device went away under a reader.
    shutdown: AtomicBool,
    /// The opener's network namespace (tun.c: the socket's).
    net: NetNs,
    /// The next file on the device's disabled list (tun.c: `tfile->next`).
    next_disabled: RtnlLocked<Option<Arc<TunFile>>>,
}

// ---------------------------------------------------------------------------
// What the kernel sees: the driver's tables, built at compile time from the
// traits the driver implements (`sys/` turns each into its C table).

/// The driver, as the net device core sees it: set-up and ethtool.
pub(crate) struct TunDriver;

impl NetDriver for TunDriver {
    type Priv = Tun;
    const TX_QUEUE_LEN: u32 = TUN_READQ_SIZE;

    /// `tun_get_drvinfo()`.
    fn drvinfo(_dev: &TunDev) -> DrvInfo {
        DrvInfo {
            driver: b"rust_tun",
            version: b"0.1",
            bus_info: b"tun",
        }
    }
}

/// The rtnl link ops: `ip -d link` shows the kind, `ip link del` works,
/// module unload deletes what is left; they also mark a device as ours.
static TUN_LINK_OPS: LinkOps<Tun> = LinkOps::new::<TunDriver>(c_str!("rust_tun"));

/// The device ops: TUN guarded, TUN unguarded, TAP guarded, TAP unguarded.
/// The mode is fixed per device by its ops, so the transmit path pays
/// nothing to know it (`xmit::TunNetDev<UNGUARDED>`).
static NETDEV_OPS: [DevOps<Tun>; 4] = [
    DevOps::new::<xmit::TunNetDev<false>>(false),
    DevOps::new::<xmit::TunNetDev<true>>(false),
    DevOps::new::<xmit::TunNetDev<false>>(true),
    DevOps::new::<xmit::TunNetDev<true>>(true),
];

/// The netdevice notifier (`tun_notifier_block`).
static TUN_NOTIFIER: Notifier = Notifier::new::<queue::TunEvents>();

/// The character device `/dev/net/rust_tun` (tun.c's `tun_miscdev`).
static TUN_FOPS: FileOperations = FileOperations::new::<chr::TunChr>();
static TUN_MISCDEV: MiscDevice =
    MiscDevice::new(c_str!("rust_tun"), c_str!("net/rust_tun"), 0o666, &TUN_FOPS);

/// `<debugfs>/rust_tun` and its files.
static DEBUGFS_ROOT: DebugfsRoot = DebugfsRoot::new();
static JUMP_SITES_FOPS: DebugfsFops = DebugfsFops::text::<debugfs::JumpSites>();
static MICRO_BENCH_FOPS: DebugfsFops = DebugfsFops::text::<bench::MicroBench>();
static DEV_FLOWS_FOPS: DebugfsFops<Tun> = DebugfsFops::dev_text::<debugfs::Flows>();
static DEV_STATS_FOPS: DebugfsFops<Tun> = DebugfsFops::dev_text::<debugfs::Stats>();

// ---------------------------------------------------------------------------
// The module.

struct RustTun {
    // Dropped in this order: no new files, every device of ours goes, no
    // more device events, then the debugfs root.
    _misc: sys::MiscRegistration,
    _link: sys::LinkOpsRegistration<Tun>,
    _notifier: sys::NotifierRegistration,
    _debugfs: Option<sys::DebugfsRootRegistration>,
}

impl kernel::Module for RustTun {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = DEBUGFS_ROOT.create(c_str!("rust_tun"));
        if let Some(root) = &debugfs {
            root.dir().text_file(c_str!("jump_sites"), &JUMP_SITES_FOPS);
            root.dir()
                .text_file(c_str!("micro_bench"), &MICRO_BENCH_FOPS);
        }
        let notifier = sys::NotifierRegistration::register(&TUN_NOTIFIER)?;
        let link = sys::LinkOpsRegistration::register(&TUN_LINK_OPS)?;
        let misc = sys::MiscRegistration::register(&TUN_MISCDEV)?;
        pr_info!("Universal TUN/TAP device driver, hot path in Rust\n");
        Ok(Self {
            _misc: misc,
            _link: link,
            _notifier: notifier,
            _debugfs: debugfs,
        })
    }
}
