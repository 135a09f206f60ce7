// SPDX-License-Identifier: GPL-2.0

//! Typed flag sets of a net device: [`DevFlags`] (`dev->flags`, `IFF_*`),
//! [`PrivFlags`] (`dev->priv_flags`, the kernel-internal `IFF_*`) and
//! [`Features`] (`netdev_features_t`, `NETIF_F_*`). Each flag's value is
//! the C constant's, through the bindings (`bindings_helper.h` evaluates
//! the macros): no bit is written down in Rust. A set is built with `|`
//! (or [`Features::union`] and its kin where a `const` needs it) and
//! handed to [`DevSetup`](super::builder::DevSetup)'s setters, which take
//! no other kind: a priv flag cannot land in `dev->flags`.

use crate::bindings;

/// Defines a flag set `$name` over `$bits` with the named flags given.
macro_rules! flag_set {
    (
        $(#[$meta:meta])*
        $name:ident($bits:ty) {
            $($(#[$fmeta:meta])* $flag:ident = $value:expr;)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Default)]
        pub(crate) struct $name($bits);

        impl $name {
            $($(#[$fmeta])* pub(crate) const $flag: Self = Self($value);)*

            /// No flag.
            pub(crate) const fn empty() -> Self {
                Self(0)
            }

            /// The set of the C value `bits`.
            pub(super) const fn from_bits(bits: $bits) -> Self {
                Self(bits)
            }

            /// The C value.
            pub(crate) const fn bits(self) -> $bits {
                self.0
            }

            /// The flags of `self` and of `other` (`|`, in a `const`).
            pub(crate) const fn union(self, other: Self) -> Self {
                Self(self.0 | other.0)
            }

            /// The flags of `self` that are not in `other` (`-`, in a
            /// `const`).
            pub(crate) const fn difference(self, other: Self) -> Self {
                Self(self.0 & !other.0)
            }

            /// Whether every flag of `other` is in `self`.
            pub(crate) const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
        }

        impl core::ops::BitOr for $name {
            type Output = Self;

            fn bitor(self, other: Self) -> Self {
                self.union(other)
            }
        }

        impl core::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, other: Self) {
                *self = self.union(other);
            }
        }

        impl core::ops::Sub for $name {
            type Output = Self;

            fn sub(self, other: Self) -> Self {
                self.difference(other)
            }
        }
    };
}

flag_set! {
    /// `dev->flags`: the `IFF_*` flags user space sees (`ip link`).
    DevFlags(u32) {
        /// `IFF_UP`.
        UP = bindings::RTUN_IFF_UP;
        /// `IFF_POINTOPOINT`: a point-to-point link.
        POINTOPOINT = bindings::RTUN_IFF_POINTOPOINT;
        /// `IFF_NOARP`: no ARP (nor neighbour discovery).
        NOARP = bindings::RTUN_IFF_NOARP;
        /// `IFF_MULTICAST`: multicast capable.
        MULTICAST = bindings::RTUN_IFF_MULTICAST;
    }
}

flag_set! {
    /// `dev->priv_flags`: the kernel-internal `IFF_*` flags.
    PrivFlags(u32) {
        /// `IFF_TX_SKB_SHARING`: transmitted skbs may be shared (pktgen).
        TX_SKB_SHARING = bindings::RTUN_IFF_TX_SKB_SHARING;
        /// `IFF_LIVE_ADDR_CHANGE`: the address may change while up.
        LIVE_ADDR_CHANGE = bindings::RTUN_IFF_LIVE_ADDR_CHANGE;
        /// `IFF_NO_QUEUE`: no qdisc by default.
        NO_QUEUE = bindings::RTUN_IFF_NO_QUEUE;
    }
}

flag_set! {
    /// `netdev_features_t`: a device's offloads (`NETIF_F_*`, `ethtool -k`).
    Features(u64) {
        /// `NETIF_F_SG`: scatter-gather.
        SG = bindings::RTUN_NETIF_F_SG;
        /// `NETIF_F_FRAGLIST`: skb frag lists.
        FRAGLIST = bindings::RTUN_NETIF_F_FRAGLIST;
        /// `NETIF_F_HW_CSUM`: checksums any protocol.
        HW_CSUM = bindings::RTUN_NETIF_F_HW_CSUM;
        /// `NETIF_F_TSO`: TCPv4 segmentation.
        TSO = bindings::RTUN_NETIF_F_TSO;
        /// `NETIF_F_TSO6`: TCPv6 segmentation.
        TSO6 = bindings::RTUN_NETIF_F_TSO6;
        /// `NETIF_F_TSO_ECN`: TCP segmentation with ECN.
        TSO_ECN = bindings::RTUN_NETIF_F_TSO_ECN;
        /// `NETIF_F_GSO_UDP_L4`: UDP segmentation (USO).
        GSO_UDP_L4 = bindings::RTUN_NETIF_F_GSO_UDP_L4;
        /// `NETIF_F_GSO_UDP_TUNNEL`: UDP-tunnel segmentation.
        GSO_UDP_TUNNEL = bindings::RTUN_NETIF_F_GSO_UDP_TUNNEL;
        /// `NETIF_F_GSO_UDP_TUNNEL_CSUM`.
        GSO_UDP_TUNNEL_CSUM = bindings::RTUN_NETIF_F_GSO_UDP_TUNNEL_CSUM;
        /// `NETIF_F_HW_VLAN_CTAG_TX`: inserts 802.1Q tags.
        HW_VLAN_CTAG_TX = bindings::RTUN_NETIF_F_HW_VLAN_CTAG_TX;
        /// `NETIF_F_HW_VLAN_STAG_TX`: inserts 802.1ad tags.
        HW_VLAN_STAG_TX = bindings::RTUN_NETIF_F_HW_VLAN_STAG_TX;
        /// `NETIF_F_HIGHDMA`: reaches high memory.
        HIGHDMA = bindings::RTUN_NETIF_F_HIGHDMA;
        /// `NETIF_F_GSO_SOFTWARE`: the offloads software GSO provides.
        GSO_SOFTWARE = bindings::RTUN_NETIF_F_GSO_SOFTWARE;
        /// `NETIF_F_GSO_ENCAP_ALL`: every tunnel GSO type.
        GSO_ENCAP_ALL = bindings::RTUN_NETIF_F_GSO_ENCAP_ALL;
    }
}
