//! Real clients (issue "Drop-in tun"): the Debian-packaged ones and the
//! kernel's tun selftest through `scripts/guest/clients-smoke.sh` (in the
//! guest as /usr/bin/clients-smoke), a 32-bit client through the compat
//! ioctl path, and the drop-in mode's conflicts with tun.ko.

use super::*;

const SMOKE: &str = "/usr/bin/clients-smoke";
const TUN32: &str = "/usr/bin/tun32";
/// Where the drop-in run keeps tun.ko out of modprobe's sight.
const HIDDEN_TUN: &str = "/lib/modules/.hidden/tun.ko";

/// iproute2 (`ip tuntap add/show/del`, `-d`, `ip -d link`, carrier),
/// socat, openvpn and wireguard-go with data flowing (pings and a 256 KiB
/// TCP transfer through each tunnel), the kernel's tun selftest and the
/// 32-bit client, run as their users run them, on whatever serves
/// `/dev/net/tun`: tun.ko in the side-by-side run, rust_tun in the drop-in
/// run, with the same expectations.
pub fn t_clients(n: Node) -> TestResult {
    if !std::path::Path::new(SMOKE).exists() {
        skip!("no clients in this guest (scripts/run-guest.sh --clients)");
    }
    let driver = if n.label == "dropin" { "dropin" } else { "tun" };
    let out = Command::new("/bin/sh")
        .args([SMOKE, "RTUN_NOLOAD=1", "RTUN_STRACE=0", driver])
        .output()
        .map_err(|e| format!("{SMOKE}: {e}"))?;
    let text = output_text(&out);
    let results: Vec<&str> = text.lines().filter(|l| l.starts_with("CLIENT ")).collect();
    for l in &results {
        println!("# {l}");
    }
    let ok = |c: &str| results.iter().any(|l| *l == format!("CLIENT {c} ok"));
    let mut want = vec!["iproute2", "socat", "openvpn", "wireguard-go", "tun-selftest", "tun32"];
    // The topologies users build (a tap in a bridge with a veth to another
    // namespace, VLAN over a tap, wireguard-go over veth) need the bridge,
    // veth and 8021q modules: Debian's kernel has them, the test kernels
    // veth alone (wg-veth runs there). On Debian's each must run and pass,
    // and everywhere each that ran.
    let ran: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("RTUN-TOPOLOGIES:"))
        .map(|t| t.split_whitespace().take_while(|w| !w.starts_with("none")).map(|w| format!("topology-{w}")).collect())
        .unwrap_or_default();
    if kernel_flavor().is_ok_and(|f| f == "debian") {
        for t in ["topology-bridge", "topology-vlan", "topology-wg-veth"] {
            check!(ran.iter().any(|r| r == t), "{t} did not run on Debian's kernel");
        }
    }
    want.extend(ran.iter().map(String::as_str));
    let missing: Vec<&str> = want.iter().copied().filter(|c| !ok(c)).collect();
    if !out.status.success() || !missing.is_empty() {
        for l in text.lines().rev().take(60).collect::<Vec<_>>().iter().rev() {
            println!("# | {l}");
        }
        return Err(format!("clients not ok: {missing:?} (exit {:?})", out.status.code()));
    }
    Ok(())
}

/// The 32-bit client's ioctls (`compat_ioctl`, the 32-bit `ifreq`) give
/// the same results on rust_tun as on tun, step by step; only
/// `TUNGETFEATURES` differs, by what each implements.
pub fn t_compat_32bit(_: Node) -> TestResult {
    if !std::path::Path::new(TUN32).exists() {
        skip!("no 32-bit client in this guest (scripts/run-guest.sh --clients)");
    }
    load("tun")?;
    let run = |node: &str, name: &str| -> Result<Vec<String>, String> {
        let out = Command::new(TUN32).args([node, name]).output().map_err(|e| format!("{TUN32}: {e}"))?;
        check!(out.status.success(), "{TUN32} {node}: exit {:?}", out.status.code());
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.replace(&format!("name={name}"), "name=NAME"))
            .collect())
    };
    let rust = run(RUST_NODE, "rt32")?;
    let c = run(C_NODE, "ct32")?;
    check!(rust.len() == c.len(), "{} steps on rust_tun, {} on tun", rust.len(), c.len());
    check!(rust.iter().any(|l| l.starts_with("step=close")), "the client did not finish");
    let features = |v: &[String]| v.iter().find(|l| l.starts_with("step=TUNGETFEATURES")).cloned().unwrap_or_default();
    // 7.3's TUNGETFEATURES adds IFF_BACKPRESSURE (both drivers).
    let bp = if crate::tun::kernel_has_backpressure() { u32::from(crate::tun::IFF_BACKPRESSURE) } else { 0 };
    check!(features(&rust).contains(&format!("features={:#06x}", RUST.features | bp)), "rust_tun: {}", features(&rust));
    check!(features(&c).contains(&format!("features={:#06x}", C.features | bp)), "tun: {}", features(&c));
    let mut diffs = Vec::new();
    for (r, t) in rust.iter().zip(&c) {
        println!("# {r}");
        if r != t && !r.starts_with("step=TUNGETFEATURES") {
            diffs.push(format!("rust_tun `{r}` vs tun `{t}`"));
        }
    }
    check!(diffs.is_empty(), "32-bit results differ:\n{}", diffs.join("\n"));
    Ok(())
}

