// SPDX-License-Identifier: GPL-2.0

//! rust_dummy: `drivers/net/dummy.c` (6.12) in Rust, a net device that
//! counts and discards every packet sent to it.
//!
//! The second driver on the `sys/` layer, built by the same `make` from
//! the same sources: this crate root includes the shared bindings and the
//! layer's core, without its tun part or tun's helpers (`Kbuild`'s
//! `rtun_driver` cfg, checked by `scripts/layer-check.sh`), and has no
//! `unsafe` of its own. It registers the rtnl link kind `dummy` (as
//! dummy.ko does, so that one test drives either; only one of the two can
//! be loaded at a time), creates `numdummies` devices `dummy%d` at load,
//! and `ip link add NAME type dummy` creates more. Functions keep
//! dummy.c's names. Where it differs:
//!
//! - per-CPU counters: dummy.c's `dev_lstats` (`NETDEV_PCPU_STAT_LSTATS`,
//!   set in `dummy_dev_init()`, read by `dummy_get_stats64()`) become the
//!   layer's `tstats` (`NETDEV_PCPU_STAT_TSTATS`, which every device of the
//!   layer has): the same transmit packet and byte counts, which the core's
//!   default `dev_get_tstats64()` reports, so neither `ndo_init` nor
//!   `ndo_get_stats64` is needed;
//! - `netdev_lockdep_set_classes()` (lockdep classes for the queues'
//!   `_xmit_lock`, which a lockless-transmit device never takes) is not
//!   called;
//! - the module takes rtnl but not `pernet_ops_rwsem` around its set-up
//!   (`rtnl_link_register()` takes both itself), and has no
//!   `MODULE_ALIAS_RTNL_LINK("dummy")`, so `ip link add ... type dummy`
//!   never loads it in dummy.ko's place.
//!
//! `dummy_ethtool_ops` has only `get_ts_info = ethtool_op_get_ts_info`
//! (software transmit time stamps, which the core's default does not
//! report): so has ours, and no `get_drvinfo`, so that `ethtool -i`
//! reports the link kind and the kernel release, as for dummy.ko.

// The driver is safe Rust: `unsafe` is allowed in `sys/` (and the
// generated bindings it wraps) alone, and the compiler checks it.
#![deny(unsafe_code)]

use kernel::c_str;
use kernel::prelude::*;

#[allow(unsafe_code)]
mod bindings;
// The layer's core (sys/ without its tun part, `Kbuild`).
#[allow(unsafe_code)]
mod sys;

use sys::errno::EADDRNOTAVAIL;

use sys::{
    is_valid_ether_addr, BhOff, DevFlags, DevSetup, EthtoolOps, EthtoolVTable, Features, LinkAttrs,
    NameAssign, NetDevice, NetDeviceBuilder, NetDeviceOps, NetDeviceVTable, PrivFlags, Rtnl,
    RtnlLinkOps, RtnlLinkRegistration, RtnlLinkVTable, SkBuff, TxResult, ETH_ALEN,
};

/// rust_dummy's module parameter (`dummy_params.c`).
mod params {
    crate::sys::module_params! {
        /// `numdummies`: how many devices to create at load.
        pub(crate) fn numdummies() -> i32;
    }
}

#[cfg(not(target_arch = "x86_64"))]
compile_error!("rust_dummy builds where rust_tun does (sys/ is x86_64 code)");

sys::compat::module_compat! {
    type: RustDummy,
    name: "rust_dummy",
    author: "rust-tun developers",
    description: "Dummy netdevice driver which discards all packets sent to it",
    license: "GPL",
}

/// A dummy device: no private data (dummy.c's `priv_size` 0).
type DummyDev = NetDevice<()>;

/// `dummy_netdev_ops`.
struct DummyNetDev;

#[vtable]
impl NetDeviceOps for DummyNetDev {
    type Priv = ();

    /// `dummy_xmit()`: count, time-stamp, free.
    fn start_xmit(mut skb: SkBuff, dev: &DummyDev, _bh: &BhOff) -> TxResult {
        dev.sw_netstats_tx_add(skb.len());
        skb.tx_timestamp();
        skb.consume();
        TxResult::Ok
    }

