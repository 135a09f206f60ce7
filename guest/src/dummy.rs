//! The second driver: dummy (issue 19). The same tests run on the C dummy
//! (drivers/net/dummy.c from the kernel build, the reference) and on
//! rust_dummy.ko, its Rust copy on the project's `sys/` layer, one loaded
//! at a time (both register the rtnl link kind `dummy`): the devices of
//! `numdummies` and of `ip link add NAME type dummy`, rmmod with devices
//! present, the transmit counters (sysfs and `IFLA_STATS64`) and time
//! stamps, carrier, address and MTU, and ethtool. The expectations are
//! dummy.c's (6.12) with the core's defaults, the same for both (`ethtool
//! -i` names the link kind, `dummy`, for either).

use super::*;
use crate::ethtool::{cstr, drvinfo, features, ts_info, SOF_SOFTWARE_ALL};
use crate::hardening::{packet_socket, read_errqueue, sendto, setsockopt_int, Sock, SO_EE_ORIGIN_TIMESTAMPING};
use crate::nl::{ifindex, LinkQueues, Nl};

/// `dev->flags` of a dummy device that is down: `ether_setup()`'s
/// `IFF_BROADCAST | IFF_MULTICAST`, then dummy_setup()'s `IFF_NOARP` and
/// no `IFF_MULTICAST`.
const FLAGS_DOWN: &str = "0x82";
/// `addr_assign_type`: `NET_ADDR_RANDOM` (eth_hw_addr_random()),
/// `NET_ADDR_SET` (an address given by user space).
const NET_ADDR_RANDOM: &str = "1";
const NET_ADDR_SET: &str = "3";
/// `name_assign_type`: `NET_NAME_ENUM` (the module's `dummy%d`),
/// `NET_NAME_USER` (`ip link add NAME`).
const NET_NAME_ENUM: &str = "1";
const NET_NAME_USER: &str = "3";
const SIOCSIFMTU: u64 = 0x8922;
/// `ARPHRD_ETHER`, `ARPHRD_NONE`.
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_NONE: u16 = 0xfffe;
const ETHTOOL_GLINK: u32 = 0x0a;

/// The features dummy_setup() turns on (`NETIF_F_SG | NETIF_F_FRAGLIST |
/// NETIF_F_GSO_SOFTWARE | NETIF_F_HW_CSUM | NETIF_F_HIGHDMA |
/// NETIF_F_GSO_ENCAP_ALL`) and register_netdevice() adds (`NETIF_F_GSO`,
/// `NETIF_F_GRO`), by their ethtool names (`ethtool -k`), sorted.
const FEATURES_ON: &[&str] = &[
    "highdma",
    "rx-gro",
    "tx-checksum-ip-generic",
    "tx-generic-segmentation",
    "tx-gre-csum-segmentation",
    "tx-gre-segmentation",
    "tx-gso-list",
    "tx-ipxip4-segmentation",
    "tx-ipxip6-segmentation",
    "tx-scatter-gather",
    "tx-scatter-gather-fraglist",
    "tx-sctp-segmentation",
    "tx-tcp-ecn-segmentation",
    "tx-tcp-mangleid-segmentation",
    "tx-tcp-segmentation",
    "tx-tcp6-segmentation",
    "tx-udp-segmentation",
    "tx-udp_tnl-csum-segmentation",
    "tx-udp_tnl-segmentation",
];
/// The changeable features (`hw_features`: dummy_setup()'s copy of its
/// features, and the core's software ones, some off by default), sorted.
const FEATURES_CHANGEABLE: &[&str] = &[
    "highdma",
    "rx-gro",
    "rx-gro-list",
    "rx-udp-gro-forwarding",
    "tx-checksum-ip-generic",
    "tx-generic-segmentation",
    "tx-gre-csum-segmentation",
    "tx-gre-segmentation",
    "tx-gso-list",
    "tx-ipxip4-segmentation",
    "tx-ipxip6-segmentation",
    "tx-nocache-copy",
    "tx-scatter-gather",
    "tx-scatter-gather-fraglist",
    "tx-sctp-segmentation",
    "tx-tcp-ecn-segmentation",
    "tx-tcp-mangleid-segmentation",
    "tx-tcp-segmentation",
    "tx-tcp6-segmentation",
    "tx-udp-segmentation",
    "tx-udp_tnl-csum-segmentation",
    "tx-udp_tnl-segmentation",
];