/// Drop-in mode and tun.ko exclude each other cleanly: loading tun.ko
/// while rust_tun holds `/dev/net/tun` and the kind `tun` fails and leaves
/// rust_tun serving; loading rust_tun with `dropin=1` while tun.ko holds
/// them fails with `EEXIST` (`EBUSY` on 7.3, whose loader converts an
/// init's `EEXIST`) and one log line saying why, leaving tun.ko serving.
pub fn t_dropin_conflicts(n: Node) -> TestResult {
    check!(std::path::Path::new(HIDDEN_TUN).exists(), "{HIDDEN_TUN} missing (tests.sh dropin hides tun.ko there)");
    let serving = |driver: &str| -> TestResult {
        let t = Tun::create(C_NODE, "dc0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("{driver}: TUNSETIFF on {C_NODE}: {e}"))?;
        let (drv, _, _) = ethtool_drvinfo(&t.name).map_err(|e| format!("GDRVINFO: {e}"))?;
        check!(drv == "tun", "{driver}: ethtool driver {drv}");
        Ok(())
    };
    serving("rust_tun")?;
    check!(sh(&format!("insmod {HIDDEN_TUN}")).is_err(), "tun.ko loaded beside rust_tun dropin=1");
    check!(module_loaded("rust_tun") && !module_loaded("tun"), "modules after the refused tun.ko");
    serving("rust_tun after the refused tun.ko")?;

    unload(n.module)?;
    sh(&format!("insmod {HIDDEN_TUN}"))?;
    let before: usize = sh("dmesg | wc -l").unwrap_or_default().trim().parse().unwrap_or(0);
    let r = sh(&format!("insmod {MODDIR}/rust_tun.ko dropin=1"));
    let log = sh(&format!("dmesg | tail -n +{}", before + 1)).unwrap_or_default();
    let (want, want_msg) = if crate::tun::kernel_is_7_3() {
        ("EBUSY", "Device or resource busy")
    } else {
        ("EEXIST", "File exists")
    };
    let want_errno = |e: &str| e.contains(want_msg) || e.contains(want);
    let back = || -> TestResult {
        unload("tun")?;
        sh(&format!("insmod {MODDIR}/rust_tun.ko dropin=1"))?;
        Ok(())
    };
    match r {
        Ok(_) => {
            back()?;
            return Err("rust_tun dropin=1 loaded beside tun.ko".into());
        }
        // rtnl_link_register()'s EEXIST; 7.3's module loader reserves
        // EEXIST for "already loaded" and turns an init's into EBUSY
        // (do_init_module()).
        Err(e) if want_errno(&e) => {}
        Err(e) => {
            back()?;
            return Err(format!("rust_tun dropin=1 beside tun.ko: {e} (expected {want})"));
        }
    }
    // One line per load attempt (busybox insmod tries finit_module, then
    // init_module: two attempts), each the same, naming the reason.
    let why: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("rust_tun: ").map(|(_, m)| m))
        .filter(|m| !m.starts_with("loading out-of-tree"))
        .collect();
    if why.is_empty() || why.iter().any(|m| *m != "dropin: rtnl link kind \"tun\" is registered already (tun.ko loaded?)") {
        back()?;
        return Err(format!("rust_tun's log lines: {why:?}, expected only the reason"));
    }
    if let Err(e) = serving("tun.ko after the refused rust_tun") {
        back()?;
        return Err(e);
    }
    back()?;
    serving("rust_tun again")?;
    Ok(())
}

/// The documented way to have `/dev/net/tun` load rust_tun on demand
/// (README, "Use"; rust_tun declares none of tun.ko's aliases, so
/// that with both installed the choice is the administrator's): a
/// modprobe.d file that aliases `char-major-10-200` to rust_tun with
/// `dropin=1`. With rust_tun unloaded, opening the device node makes the
/// kernel's `request_module("char-major-10-200")` run modprobe, which
/// loads rust_tun in drop-in mode, and the open succeeds. Busybox's
/// modprobe stands in for kmod's (the same `alias`/`options` lines). The
/// Debian package's way, tun.ko's own alias and an `install` line with a
/// fallback to tun.ko, needs kmod: scripts/guest/debian-pkg.sh tests it.
pub fn t_dropin_on_demand(n: Node) -> TestResult {
    // The guest's init made /lib/modules/`uname -r` and its modules.dep
    // (depmod); the kernel runs /sbin/modprobe.
    sh("mkdir -p /etc/modprobe.d /sbin && { [ -e /sbin/modprobe ] || ln -s /bin/busybox /sbin/modprobe; }")?;
    write_file(
        "/etc/modprobe.d/rust_tun.conf",
        "# rust_tun as /dev/net/tun (README, \"Use\")\n\
         options rust_tun dropin=1\n\
         alias char-major-10-200 rust_tun\n",
    )?;
    unload(n.module)?;
    // The static node (kmod's static-nodes or udev make it; devtmpfs took
    // it away with the misc device).
    let node = sh("mkdir -p /dev/net && { [ -e /dev/net/tun ] || mknod /dev/net/tun c 10 200; }");
    let r = Tun::create(C_NODE, "od0", IFF_TAP | IFF_NO_PI);
    let loaded = module_loaded("rust_tun");
    let dropin = std::fs::read_to_string("/sys/module/rust_tun/parameters/dropin").unwrap_or_default();
    let _ = std::fs::remove_file("/etc/modprobe.d/rust_tun.conf");
    if !loaded {
        // Leave the suite as it was.
        sh(&format!("insmod {MODDIR}/rust_tun.ko dropin=1"))?;
    }
    node?;
    let t = r.map_err(|e| format!("open of {C_NODE} with rust_tun unloaded: errno {e} (loaded by modprobe: {loaded})"))?;
    check!(dropin.trim() == "Y", "rust_tun loaded on demand with dropin={}", dropin.trim());
    let (drv, _, _) = ethtool_drvinfo(&t.name).map_err(|e| format!("GDRVINFO: {e}"))?;
    check!(drv == "tun", "the device's driver {drv}");
    Ok(())
}
