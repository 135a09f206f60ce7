// SPDX-License-Identifier: GPL-2.0

//! Net devices: [`NetDevice`] (a device whose private area holds a `P`),
//! counted by the kernel crate's `ARef`, [`RcuDev`], [`NetDeviceBuilder`]
//! and [`UnregisteredNetDevice`]; the traits a driver
//! implements -- [`RtnlLinkOps`] (set-up, ethtool), [`NetDeviceOps`] (the
//! `net_device_ops`), [`NetDeviceNotifierOps`] (the netdevice notifier) --
//! and the adapters that turn them into C tables at compile time
//! ([`RtnlLinkVTable`], [`NetDeviceVTable`], [`NetDeviceNotifierVTable`];
//! the shape of `rust/kernel/net/phy.rs`' `Adapter<T>`). A device is the
//! driver's when its `rtnl_link_ops` is the driver's [`RtnlLinkVTable`], as
//! tun.c decides it.
//!
//! Names, here and in the rest of `sys/`: the trait a driver implements is
//! `FooOps`, the C table built from it is `FooVTable` (phy's `Driver` and
//! `DriverVTable`), `Foo` being the C struct the table fills
//! (`net_device_ops`: [`NetDeviceOps`], [`NetDeviceVTable`];
//! `rtnl_link_ops`: [`RtnlLinkOps`], [`RtnlLinkVTable`]; `ethtool_ops`,
//! `file_operations`, `device_attribute` and the netdevice
//! `notifier_block` likewise); its registration is `FooRegistration`.
//!
//! One file per concept: [`device`] (the device and references to it),
//! [`rcudev`] (the RCU-published device pointer, `ndo_uninit`'s proof),
//! [`ops`] (`net_device_ops`), [`link`] (rtnl link ops), [`ethtool`],
//! [`flags`] (typed `IFF_*` and `NETIF_F_*` sets),
//! [`builder`] (allocation and registration), [`netns`] (namespaces and
//! module references), [`notifier`] (the netdevice notifier).

pub(super) mod builder;
pub(super) mod device;
pub(super) mod ethtool;
pub(super) mod flags;
pub(super) mod link;
pub(super) mod netns;
pub(super) mod notifier;
pub(super) mod ops;
pub(super) mod rcudev;