/// Loads the driver under test with `params`.
fn insmod(n: Node, params: &str) -> TestResult {
    sh(&format!("insmod {MODDIR}/{}.ko {params}", n.module)).map(|_| ())
}

/// Unloads the driver under test.
fn rmmod(n: Node) -> TestResult {
    sh(&format!("rmmod {}", n.module)).map(|_| ())
}

/// RTM_GETLINK of `name`.
fn link(nl: &Nl, name: &str) -> Result<LinkQueues, String> {
    let i = ifindex(name);
    check!(i != 0, "no device {name}");
    nl.link_queues(i).map_err(|e| format!("RTM_GETLINK {name}: {e}"))
}

/// The devices of link kind `dummy`, sorted.
fn dummies(nl: &Nl) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/class/net").map_err(|e| e.to_string())?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if link(nl, &name).is_ok_and(|l| l.tun.kind == "dummy") {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// The device's address (sysfs).
fn mac(name: &str) -> Result<[u8; 6], String> {
    let text = sysfs(name, "address");
    let b: Vec<u8> = text.split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
    b.try_into().map_err(|_| format!("{name}: address {text:?}"))
}

/// A dummy device as dummy_setup() makes it, down, named as
/// `name_assign` says, with a random address.
fn check_new(nl: &Nl, name: &str, name_assign: &str) -> TestResult {
    let l = link(nl, name)?;
    check!(l.tun.kind == "dummy", "{name}: link kind {:?}", l.tun.kind);
    check!(sysfs(name, "type") == "1", "{name}: type {} (ARPHRD_ETHER is 1)", sysfs(name, "type"));
    check!(sysfs(name, "flags") == FLAGS_DOWN, "{name}: flags {}, expected {FLAGS_DOWN}", sysfs(name, "flags"));
    check!(sysfs(name, "mtu") == "1500" && l.mtu == Some(1500), "{name}: mtu {} ({:?})", sysfs(name, "mtu"), l.mtu);
    check!(l.min_mtu == Some(0) && l.max_mtu == Some(0), "{name}: min_mtu {:?} max_mtu {:?}, expected 0 and 0", l.min_mtu, l.max_mtu);
    check!(sysfs(name, "tx_queue_len") == "1000", "{name}: tx_queue_len {}", sysfs(name, "tx_queue_len"));
    check!(l.num_tx_queues == Some(1) && l.num_rx_queues == Some(1), "{name}: queues {:?}/{:?}", l.num_tx_queues, l.num_rx_queues);
    check!(sysfs(name, "name_assign_type") == name_assign, "{name}: name_assign_type {}", sysfs(name, "name_assign_type"));
    check!(
        sysfs(name, "addr_len") == "6" && sysfs(name, "broadcast") == "ff:ff:ff:ff:ff:ff",
        "{name}: addr_len {} broadcast {}",
        sysfs(name, "addr_len"),
        sysfs(name, "broadcast")
    );
    check!(sysfs(name, "carrier") == "", "{name}: carrier readable while down: {:?}", sysfs(name, "carrier"));
    check!(sysfs(name, "addr_assign_type") == NET_ADDR_RANDOM, "{name}: addr_assign_type {}", sysfs(name, "addr_assign_type"));
    let a = mac(name)?;
    check!(a[0] & 1 == 0 && a[0] & 2 != 0, "{name}: random address {a:02x?} not unicast and locally administered");
    Ok(())
}

