//! The socket that stands for the queue file (`tun_get_socket`'s
//! `sock->file`), compared between both drivers through kprobes (debug
//! kernel only: `CONFIG_KPROBE_EVENTS`).

use super::*;

/// tracefs, mounted if it is not.
pub fn tracefs() -> Result<&'static str, String> {
    for d in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if std::path::Path::new(&format!("{d}/kprobe_events")).exists() {
            return Ok(d);
        }
    }
    let _ = sh("mount -t tracefs nodev /sys/kernel/tracing");
    if std::path::Path::new("/sys/kernel/tracing/kprobe_events").exists() {
        return Ok("/sys/kernel/tracing");
    }
    Err("no kprobe_events (CONFIG_KPROBE_EVENTS)".into())
}

/// This test's kprobe events (group `rtun_sf`), removed on drop.
pub struct Kprobes {
    dir: &'static str,
    names: Vec<String>,
}

impl Kprobes {
    fn new(dir: &'static str) -> Kprobes {
        Kprobes { dir, names: Vec::new() }
    }

    /// Adds and enables `p:rtun_sf/NAME SPEC`.
    fn add(&mut self, name: &str, spec: &str) -> TestResult {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(format!("{}/kprobe_events", self.dir))
            .map_err(|e| e.to_string())?;
        f.write_all(format!("p:rtun_sf/{name} {spec}\n").as_bytes()).map_err(|e| format!("kprobe {name}: {e}"))?;
        self.names.push(name.to_string());
        write_file(&format!("{}/events/rtun_sf/{name}/enable", self.dir), "1")
    }

    /// Empties the trace buffer.
    fn clear(&self) -> TestResult {
        write_file(&format!("{}/trace", self.dir), "")
    }

    /// This process's records: (event, its `key=value` fields).
    fn records(&self) -> Result<Vec<(String, Vec<(String, u64)>)>, String> {
        let text = std::fs::read_to_string(format!("{}/trace", self.dir)).map_err(|e| e.to_string())?;
        let me = format!("-{} ", std::process::id());
        let mut out = Vec::new();
        for l in text.lines().filter(|l| !l.starts_with('#') && l.contains(&me)) {
            let Some(ev) = self.names.iter().find(|n| l.contains(&format!(" {n}: "))) else {
                continue;
            };
            let fields = l
                .split_whitespace()
                .filter_map(|w| w.split_once('='))
                .filter_map(|(k, v)| u64::from_str_radix(v.trim_start_matches("0x"), 16).ok().map(|v| (k.to_string(), v)))
                .collect();
            out.push((ev.clone(), fields));
        }
        Ok(out)
    }
}

impl Drop for Kprobes {
    fn drop(&mut self) {
        for n in self.names.iter().rev() {
            let _ = write_file(&format!("{}/events/rtun_sf/{n}/enable", self.dir), "0");
            let _ = sh(&format!("echo '-:rtun_sf/{n}' >> {}/kprobe_events", self.dir));
        }
    }
}

/// Words of `struct sock` one scan event reads.
pub const SCAN: usize = 120;

pub fn field(f: &[(String, u64)], k: &str) -> Option<u64> {
    f.iter().find(|(n, _)| n == k).map(|(_, v)| *v)
}

