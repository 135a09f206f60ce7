//! A minimal rtnetlink client: what `ip -d link show`, `ip -s link show`,
//! `ip link set carrier` and `ip link add NAME type KIND` send and parse,
//! so the tests see the link attributes exactly as iproute2 does without
//! depending on it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NETLINK_ROUTE: i32 = 0;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const RTM_GETLINK: u16 = 18;
const RTM_SETLINK: u16 = 19;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const NLMSG_ERROR: u16 = 2;
const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_LINK: u16 = 5;
const IFLA_MASTER: u16 = 10;
const IFLA_QDISC: u16 = 6;
const IFLA_STATS64: u16 = 23;
const IFLA_MIN_MTU: u16 = 50;
const IFLA_MAX_MTU: u16 = 51;
const IFLA_LINKINFO: u16 = 18;
const IFLA_CARRIER: u16 = 33;
const IFLA_NET_NS_FD: u16 = 28;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const IFLA_XDP: u16 = 43;
const IFLA_XDP_FD: u16 = 1;
const IFLA_XDP_ATTACHED: u16 = 2;
const IFLA_XDP_FLAGS: u16 = 3;
const IFLA_XDP_PROG_ID: u16 = 4;
const NLA_F_NESTED: u16 = 0x8000;
/// `XDP_FLAGS_*` (<uapi/linux/if_link.h>).
pub const XDP_FLAGS_UPDATE_IF_NOEXIST: u32 = 1;
pub const XDP_FLAGS_SKB_MODE: u32 = 2;
pub const XDP_FLAGS_DRV_MODE: u32 = 4;
/// `IFLA_XDP_ATTACHED`'s values (`XDP_ATTACHED_*`).
pub const XDP_ATTACHED_NONE: u8 = 0;
pub const XDP_ATTACHED_DRV: u8 = 1;
pub const XDP_ATTACHED_SKB: u8 = 2;
/// `RTMGRP_LINK`.
pub const RTMGRP_LINK: u32 = 1;

/// The tun attributes of `IFLA_INFO_DATA` (`IFLA_TUN_*`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TunInfo {
    pub kind: String,
    pub owner: Option<u32>,
    pub group: Option<u32>,
    pub type_: Option<u8>,
    pub pi: Option<u8>,
    pub vnet_hdr: Option<u8>,
    pub persist: Option<u8>,
    pub multi_queue: Option<u8>,
    pub num_queues: Option<u32>,
    pub num_disabled_queues: Option<u32>,
}

/// What an RTM_NEWLINK says of a device's queues: the tun attributes
/// (`IFLA_TUN_NUM_QUEUES`: attached queues) and the core's
/// `IFLA_NUM_TX_QUEUES`/`IFLA_NUM_RX_QUEUES` (allocated queues, what `ip
/// -d link` prints as `numtxqueues`/`numrxqueues`); and of any device, its
/// kind (`tun.kind`), MTU and its bounds, and counters.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinkQueues {
    pub name: String,
    pub num_tx_queues: Option<u32>,
    pub num_rx_queues: Option<u32>,
    pub tun: TunInfo,
    pub mtu: Option<u32>,
    /// `IFLA_QDISC`: the root qdisc's kind (`noqueue` on an up
    /// `IFF_NO_QUEUE` device).
    pub qdisc: Option<String>,
    /// `IFLA_MIN_MTU`, `IFLA_MAX_MTU` (`ip -d link`'s `minmtu`, `maxmtu`).
    pub min_mtu: Option<u32>,
    pub max_mtu: Option<u32>,
    pub stats64: Option<Stats64>,
    /// `IFLA_ADDRESS`: the whole `dev_addr`, `addr_len` bytes (where
    /// `SIOCGIFHWADDR` gives only the first 14).
    pub address: Option<Vec<u8>>,
    /// `IFLA_XDP`: `IFLA_XDP_ATTACHED` (`XDP_ATTACHED_*`) and
    /// `IFLA_XDP_PROG_ID` (absent without a program).
    pub xdp_attached: Option<u8>,
    pub xdp_prog_id: Option<u32>,
}