/// `numdummies`: 0 (and a negative number) make no device, 2 make dummy0
/// and dummy1 (two random addresses), the default one: dummy0; each as
/// dummy_setup() makes it; rmmod removes them; a value that is not a
/// number fails the load.
pub fn t_numdummies(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    let cases: [(&str, &[&str]); 4] =
        [("numdummies=0", &[]), ("numdummies=-1", &[]), ("numdummies=2", &["dummy0", "dummy1"]), ("", &["dummy0"])];
    for (params, want) in cases {
        insmod(n, params)?;
        let got = dummies(&nl)?;
        check!(got == want, "insmod {params}: devices of kind dummy {got:?}, expected {want:?}");
        for d in want {
            check_new(&nl, d, NET_NAME_ENUM)?;
        }
        if let [a, b] = want {
            check!(mac(a)? != mac(b)?, "{a} and {b} have the same address");
        }
        rmmod(n)?;
        let left = dummies(&nl)?;
        check!(left.is_empty(), "insmod {params}, rmmod: devices left {left:?}");
    }
    check!(insmod(n, "numdummies=two").is_err(), "insmod numdummies=two succeeded");
    check!(!module_loaded(n.module), "{} loaded after a failed insmod", n.module);
    Ok(())
}

/// `ip link add NAME type dummy` (RTM_NEWLINK with the kind): a device as
/// dummy_setup() makes it, named as asked; with `IFLA_ADDRESS`, that
/// address, refused by dummy_validate() when it is not a unicast Ethernet
/// address of six bytes; a second device of the same name refused; rmmod
/// with devices present (the module's and the added ones) removes them
/// all, and the module loads again.
pub fn t_link_add(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    let add = |name: &str, addr: Option<&[u8]>| nl.new_link(name, "dummy", addr);
    insmod(n, "numdummies=0")?;
    add("rt-dmy0", None).map_err(|e| format!("RTM_NEWLINK rt-dmy0: errno {e} ({})", errname(e)))?;
    check_new(&nl, "rt-dmy0", NET_NAME_USER)?;
    expect_errno!(add("rt-dmy0", None), libc::EEXIST, "a second rt-dmy0");
    let addr = [0x02, 0x12, 0x34, 0x56, 0x78, 0x9a];
    add("rt-dmy1", Some(&addr)).map_err(|e| format!("RTM_NEWLINK rt-dmy1 with an address: errno {e} ({})", errname(e)))?;
    check!(sysfs("rt-dmy1", "address") == "02:12:34:56:78:9a", "rt-dmy1: address {}", sysfs("rt-dmy1", "address"));
    check!(sysfs("rt-dmy1", "addr_assign_type") == NET_ADDR_SET, "rt-dmy1: addr_assign_type {}", sysfs("rt-dmy1", "addr_assign_type"));
    expect_errno!(add("rt-dmy2", Some(&[0x03, 0, 0, 0, 0, 1])), libc::EADDRNOTAVAIL, "a multicast IFLA_ADDRESS");
    expect_errno!(add("rt-dmy2", Some(&[0; 6])), libc::EADDRNOTAVAIL, "the zero IFLA_ADDRESS");
    expect_errno!(add("rt-dmy2", Some(&addr[..5])), libc::EINVAL, "a five-byte IFLA_ADDRESS");
    check!(!link_exists("rt-dmy2"), "rt-dmy2 exists after three refusals");
    let got = dummies(&nl)?;
    check!(got == ["rt-dmy0", "rt-dmy1"], "devices of kind dummy {got:?}");
    sh("ip link del rt-dmy1")?;
    check!(!link_exists("rt-dmy1"), "rt-dmy1 left after ip link del");
    // rmmod with an added device present, then with the module's dummy0
    // and an added one, both up.
    rmmod(n)?;
    check!(!link_exists("rt-dmy0"), "rt-dmy0 left after rmmod");
    insmod(n, "")?;
    add("rt-dmy0", None).map_err(|e| format!("RTM_NEWLINK rt-dmy0 after reload: errno {e} ({})", errname(e)))?;
    sh("ip link set dummy0 up && ip link set rt-dmy0 up")?;
    let got = dummies(&nl)?;
    check!(got == ["dummy0", "rt-dmy0"], "after reload: devices of kind dummy {got:?}");
    rmmod(n)?;
    let left = dummies(&nl)?;
    check!(left.is_empty() && !link_exists("rt-dmy0") && !link_exists("dummy0"), "rmmod with devices up: left {left:?}");
    insmod(n, "")?;
    check!(dummies(&nl)? == ["dummy0"], "insmod after that: {:?}", dummies(&nl)?);
    rmmod(n)
}