    /// `set_multicast_list()`: fake multicast ability.
    fn set_rx_mode(_dev: &DummyDev) {}

    /// `dummy_change_carrier()`.
    fn change_carrier(dev: &DummyDev, new_carrier: bool) -> Result {
        if new_carrier {
            dev.carrier_on();
        } else {
            dev.carrier_off();
        }
        Ok(())
    }
}

/// `dummy_netdev_ops`, with `eth_validate_addr` and `eth_mac_addr`.
static DUMMY_NETDEV_OPS: NetDeviceVTable<()> = NetDeviceVTable::new::<DummyNetDev>().eth_addr();

/// `dummy_ethtool_ops`.
struct DummyEthtool;

#[vtable]
impl EthtoolOps for DummyEthtool {
    type Priv = ();
    const GET_TS_INFO: bool = true;
}

static DUMMY_ETHTOOL_OPS: EthtoolVTable<()> = EthtoolVTable::new::<DummyEthtool>();

/// The driver as rtnetlink sees it (`dummy_link_ops`).
struct Dummy;

#[vtable]
impl RtnlLinkOps for Dummy {
    type Priv = ();
    const KIND: &'static CStr = c_str!("dummy");

    /// `dummy_setup()`.
    fn setup(dev: &mut DevSetup<()>) {
        dev.ether_setup();

        // Initialize the device structure.
        dev.set_ops(&DUMMY_NETDEV_OPS);
        dev.set_ethtool_ops(&DUMMY_ETHTOOL_OPS);

        // Fill in device structure with ethernet-generic values.
        let flags = dev.flags();
        dev.set_flags((flags | DevFlags::NOARP) - DevFlags::MULTICAST);
        dev.priv_flags_set(PrivFlags::LIVE_ADDR_CHANGE | PrivFlags::NO_QUEUE);
        dev.set_lltx();
        let features = Features::SG
            | Features::FRAGLIST
            | Features::GSO_SOFTWARE
            | Features::HW_CSUM
            | Features::HIGHDMA
            | Features::GSO_ENCAP_ALL;
        // A fresh device has no features, hence `features |= ...`,
        // `hw_features |= dev->features` and `hw_enc_features |=
        // dev->features` are these.
        dev.set_features(features);
        dev.set_hw_features(features);
        dev.set_hw_enc_features(features);
        dev.eth_hw_addr_random();

        dev.set_mtu_range(0, 0);
    }

    /// `dummy_validate()`.
    fn validate(attrs: &LinkAttrs<'_>) -> Result {
        if let Some(addr) = attrs.address() {
            let addr: &[u8; ETH_ALEN] = addr.try_into().map_err(|_| EINVAL)?;
            if !is_valid_ether_addr(addr) {
                return Err(EADDRNOTAVAIL);
            }
        }
        Ok(())
    }

    /// `ip link add ... type dummy`: nothing to set up beyond
    /// `dummy_setup()` (dummy.c has no `newlink`; the core registers).
    fn newlink(_attrs: &LinkAttrs<'_>) -> Result<()> {
        Ok(())
    }
}

/// `dummy_link_ops`.
static DUMMY_LINK_OPS: RtnlLinkVTable<()> = RtnlLinkVTable::new::<Dummy>();

/// `dummy_init_one()`.
fn dummy_init_one(rtnl: &mut Rtnl<'_>) -> Result {
    let dev = NetDeviceBuilder::new(&DUMMY_LINK_OPS)
        .name(c_str!("dummy%d"))
        .name_assign(NameAssign::Enum)
        .alloc(sys::compat::unit_init())?;
    dev.register(rtnl)?;
    Ok(())
}

struct RustDummy {
    _link: RtnlLinkRegistration<()>,
}

impl kernel::Module for RustDummy {
    /// `dummy_init_module()`: the link kind, then `numdummies` devices; if
    /// one fails, the kind goes again, with the devices made so far.
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let link = RtnlLinkRegistration::register(&DUMMY_LINK_OPS)?;
        Rtnl::with(|rtnl| -> Result {
            for _ in 0..params::numdummies() {
                dummy_init_one(rtnl)?;
                sys::cond_resched();
            }
            Ok(())
        })?;
        Ok(Self { _link: link })
    }
}
