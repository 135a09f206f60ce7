// SPDX-License-Identifier: GPL-2.0

//! Net devices: [`NetDevice`] (a device whose private area holds a `P`),
//! counted by the kernel crate's `ARef`, [`RcuDev`], [`NetDeviceBuilder`]; the traits a driver
//! implements -- [`NetDriver`] (set-up, ethtool), [`NetDevOps`] (the
//! `net_device_ops`), [`NetdevEvents`] (the netdevice notifier) -- and the
//! adapters that turn them into C tables at compile time ([`LinkOps`],
//! [`DevOps`], [`Notifier`]; the shape of `rust/kernel/net/phy.rs`'
//! `Adapter<T>`). A device is the driver's when its `rtnl_link_ops` is the
//! driver's [`LinkOps`], as tun.c decides it.
//!
//! One file per concept: [`device`] (the device and references to it),
//! [`rcudev`] (the RCU-published device pointer, `ndo_uninit`'s proof),
//! [`ops`] (`net_device_ops`), [`link`] (rtnl link ops), [`ethtool`],
//! [`builder`] (allocation and registration), [`netns`] (namespaces and
//! module references), [`notifier`] (the netdevice notifier).

pub(super) mod builder;
pub(super) mod device;
pub(super) mod ethtool;
pub(super) mod link;
pub(super) mod netns;
pub(super) mod notifier;
pub(super) mod ops;
pub(super) mod rcudev;