/// The queue socket stands for the file, as tun.c's (`tun_chr_open()`:
/// `tfile->socket.file = file; tfile->socket.ops = &tun_socket_ops`): a
/// frame written through the device is charged to a socket whose
/// `sk_socket->file` is the file written to -- what netfilter's owner
/// match (`meta skuid`, `xt_owner`) and uid logging read -- and whose
/// `ops` is set. Seen through kprobes (the debug kernel; the test kernels
/// have no netfilter): `sock_init_data_uid()` at open gives the socket and
/// its `struct sock`, a scan of that `struct sock` at the write's
/// `sock_alloc_send_pskb()` finds `sk_socket`, and `struct socket`'s
/// `file` and `ops` (offsets 16 and 32 on x86_64, whatever the config)
/// are compared with the file `fd_install()` gave the descriptor. Both
/// drivers, in this one test (the debug suites run no C-only test). At
/// `sk_free()` after close rust_tun's socket stands for no file (tun.c's
/// still points to the freed one: printed, not compared).
pub fn t_sock_file(_: Node) -> TestResult {
    let dir = match tracefs() {
        Ok(d) => d,
        Err(e) => skip!("{e}"),
    };
    load("tun")?;
    for n in [RUST, C] {
        let mut k = Kprobes::new(dir);
        k.add("sidu", "sock_init_data_uid sock=%di:x64 sk=%si:x64")?;
        k.add("fdi", "fd_install fd=%di:u32 file=%si:x64")?;
        // The candidates for sk->sk_socket: the first 2880 bytes of struct
        // sock, 120 words per event (an event takes 128 arguments).
        for part in 0..3 {
            let args: Vec<String> = (0..SCAN).map(|i| format!("q{i}=+{}(%di):x64", (part * SCAN + i) * 8)).collect();
            k.add(&format!("scan{part}"), &format!("sock_alloc_send_pskb sk=%di:x64 {}", args.join(" ")))?;
        }
        k.clear()?;
        let t = Tun::create(n.path, "rt-sf0", IFF_TUN | IFF_NO_PI).map_err(|e| format!("{}: TUNSETIFF: {e}", n.driver))?;
        ptp_up("rt-sf0", "10.86.0.1", "10.86.0.2")?;
        let w = udp_pkt([10, 86, 0, 2], 5000, [10, 86, 0, 1], 9);
        check!(t.write(&w) == Ok(w.len()), "{}: write", n.driver);
        let recs = k.records()?;
        // The device's open: the last install of its descriptor's number
        // (the trace files' own opens took it before).
        let fd = t.fd() as u64;
        let fdi_at = recs
            .iter()
            .rposition(|(e, f)| e == "fdi" && field(f, "fd") == Some(fd))
            .ok_or_else(|| format!("{}: no fd_install of fd {fd}", n.driver))?;
        let file = field(&recs[fdi_at].1, "file").unwrap_or(0);
        // The socket set up by this open: the last sock_init_data_uid
        // before the descriptor was installed.
        let (sock, sk) = recs[..fdi_at]
            .iter()
            .rev()
            .find(|(e, _)| e == "sidu")
            .and_then(|(_, f)| Some((field(f, "sock")?, field(f, "sk")?)))
            .ok_or_else(|| format!("{}: no sock_init_data_uid at open", n.driver))?;
        let mut off = None;
        for (e, f) in &recs {
            if !e.starts_with("scan") || field(f, "sk") != Some(sk) {
                continue;
            }
            let part: usize = e[4..].parse().unwrap_or(0);
            if let Some(i) = (0..SCAN).find(|i| field(f, &format!("q{i}")) == Some(sock)) {
                off = Some((part * SCAN + i) * 8);
            }
        }
        let off = off.ok_or_else(|| format!("{}: the write's socket ({sk:#x}) does not point to {sock:#x}", n.driver))?;
        drop(k);
        // Now read the socket's file and ops at the next write, and the
        // file at sk_free() after close.
        let mut k = Kprobes::new(dir);
        k.add("wfile", &format!("sock_alloc_send_pskb sk=%di:x64 file=+16(+{off}(%di)):x64 ops=+32(+{off}(%di)):x64"))?;
        k.add("free", &format!("sk_free sk=%di:x64 file=+16(+{off}(%di)):x64"))?;
        k.clear()?;
        check!(t.write(&w) == Ok(w.len()), "{}: write", n.driver);
        drop(t);
        sh("ip link del rt-sf0 2>/dev/null; true")?;
        thread::sleep(Duration::from_millis(200));
        let recs = k.records()?;
        let wf = recs
            .iter()
            .find(|(e, f)| e == "wfile" && field(f, "sk") == Some(sk))
            .map(|(_, f)| (field(f, "file"), field(f, "ops")))
            .ok_or_else(|| format!("{}: no write on the socket", n.driver))?;
        let freed = recs.iter().find(|(e, f)| e == "free" && field(f, "sk") == Some(sk)).and_then(|(_, f)| field(f, "file"));
        let hex = |v: Option<u64>| v.map_or("none".to_string(), |v| format!("{v:#x}"));
        println!(
            "# {}: sk_socket at {off}; at the write file {} (the fd's {file:#x}), ops {}; at sk_free file {}",
            n.driver,
            hex(wf.0),
            hex(wf.1),
            hex(freed)
        );
        check!(wf.0 == Some(file), "{}: the written frame's socket's file {}, the fd's is {file:#x}", n.driver, hex(wf.0));
        check!(wf.1.is_some_and(|o| o != 0), "{}: sock->ops {}", n.driver, hex(wf.1));
        if n.module == "rust_tun" {
            check!(freed == Some(0), "rust_tun: at sk_free the socket still names a file: {}", hex(freed));
        }
    }
    Ok(())
}