/// The counters of a dummy device that has sent `packets` frames of
/// `bytes` in all: sysfs (dev_get_stats()) and `IFLA_STATS64` say the
/// same, and nothing else moved.
fn check_tx(nl: &Nl, name: &str, packets: u64, bytes: u64) -> TestResult {
    let c = counters(name)?;
    check!(c.tx_packets == packets && c.tx_bytes == bytes, "sysfs: tx_packets {} tx_bytes {}, expected {packets} and {bytes}", c.tx_packets, c.tx_bytes);
    check!(c.rx_packets == 0 && c.rx_bytes == 0 && c.rx_dropped == 0 && c.tx_dropped == 0, "sysfs: {c:?}");
    check!(stat(name, "rx_errors")? == 0 && stat(name, "tx_errors")? == 0, "sysfs: errors counted");
    let s = link(nl, name)?.stats64.ok_or(format!("{name}: no IFLA_STATS64"))?;
    check!(
        s.tx_packets == packets && s.tx_bytes == bytes && s.rx_packets == 0 && s.rx_bytes == 0,
        "IFLA_STATS64 {s:?}, expected tx {packets} packets of {bytes} bytes, no rx"
    );
    check!(s.rx_dropped == 0 && s.tx_dropped == 0 && s.rx_errors == 0 && s.tx_errors == 0, "IFLA_STATS64 {s:?}");
    Ok(())
}

/// Transmit: every frame sent out of the device is counted (dummy_xmit()'s
/// dev_lstats_add(): tx_packets, and tx_bytes of the lengths as sent, the
/// link-layer header included) and freed; nothing received, nothing
/// dropped, in sysfs and in `IFLA_STATS64` alike (dummy_get_stats64()),
/// from a packet socket and from the stack (a UDP socket routed through
/// the device: `IFF_NOARP`, no neighbour resolution). Each datagram sent
/// with `SO_TIMESTAMPING` gets its software transmit time stamp
/// (skb_tx_timestamp()).
pub fn t_tx_stats(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    insmod(n, "")?;
    sh("ip link set dummy0 up")?;
    check_tx(&nl, "dummy0", 0, 0)?;
    let s = packet_socket("dummy0")?;
    let src = mac("dummy0")?;
    let mut bytes = 0;
    for i in 0..10 {
        let udp = pkt::udp(9, 9, &vec![0x5a; 10 + 97 * i]);
        let f = pkt::eth([0xff; 6], src, pkt::ETH_P_IP, &pkt::ipv4([10, 61, 0, 1], [10, 61, 0, 2], pkt::IPPROTO_UDP, &udp));
        let w = fd_write(s.0, &f).map_err(|e| format!("AF_PACKET write {i}: errno {e} ({})", errname(e)))?;
        check!(w == f.len(), "AF_PACKET write {i}: {w} of {} bytes", f.len());
        bytes += f.len() as u64;
    }
    check_tx(&nl, "dummy0", 10, bytes)?;
    sh("ip addr add 10.61.0.1/24 dev dummy0")?;
    let u = Sock::udp()?;
    let flags = libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    setsockopt_int(u.0, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, flags as i32)?;
    for i in 0..5 {
        let data = vec![0xa5; 20 + 300 * i];
        sendto(u.0, &data, 0, [10, 61, 0, 2], 9).map_err(|e| format!("UDP send {i}: errno {e} ({})", errname(e)))?;
        bytes += (14 + 20 + 8 + data.len()) as u64;
    }
    let (errs, stamped) = read_errqueue(u.0, Duration::from_secs(1))?;
    let ts = errs.iter().filter(|e| e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && e.ee_info == 0).count();
    check!(ts == 5 && stamped, "{ts} SCM_TSTAMP_SND reports (time set: {stamped}), expected 5");
    check_tx(&nl, "dummy0", 15, bytes)?;
    drop((s, u));
    rmmod(n)
}