/// The first eight counters of `IFLA_STATS64` (`struct
/// rtnl_link_stats64`), what `ip -s link` prints first.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats64 {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

const IFLA_NUM_TX_QUEUES: u16 = 31;
const IFLA_NUM_RX_QUEUES: u16 = 32;

/// The attributes of an RTM_NEWLINK (after its `ifinfomsg`).
fn parse_link(b: &[u8]) -> LinkQueues {
    let mut l = LinkQueues::default();
    let u32_of = |p: &[u8]| p.get(..4).map(|b| u32::from_ne_bytes(b.try_into().unwrap()));
    for (t, p) in attrs(b) {
        match t {
            IFLA_ADDRESS => l.address = Some(p.to_vec()),
            IFLA_XDP => {
                for (t, p) in attrs(p) {
                    match t {
                        IFLA_XDP_ATTACHED => l.xdp_attached = p.first().copied(),
                        IFLA_XDP_PROG_ID => l.xdp_prog_id = u32_of(p),
                        _ => {}
                    }
                }
            }
            IFLA_IFNAME => l.name = String::from_utf8_lossy(p.split(|&c| c == 0).next().unwrap_or(&[])).into_owned(),
            IFLA_NUM_TX_QUEUES => l.num_tx_queues = u32_of(p),
            IFLA_NUM_RX_QUEUES => l.num_rx_queues = u32_of(p),
            IFLA_MTU => l.mtu = u32_of(p),
            IFLA_QDISC => l.qdisc = Some(String::from_utf8_lossy(p).trim_end_matches('\0').to_string()),
            IFLA_MIN_MTU => l.min_mtu = u32_of(p),
            IFLA_MAX_MTU => l.max_mtu = u32_of(p),
            IFLA_STATS64 if p.len() >= 64 => {
                let c = |i: usize| u64::from_ne_bytes(p[8 * i..8 * i + 8].try_into().unwrap());
                l.stats64 = Some(Stats64 {
                    rx_packets: c(0),
                    tx_packets: c(1),
                    rx_bytes: c(2),
                    tx_bytes: c(3),
                    rx_errors: c(4),
                    tx_errors: c(5),
                    rx_dropped: c(6),
                    tx_dropped: c(7),
                });
            }
            IFLA_LINKINFO => {
                let info = &mut l.tun;
                for (t, p) in attrs(p) {
                    match t {
                        IFLA_INFO_KIND => {
                            info.kind = String::from_utf8_lossy(p).trim_end_matches('\0').to_string()
                        }
                        IFLA_INFO_DATA => {
                            for (t, p) in attrs(p) {
                                let u8v = p.first().copied();
                                let u32v = u32_of(p);
                                match t {
                                    1 => info.owner = u32v,
                                    2 => info.group = u32v,
                                    3 => info.type_ = u8v,
                                    4 => info.pi = u8v,
                                    5 => info.vnet_hdr = u8v,
                                    6 => info.persist = u8v,
                                    7 => info.multi_queue = u8v,
                                    8 => info.num_queues = u32v,
                                    9 => info.num_disabled_queues = u32v,
                                    _ => {}
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    l
}

/// A NETLINK_ROUTE socket.
pub struct Nl(OwnedFd);

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn attr(buf: &mut Vec<u8>, ty: u16, payload: &[u8]) {
    let len = 4 + payload.len();
    buf.extend_from_slice(&(len as u16).to_ne_bytes());
    buf.extend_from_slice(&ty.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf.resize(align4(buf.len()), 0);
}

/// The attributes in `b`: (type without flags, payload).
fn attrs(mut b: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while b.len() >= 4 {
        let len = u16::from_ne_bytes([b[0], b[1]]) as usize;
        let ty = u16::from_ne_bytes([b[2], b[3]]) & 0x3fff;
        if len < 4 || len > b.len() {
            break;
        }
        out.push((ty, &b[4..len]));
        b = &b[align4(len).min(b.len())..];
    }
    out
}

impl Nl {
    /// A socket, subscribed to `groups` (0: none).
    pub fn open(groups: u32) -> io::Result<Nl> {
        // SAFETY: Plain socket call.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, NETLINK_ROUTE) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: A fresh fd of ours.
        let s = Nl(unsafe { OwnedFd::from_raw_fd(fd) });
        // SAFETY: `sockaddr_nl` is plain data.
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        sa.nl_groups = groups;
        // SAFETY: A valid address of its size.
        let r = unsafe { libc::bind(fd, (&sa as *const libc::sockaddr_nl).cast(), std::mem::size_of_val(&sa) as u32) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let tv = libc::timeval { tv_sec: 2, tv_usec: 0 };
        // SAFETY: A valid option value.
        unsafe {
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, (&tv as *const libc::timeval).cast(), std::mem::size_of_val(&tv) as u32)
        };
        Ok(s)
    }

    fn send(&self, ty: u16, flags: u16, body: &[u8]) -> io::Result<()> {
        let mut m = Vec::with_capacity(16 + body.len());
        m.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
        m.extend_from_slice(&1u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(body);
        // SAFETY: A valid buffer.
        let r = unsafe { libc::send(self.0.as_raw_fd(), m.as_ptr().cast(), m.len(), 0) };
        if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// The next datagram's messages: (type, body).
    pub fn recv(&self) -> io::Result<Vec<(u16, Vec<u8>)>> {
        let mut buf = vec![0u8; 65536];
        // SAFETY: A valid buffer.
        let n = unsafe { libc::recv(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut b = &buf[..n as usize];
        let mut out = Vec::new();
        while b.len() >= 16 {
            let len = u32::from_ne_bytes(b[0..4].try_into().unwrap()) as usize;
            let ty = u16::from_ne_bytes([b[4], b[5]]);
            if len < 16 || len > b.len() {
                break;
            }
            out.push((ty, b[16..len].to_vec()));
            b = &b[align4(len).min(b.len())..];
        }
        Ok(out)
    }

    /// `struct ifinfomsg` for `ifindex`.
    fn ifinfomsg(ifindex: i32) -> Vec<u8> {
        let mut m = vec![0u8; 16];
        m[4..8].copy_from_slice(&ifindex.to_ne_bytes());
        m
    }

    /// RTM_GETLINK of `ifindex`: its kind and tun attributes.
    pub fn tun_info(&self, ifindex: i32) -> io::Result<TunInfo> {
        self.link_queues(ifindex).map(|l| l.tun)
    }

    /// RTM_GETLINK of `ifindex`: its tun attributes and queue counts.
    pub fn link_queues(&self, ifindex: i32) -> io::Result<LinkQueues> {
        self.get_link(&Self::ifinfomsg(ifindex))
    }

    /// RTM_GETLINK of the device named `name` (`ip -d link show NAME`):
    /// its attributes, or the kernel's `ENODEV` if there is none.
    pub fn link_by_name(&self, name: &str) -> io::Result<LinkQueues> {
        let mut body = Self::ifinfomsg(0);
        attr(&mut body, IFLA_IFNAME, format!("{name}\0").as_bytes());
        self.get_link(&body)
    }

    /// RTM_GETLINK with `body`: the link's attributes.
    fn get_link(&self, body: &[u8]) -> io::Result<LinkQueues> {
        self.send(RTM_GETLINK, 0, body)?;
        for (ty, body) in self.recv()? {
            if ty == NLMSG_ERROR {
                let e = i32::from_ne_bytes(body[0..4].try_into().unwrap());
                return Err(io::Error::from_raw_os_error(-e));
            }
            if ty != RTM_NEWLINK || body.len() < 16 {
                continue;
            }
            return Ok(parse_link(&body[16..]));
        }
        Err(io::Error::from_raw_os_error(libc::ENOENT))
    }

    /// The first RTM_NEWLINK notification about `name` to arrive within
    /// the socket's receive timeout (the socket listens to
    /// [`RTMGRP_LINK`]), parsed.
    pub fn first_newlink(&self, name: &str) -> Option<LinkQueues> {
        while let Ok(msgs) = self.recv() {
            for (ty, body) in msgs {
                if ty != RTM_NEWLINK || body.len() < 16 {
                    continue;
                }
                let l = parse_link(&body[16..]);
                if l.name.as_bytes() == name.as_bytes() {
                    return Some(l);
                }
            }
        }
        None
    }

    /// RTM_NEWLINK setting `IFLA_CARRIER` (`ip link set DEV carrier on|off`):
    /// the kernel's answer.
    pub fn set_carrier(&self, ifindex: i32, on: bool) -> Result<(), i32> {
        self.newlink_attr(ifindex, IFLA_CARRIER, &[u8::from(on)])
    }

    /// RTM_NEWLINK of `ifindex` with one attribute: the kernel's answer.
    fn newlink_attr(&self, ifindex: i32, ty: u16, payload: &[u8]) -> Result<(), i32> {
        let mut body = Self::ifinfomsg(ifindex);
        attr(&mut body, ty, payload);
        self.newlink_ack(0, &body)
    }

    /// RTM_NEWLINK creating device `name` of rtnl link kind `kind`, with
    /// `IFLA_ADDRESS` `address` if given (`ip link add NAME [address
    /// ADDR] type KIND`): the kernel's answer.
    pub fn new_link(&self, name: &str, kind: &str, address: Option<&[u8]>) -> Result<(), i32> {
        let mut body = Self::ifinfomsg(0);
        attr(&mut body, IFLA_IFNAME, format!("{name}\0").as_bytes());
        if let Some(a) = address {
            attr(&mut body, IFLA_ADDRESS, a);
        }
        let mut info = Vec::new();
        attr(&mut info, IFLA_INFO_KIND, kind.as_bytes());
        attr(&mut body, IFLA_LINKINFO, &info);
        self.newlink_ack(NLM_F_CREATE | NLM_F_EXCL, &body)
    }

    /// RTM_NEWLINK creating device `name` of kind `kind` with the
    /// attributes `data` in `IFLA_INFO_DATA` (`ip link add NAME type KIND
    /// ...`): the kernel's answer.
    pub fn new_link_data(&self, name: &str, kind: &str, data: &[(u16, Vec<u8>)]) -> Result<(), i32> {
        self.new_link_with(name, None, kind, data)
    }

    /// RTM_SETLINK of `ifindex` with `IFLA_XDP` {`IFLA_XDP_FD` `fd`,
    /// `IFLA_XDP_FLAGS` `flags`} (`ip link set DEV xdpdrv|xdpgeneric fd`;
    /// `fd` -1 detaches, `ip link set DEV xdp off`): the kernel's answer.
    pub fn set_xdp(&self, ifindex: i32, fd: i32, flags: u32) -> Result<(), i32> {
        let mut xdp = Vec::new();
        attr(&mut xdp, IFLA_XDP_FD, &fd.to_ne_bytes());
        attr(&mut xdp, IFLA_XDP_FLAGS, &flags.to_ne_bytes());
        let mut body = Self::ifinfomsg(ifindex);
        attr(&mut body, IFLA_XDP | NLA_F_NESTED, &xdp);
        self.msg_ack(RTM_SETLINK, 0, &body)
    }

    /// Sends RTM_NEWLINK `body` with `flags`, asking for an answer: the
    /// kernel's answer.
    fn newlink_ack(&self, flags: u16, body: &[u8]) -> Result<(), i32> {
        self.msg_ack(RTM_NEWLINK, flags, body)
    }

    /// Sends a message of type `ty` with `body` and `flags`, asking for
    /// an answer: the kernel's answer.
    fn msg_ack(&self, ty: u16, flags: u16, body: &[u8]) -> Result<(), i32> {
        self.send(ty, flags | NLM_F_ACK, body).map_err(|e| e.raw_os_error().unwrap_or(0))?;
        for (ty, body) in self.recv().map_err(|e| e.raw_os_error().unwrap_or(0))? {
            if ty == NLMSG_ERROR {
                let e = i32::from_ne_bytes(body[0..4].try_into().unwrap());
                return if e == 0 { Ok(()) } else { Err(-e) };
            }
        }
        Err(libc::EPROTO)
    }

    /// RTM_NEWLINK creating device `name` of kind `kind` on top of device
    /// `link` (`IFLA_LINK`), with the attributes `data` in
    /// `IFLA_INFO_DATA` (`ip link add link LINK name NAME type KIND ...`):
    /// the kernel's answer.
    pub fn new_link_on(&self, name: &str, link: i32, kind: &str, data: &[(u16, Vec<u8>)]) -> Result<(), i32> {
        self.new_link_with(name, Some(link), kind, data)
    }

    /// RTM_NEWLINK creating `name` of kind `kind`, on top of `link` if
    /// any, with `data` in `IFLA_INFO_DATA`: the kernel's answer.
    fn new_link_with(&self, name: &str, link: Option<i32>, kind: &str, data: &[(u16, Vec<u8>)]) -> Result<(), i32> {
        let mut body = Self::ifinfomsg(0);
        attr(&mut body, IFLA_IFNAME, format!("{name}\0").as_bytes());
        if let Some(link) = link {
            attr(&mut body, IFLA_LINK, &(link as u32).to_ne_bytes());
        }
        let mut d = Vec::new();
        for (ty, payload) in data {
            attr(&mut d, *ty, payload);
        }
        let mut info = Vec::new();
        attr(&mut info, IFLA_INFO_KIND, kind.as_bytes());
        attr(&mut info, IFLA_INFO_DATA, &d);
        attr(&mut body, IFLA_LINKINFO, &info);
        self.newlink_ack(NLM_F_CREATE | NLM_F_EXCL, &body)
    }

    /// RTM_NEWLINK setting `IFLA_MASTER` (`ip link set DEV master
    /// MASTER`; 0: `nomaster`): the kernel's answer.
    pub fn set_master(&self, ifindex: i32, master: i32) -> Result<(), i32> {
        self.newlink_attr(ifindex, IFLA_MASTER, &(master as u32).to_ne_bytes())
    }

    /// RTM_SETLINK of family `AF_BRIDGE` with `IFLA_AF_SPEC` holding one
    /// `IFLA_BRIDGE_VLAN_INFO` (`bridge vlan add dev DEV vid VID [pvid]
    /// [untagged] [self]`): `flags` are `BRIDGE_VLAN_INFO_*`; `self_` sets
    /// `IFLA_BRIDGE_FLAGS` to `BRIDGE_FLAGS_SELF` (the bridge device's own
    /// VLANs). The kernel's answer.
    pub fn bridge_vlan_add(&self, ifindex: i32, vid: u16, flags: u16, self_: bool) -> Result<(), i32> {
        const AF_BRIDGE: u8 = 7;
        const RTM_SETLINK: u16 = 19;
        const IFLA_AF_SPEC: u16 = 26;
        const IFLA_BRIDGE_FLAGS: u16 = 0;
        const IFLA_BRIDGE_VLAN_INFO: u16 = 2;
        const BRIDGE_FLAGS_SELF: u16 = 2;
        let mut body = Self::ifinfomsg(ifindex);
        body[0] = AF_BRIDGE;
        let mut spec = Vec::new();
        if self_ {
            attr(&mut spec, IFLA_BRIDGE_FLAGS, &BRIDGE_FLAGS_SELF.to_ne_bytes());
        }
        let mut info = flags.to_ne_bytes().to_vec();
        info.extend_from_slice(&vid.to_ne_bytes());
        attr(&mut spec, IFLA_BRIDGE_VLAN_INFO, &info);
        attr(&mut body, IFLA_AF_SPEC | 0x8000, &spec);
        self.send(RTM_SETLINK, NLM_F_ACK, &body).map_err(|e| e.raw_os_error().unwrap_or(0))?;
        for (ty, body) in self.recv().map_err(|e| e.raw_os_error().unwrap_or(0))? {
            if ty == NLMSG_ERROR {
                let e = i32::from_ne_bytes(body[0..4].try_into().unwrap());
                return if e == 0 { Ok(()) } else { Err(-e) };
            }
        }
        Err(libc::EPROTO)
    }

    /// RTM_NEWLINK setting `IFLA_NET_NS_FD` (`ip link set DEV netns
    /// NSFILE`): moves the device into the namespace `nsfd` names.
    pub fn set_netns_fd(&self, ifindex: i32, nsfd: i32) -> Result<(), i32> {
        self.newlink_attr(ifindex, IFLA_NET_NS_FD, &(nsfd as u32).to_ne_bytes())
    }

    /// Counts the RTM_NEWLINK notifications about `name` that arrive
    /// within the socket's receive timeout.
    pub fn count_newlink(&self, name: &str) -> usize {
        let mut n = 0;
        while let Ok(msgs) = self.recv() {
            for (ty, body) in msgs {
                if ty != RTM_NEWLINK || body.len() < 16 {
                    continue;
                }
                if attrs(&body[16..])
                    .iter()
                    .any(|(t, p)| *t == IFLA_IFNAME && p.split(|&c| c == 0).next() == Some(name.as_bytes()))
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// Sends RTM_DELLINK of `ifindex` (`ip link del`), asking for an
    /// answer, without waiting for it ([`Nl::answer`] reads it): `send()`
    /// returns once the kernel has handled the request.
    pub fn del_link_request(&self, ifindex: i32) -> Result<(), i32> {
        self.send(RTM_DELLINK, NLM_F_ACK, &Self::ifinfomsg(ifindex)).map_err(|e| e.raw_os_error().unwrap_or(0))
    }

    /// The kernel's answer to the last request: its `NLMSG_ERROR` code, or
    /// the receive's error (`ENOBUFS` when the answer could not be built).
    pub fn answer(&self) -> Result<(), i32> {
        for (ty, body) in self.recv().map_err(|e| e.raw_os_error().unwrap_or(0))? {
            if ty == NLMSG_ERROR {
                let e = i32::from_ne_bytes(body[0..4].try_into().unwrap());
                return if e == 0 { Ok(()) } else { Err(-e) };
            }
        }
        Err(libc::EPROTO)
    }

    /// The RTM_NEWLINK and RTM_DELLINK notifications about `name` that
    /// arrive within the socket's receive timeout, in order: `true` for
    /// RTM_NEWLINK, `false` for RTM_DELLINK.
    pub fn link_events(&self, name: &str) -> Vec<bool> {
        let mut out = Vec::new();
        while let Ok(msgs) = self.recv() {
            for (ty, body) in msgs {
                if (ty != RTM_NEWLINK && ty != RTM_DELLINK) || body.len() < 16 {
                    continue;
                }
                if attrs(&body[16..])
                    .iter()
                    .any(|(t, p)| *t == IFLA_IFNAME && p.split(|&c| c == 0).next() == Some(name.as_bytes()))
                {
                    out.push(ty == RTM_NEWLINK);
                }
            }
        }
        out
    }

    /// Sets the receive timeout.
    pub fn set_timeout_ms(&self, ms: u64) {
        let tv = libc::timeval { tv_sec: (ms / 1000) as i64, tv_usec: ((ms % 1000) * 1000) as i64 };
        // SAFETY: A valid option value.
        unsafe {
            libc::setsockopt(
                self.0.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of_val(&tv) as u32,
            )
        };
    }
}

/// `if_nametoindex()`.
pub fn ifindex(name: &str) -> i32 {
    std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}