/// `SIOCSIFHWADDR` on `name`: `family`, `addr`.
fn set_hwaddr(name: &str, family: u16, addr: [u8; 6]) -> Result<(), i32> {
    let mut r = IfReqAddr { name: [0; 16], family, data: [0; 14], pad: [0; 8] };
    let len = name.len().min(15);
    r.name[..len].copy_from_slice(&name.as_bytes()[..len]);
    r.data[..6].copy_from_slice(&addr);
    let s = Sock::udp().map_err(|_| errno())?;
    ioctl_ptr(s.0, SIOCSIFHWADDR, &mut r).map(|_| ())
}

/// On an up device: the qdisc is `noqueue` (`IFF_NO_QUEUE`); carrier on,
/// `IFLA_CARRIER` off and on again (dummy_change_carrier()) as sysfs
/// `carrier` and `operstate` show; the address changes while up
/// (eth_mac_addr(), `IFF_LIVE_ADDR_CHANGE`) and is refused if it is not
/// unicast or of another type; any MTU from 0 up is taken (min_mtu 0,
/// max_mtu 0: dev_validate_mtu() then has no upper bound), a negative one
/// refused.
pub fn t_link_settings(n: Node) -> TestResult {
    let nl = Nl::open(0).map_err(|e| format!("netlink: {e}"))?;
    insmod(n, "")?;
    sh("ip link set dummy0 up")?;
    let l = link(&nl, "dummy0")?;
    check!(l.qdisc.as_deref() == Some("noqueue"), "qdisc {:?}, expected noqueue", l.qdisc);
    check!(sysfs("dummy0", "carrier") == "1", "carrier {:?} when up", sysfs("dummy0", "carrier"));
    check!(sysfs("dummy0", "operstate") == "unknown", "operstate {:?} when up", sysfs("dummy0", "operstate"));
    let i = ifindex("dummy0");
    nl.set_carrier(i, false).map_err(|e| format!("IFLA_CARRIER 0: errno {e} ({})", errname(e)))?;
    check!(sysfs("dummy0", "carrier") == "0", "carrier {:?} after IFLA_CARRIER 0", sysfs("dummy0", "carrier"));
    check!(wait_sysfs("dummy0", "operstate", "down"), "operstate {:?} without carrier", sysfs("dummy0", "operstate"));
    nl.set_carrier(i, true).map_err(|e| format!("IFLA_CARRIER 1: errno {e} ({})", errname(e)))?;
    check!(sysfs("dummy0", "carrier") == "1", "carrier {:?} after IFLA_CARRIER 1", sysfs("dummy0", "carrier"));
    check!(wait_sysfs("dummy0", "operstate", "up"), "operstate {:?} with carrier again", sysfs("dummy0", "operstate"));
    check!(sysfs("dummy0", "carrier_changes") == "2", "carrier_changes {}", sysfs("dummy0", "carrier_changes"));

    let addr = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    set_hwaddr("dummy0", ARPHRD_ETHER, addr).map_err(|e| format!("SIOCSIFHWADDR while up: errno {e} ({})", errname(e)))?;
    check!(sysfs("dummy0", "address") == "02:11:22:33:44:55", "address {}", sysfs("dummy0", "address"));
    check!(sysfs("dummy0", "addr_assign_type") == NET_ADDR_SET, "addr_assign_type {}", sysfs("dummy0", "addr_assign_type"));
    expect_errno!(set_hwaddr("dummy0", ARPHRD_ETHER, [0x01, 0, 0x5e, 0, 0, 1]), libc::EADDRNOTAVAIL, "a multicast address");
    expect_errno!(set_hwaddr("dummy0", ARPHRD_ETHER, [0; 6]), libc::EADDRNOTAVAIL, "the zero address");
    expect_errno!(set_hwaddr("dummy0", ARPHRD_NONE, addr), libc::EINVAL, "an address of type ARPHRD_NONE");
    check!(sysfs("dummy0", "address") == "02:11:22:33:44:55", "address {} after refusals", sysfs("dummy0", "address"));

    for mtu in [9000, 0, 67, 65535, 1 << 20, 1500] {
        ifreq_ioctl(SIOCSIFMTU, "dummy0", mtu).map_err(|e| format!("SIOCSIFMTU {mtu}: errno {e} ({})", errname(e)))?;
        let l = link(&nl, "dummy0")?;
        check!(sysfs("dummy0", "mtu") == mtu.to_string() && l.mtu == Some(mtu as u32), "mtu {} ({:?}), expected {mtu}", sysfs("dummy0", "mtu"), l.mtu);
    }
    expect_errno!(ifreq_ioctl(SIOCSIFMTU, "dummy0", -1), libc::EINVAL, "SIOCSIFMTU -1");
    check!(sysfs("dummy0", "mtu") == "1500", "mtu {} after a refusal", sysfs("dummy0", "mtu"));
    rmmod(n)
}

/// ethtool: `-i` names the link kind as the driver (dummy has no
/// get_drvinfo, nor has the Rust copy: the core gives the link kind,
/// `dummy` for both, and the kernel's release), and nothing else (no
/// firmware, bus, counters, tests, EEPROM or registers); `-k`: the
/// features dummy_setup() and the core turn on, and which are
/// changeable; `-T`: software time stamps (ethtool_op_get_ts_info());
/// no link state (`ETHTOOL_GLINK`: dummy has no get_link).
pub fn t_ethtool(n: Node) -> TestResult {
    insmod(n, "")?;
    let d = drvinfo("dummy0").map_err(|e| format!("GDRVINFO: errno {e} ({})", errname(e)))?;
    check!(cstr(&d.driver) == "dummy", "driver {:?}, expected the link kind \"dummy\"", cstr(&d.driver));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").map_err(|e| e.to_string())?;
    check!(cstr(&d.version) == release.trim(), "version {:?}, expected the release {:?}", cstr(&d.version), release.trim());
    let empty = [cstr(&d.fw_version), cstr(&d.bus_info), cstr(&d.erom_version)];
    check!(empty.iter().all(String::is_empty), "fw_version, bus_info, erom_version {empty:?}, expected none");
    let counts = [d.n_priv_flags, d.n_stats, d.testinfo_len, d.eedump_len, d.regdump_len];
    check!(counts == [0; 5], "n_priv_flags, n_stats, testinfo_len, eedump_len, regdump_len {counts:?}, expected 0");

    let f = features("dummy0").map_err(|e| format!("GFEATURES: errno {e} ({})", errname(e)))?;
    let names = |pick: fn(&crate::ethtool::Feature) -> bool| {
        let mut v: Vec<&str> = f.iter().filter(|x| pick(x)).map(|x| x.name.as_str()).collect();
        v.sort_unstable();
        v
    };
    let on = names(|x| x.active);
    // 7.3's NETIF_F_GSO_SOFTWARE adds AccECN segmentation (both drivers).
    let with_7_3 = |base: &[&str]| {
        let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        if crate::tun::kernel_has_backpressure() {
            v.push("tx-tcp-accecn-segmentation".to_string());
            v.sort();
        }
        v
    };
    let features_on = with_7_3(FEATURES_ON);
    let features_changeable = with_7_3(FEATURES_CHANGEABLE);
    check!(on == features_on, "features on {on:?}, expected {features_on:?}");
    let changeable = names(|x| x.available);
    check!(changeable == features_changeable, "changeable features {changeable:?}, expected {features_changeable:?}");
    let requested = names(|x| x.requested);
    check!(requested == features_on, "requested features {requested:?}, expected those on");

    let ts = ts_info("dummy0").map_err(|e| format!("GET_TS_INFO: errno {e} ({})", errname(e)))?;
    check!(ts.so_timestamping == SOF_SOFTWARE_ALL, "so_timestamping {:#x}, expected {SOF_SOFTWARE_ALL:#x}", ts.so_timestamping);
    check!(ts.phc_index == -1 && ts.tx_types == 0 && ts.rx_filters == 0, "{ts:?}");
    let mut glink = [ETHTOOL_GLINK, 0];
    expect_errno!(ethtool_cmd("dummy0", glink.as_mut_ptr().cast()), libc::EOPNOTSUPP, "ETHTOOL_GLINK");
    rmmod(n)
}
