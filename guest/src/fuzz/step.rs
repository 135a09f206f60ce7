//! One operation of the fuzzer: picks its kind (attach, write, read, poll,
//! detach, ioctls, knobs, the stack's traffic...) and does it.

use super::*;

/// One operation: generated from the RNG against the world, run, and
/// accounted. Returns (description, result, whether a divergence in it is
/// a known gap); what it read is in `World::out` (`fuzz-diff`).
pub fn step(w: &Mutex<World>, node: &str, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let kind = rng.below(100);
    // Pick a queue (and what we need of it) under the lock.
    let pick = |w: &World, rng: &mut Rng| -> Option<Queue> {
        (!w.queues.is_empty()).then(|| w.queues[rng.below(w.queues.len() as u64) as usize].clone())
    };
    let (snap, name_of, prefix, chaos) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (pick(&g, rng), (0..DEVS.len()).map(|d| g.name(d)).collect::<Vec<_>>(), g.prefix.clone(), g.chaos)
    };
    // With no queue to work on, queue operations become attaches.
    let kind = if snap.is_none() && (13..96).contains(&kind) && !(82..=91).contains(&kind) { kind % 13 } else { kind };
    match kind {
        // Attach: open the node and TUNSETIFF, mostly valid.
        0..=12 => {
            let dev = rng.below(HOME as u64) as usize;
            let d = DEVS[dev];
            // The differential run makes wrong-kind attaches only to a
            // device that exists (one it has a queue of): on a missing one
            // they would create a device of another kind, whose packets
            // the run then steers by a flow table (see `STEERED`).
            let exists = w.lock().unwrap_or_else(|e| e.into_inner()).queues.iter().any(|q| q.dev == dev);
            let variant = rng.below(12);
            let variant = if !chaos && !exists && variant <= 2 { 11 } else { variant };
            let (name, flags, what) = match variant {
                0 => (name_of[dev].clone(), d.flags() ^ (IFF_TUN | IFF_TAP), "wrong type"),
                1 => (name_of[dev].clone(), d.flags() ^ IFF_MULTI_QUEUE, "wrong queueing"),
                2 => (name_of[dev].clone(), d.flags() & !(IFF_TUN | IFF_TAP), "no type"),
                3 => (format!("{prefix}/x"), d.flags(), "bad name"),
                4 => (name_of[dev].clone(), d.flags() | IFF_TUN_EXCL, "exclusive"),
                5 if chaos => (name_of[dev].clone(), d.flags() ^ IFF_VNET_HDR, "vnet flipped"),
                _ => (name_of[dev].clone(), d.flags(), "valid"),
            };
            // Chaos mode opens some blocking (a signal interrupts their
            // reads); the differential mode never blocks.
            let nonblock = !chaos || rng.below(3) != 0;
            let file = match File::options().read(true).write(true).custom_flags_nonblock(nonblock).open(node) {
                Ok(f) => f,
                Err(e) => return (format!("open {node}"), Err(e.raw_os_error().unwrap_or(0)), false),
            };
            // A device this attach creates gets its addresses anew.
            let existed = link_exists(&name);
            let mut ifr = IfReq::new(&name, flags);
            let r = if rng.below(20) == 0 {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, 16usize as *mut IfReq).map(i64::from)
            } else {
                ioctl_ptr(file.as_raw_fd(), TUNSETIFF, &mut ifr).map(i64::from)
            };
            if r.is_ok() && what != "bad name" {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                if !existed {
                    g.departed[dev] = false;
                    g.configured[dev] = false;
                    g.filtered[dev] = false;
                    g.hdrsz[dev] = VNET_HDR_LEN;
                }
                configure(&mut g, dev);
                g.queues.push(Queue { file: Arc::new(file), dev, detached: false });
                // Once a device has had two queues, which of them holds the
                // stack's packets is the flow table's business from then on.
                if g.queues.iter().filter(|x| x.dev == dev).count() > 1 {
                    g.steered[dev] = true;
                }
            }
            (format!("TUNSETIFF {name} {flags:#x} ({what})"), r, false)
        }
        // Writes.
        13..=41 => {
            let Some(q) = snap else { return ("write (no queue)".into(), Err(libc::EBADF), false) };
            let (p, what) = {
                let g = w.lock().unwrap_or_else(|e| e.into_inner());
                build_write(&g, q.dev, rng)
            };
            let fd = q.file.as_raw_fd();
            let r = match rng.below(6) {
                // writev in small pieces, with empty ones.
                0 | 1 if p.len() > 2 => {
                    let mut iovs = Vec::new();
                    let mut off = 0;
                    while off < p.len() {
                        let n = (1 + rng.below(64) as usize).min(p.len() - off);
                        iovs.push(libc::iovec { iov_base: p[off..].as_ptr() as *mut _, iov_len: n });
                        if rng.below(4) == 0 {
                            iovs.push(libc::iovec { iov_base: p.as_ptr() as *mut _, iov_len: 0 });
                        }
                        off += n;
                    }
                    iovs.truncate(1024);
                    // SAFETY: Each iovec points into `p`.
                    ret(unsafe { libc::writev(fd, iovs.as_ptr(), iovs.len() as i32) })
                }
                // writev in two to four large pieces: the headers, then
                // page fragments (IFF_NAPI_FRAGS' layout), cut anywhere.
                2 if p.len() > 2 => {
                    let mut cuts: Vec<usize> = (0..1 + rng.below(3)).map(|_| 1 + rng.below(p.len() as u64 - 1) as usize).collect();
                    if rng.below(2) == 0 {
                        cuts.push(DEVS[q.dev].l3(0).min(p.len()));
                    }
                    cuts.push(0);
                    cuts.push(p.len());
                    cuts.sort_unstable();
                    cuts.dedup();
                    let iovs: Vec<libc::iovec> =
                        cuts.windows(2).map(|c| libc::iovec { iov_base: p[c[0]..].as_ptr() as *mut _, iov_len: c[1] - c[0] }).collect();
                    // SAFETY: Each iovec points into `p`.
                    ret(unsafe { libc::writev(fd, iovs.as_ptr(), iovs.len() as i32) })
                }
                _ => fd_write(fd, &p).map(|n| n as i64),
            };
            if !chaos {
                settle_stack();
            }
            let bytes = if std::env::var("RTUN_FUZZ_TRACE").is_ok() { format!(" {p:02x?}") } else { String::new() };
            (format!("write {} bytes ({what}) to {}{bytes}", p.len(), DEVS[q.dev].suffix), r, what.starts_with("oversized"))
        }
        // Reads.
        42..=60 => {
            let Some(q) = snap else { return ("read (no queue)".into(), Err(libc::EBADF), false) };
            let fd = q.file.as_raw_fd();
            if chaos && rng.below(3) == 0 {
                // Wait a little for something to read.
                let _ = poll_fd(fd, libc::POLLIN, Duration::from_millis(rng.below(30)));
            }
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            // A steered read must take whole packets: a short buffer would
            // cut a different packet in each run.
            let lens: &[usize] = if steered { &[2048, 65536] } else { &[0, 3, 10, 64, 1500, 2048, 65536] };
            let len = lens[rng.below(lens.len() as u64) as usize];
            let mut buf = vec![0u8; len];
            let (r, how) = match rng.below(3) {
                0 => {
                    let half = len / 2;
                    let iovs = [
                        libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: half },
                        // SAFETY: Within `buf`.
                        libc::iovec { iov_base: unsafe { buf.as_mut_ptr().add(half) }.cast(), iov_len: len - half },
                    ];
                    // SAFETY: Two iovecs into `buf`.
                    (ret(unsafe { libc::readv(fd, iovs.as_ptr(), 2) }), "readv")
                }
                1 => {
                    let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: len };
                    // SAFETY: One iovec into `buf`.
                    (ret(unsafe { libc::preadv2(fd, &iov, 1, -1, libc::RWF_NOWAIT) }), "preadv2 nowait")
                }
                _ => (fd_read(fd, &mut buf).map(|n| n as i64), "read"),
            };
            if !chaos {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                if let Ok(n) = r {
                    let data = norm(&g, q.dev, &buf[..(n as usize).min(len)]);
                    if steered {
                        g.mq_acc[q.dev].push(data);
                    } else {
                        record(&mut g.out, &data);
                    }
                }
            }
            (format!("{how} {len} from {}{}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // Polls.
        61..=64 => {
            let Some(q) = snap else { return ("poll (no queue)".into(), Err(libc::EBADF), false) };
            let t = if chaos { rng.below(30) } else { 0 };
            let r = poll_fd(q.file.as_raw_fd(), libc::POLLIN | libc::POLLOUT, Duration::from_millis(t)).map(i64::from);
            let steered = !chaos && w.lock().unwrap_or_else(|e| e.into_inner()).steered[q.dev];
            (format!("poll {} ({t} ms){}", DEVS[q.dev].suffix, if steered { STEERED } else { "" }), r, false)
        }
        // The tun ioctls.
        65..=81 => ioctl_step(w, &snap, rng),
        // Device administration.
        82..=91 => {
            let dev = rng.below(HOME as u64) as usize;
            let name = name_of[dev].clone();
            match rng.below(6) {
                0 => {
                    let up = rng.below(3) != 0;
                    let r = if up {
                        bring_up(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev)
                    } else {
                        let r = set_up(&name, false);
                        if r.is_ok() {
                            w.lock().unwrap_or_else(|e| e.into_inner()).up[dev] = false;
                        }
                        r
                    };
                    (format!("{name} {}", if up { "up" } else { "down" }), r, false)
                }
                1 => {
                    let mtu = [67, 68, 576, 1280, 1500, 9000, 65521, 65535, 65536][rng.below(9) as usize];
                    (format!("{name} mtu {mtu}"), ifreq_ioctl(libc::SIOCSIFMTU, &name, mtu), false)
                }
                2 => {
                    // The differential run resizes a multi-queue device's
                    // rings only to sizes its traffic cannot fill: which
                    // queue overflows would follow the flow table.
                    let q = if !chaos && DEVS[dev].mq {
                        [500, 1000, 4096][rng.below(3) as usize]
                    } else {
                        [0, 1, 4, 64, 500, 1000, 1 << 20][rng.below(7) as usize]
                    };
                    drain(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev);
                    (format!("{name} txqueuelen {q}"), ifreq_ioctl(libc::SIOCSIFTXQLEN, &name, q), false)
                }
                3 | 4 => stack_send(w, dev, rng),
                // (Not in the differential run: with RPS on, tun.c records
                // a detached queue's stale index and get_rps_cpu() warns --
                // tun's bug, documented, which would fail the run.)
                _ if !chaos => (format!("{name} up (again)"), bring_up(&mut w.lock().unwrap_or_else(|e| e.into_inner()), dev), false),
                _ => {
                    let v = ["0", "4096"][rng.below(2) as usize];
                    let r = std::fs::write("/proc/sys/net/core/rps_sock_flow_entries", v).map(|_| 0).map_err(|e| e.raw_os_error().unwrap_or(0));
                    (format!("rps_sock_flow_entries {v}"), r, false)
                }
            }
        }
        // Close.
        92..=95 => {
            let Some(q) = snap else { return ("close (no queue)".into(), Ok(0), false) };
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            drain(&mut g, q.dev);
            if !chaos && DEVS[q.dev].pi {
                // Deliberate difference (rst, "A persistent device's filter
                // re-attached to a new file"): tun.c does not attach a file
                // that re-attaches a device's filter. The differential run
                // takes the filter off before a file of a tun_pi device
                // (which does not skip it: IFF_NOFILTER is IFF_NO_PI's bit)
                // goes.
                if ioctl_val(q.file.as_raw_fd(), TUNDETACHFILTER, 0).is_ok() {
                    g.filtered[q.dev] = false;
                }
            }
            if let Some(i) = g.queues.iter().position(|x| Arc::ptr_eq(&x.file, &q.file)) {
                g.queues.swap_remove(i);
            }
            g.departed[q.dev] = true;
            (format!("close a queue of {}", DEVS[q.dev].suffix), Ok(0), false)
        }
        // Chaos only: the module's files, rmmod, fork, namespaces.
        _ if chaos => chaos_step(w, node, rng),
        // The differential run: the device's attributes and counters.
        _ => {
            let dev = rng.below(HOME as u64) as usize;
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            drain(&mut g, dev);
            let s = snapshot(&g.name(dev), DEVS[dev].tap, g.steered[dev]);
            g.out.extend_from_slice(s.as_bytes());
            g.gap_out = link_settings(&g.name(dev));
            (format!("sysfs and statistics of {}", DEVS[dev].suffix), Ok(0), false)
        }
    }
}

/// The stack sends UDP out through device `dev` to its peer (port 9):
/// small, up to the MTU, or a GSO super-packet (`UDP_SEGMENT`), which
/// reaches the reader whole, with its vnet header, once `TUNSETOFFLOAD`
/// allows USO. Sent from an unconnected socket, whose packets carry IP ID
/// 0 (DF), from a port the RNG picks: the same in both runs.
pub fn stack_send(w: &Mutex<World>, dev: usize, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let (net, chaos, d) = {
        let g = w.lock().unwrap_or_else(|e| e.into_inner());
        (g.net, g.chaos, DEVS[dev])
    };
    let gso = [0u16, 0, 536, 1000, 1400][rng.below(5) as usize];
    // The differential run sends single datagrams: the segments of a
    // super-packet the device cannot take whole reached its queue in one
    // run and not (yet) in the other.
    let gso = if chaos { gso } else { 0 };
    let len = if gso != 0 { 1 + rng.below(8000) as usize } else { rng.below(1500) as usize };
    // A port of our choosing: an ephemeral one is random.
    let sport = 6000 + rng.below(1000);
    let sock = match std::net::UdpSocket::bind(format!("10.{net}.{}.1:{sport}", d.idx)) {
        Ok(s) => s,
        Err(e) => return (format!("udp bind to {}", d.suffix), Err(e.raw_os_error().unwrap_or(0)), false),
    };
    if gso != 0 {
        let v = i32::from(gso);
        // SAFETY: An int option of its size.
        unsafe {
            libc::setsockopt(sock.as_raw_fd(), libc::SOL_UDP, 103, (&v as *const i32).cast(), 4);
        }
    }
    let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7)).collect();
    let r = sock.send_to(&data, format!("10.{net}.{}.2:9", d.idx)).map(|n| n as i64).map_err(|e| e.raw_os_error().unwrap_or(0));

    (format!("udp {len} bytes (gso {gso}) out through {}", d.suffix), r, false)
}

/// The tun ioctls, with the values that change state taken from what is
/// valid and what is not.
pub fn ioctl_step(w: &Mutex<World>, snap: &Option<Queue>, rng: &mut Rng) -> (String, Result<i64, i32>, bool) {
    let Some(q) = snap.clone() else { return ("ioctl (no queue)".into(), Err(libc::EBADF), false) };
    let d = DEVS[q.dev];
    let fd = q.file.as_raw_fd();
    let mut int: i32 = 0;
    let mut ifr = IfReq::new("", 0);
    let (desc, r, gap): (String, Result<i64, i32>, bool) = match rng.below(24) {
        0 => ("TUNGETIFF".into(), ioctl_ptr(fd, TUNGETIFF, &mut ifr).map(|_| i64::from(ifr.flags)), false),
        1 | 2 => {
            let f = if q.detached { IFF_ATTACH_QUEUE } else { IFF_DETACH_QUEUE };
            let f = if rng.below(5) == 0 { rng.next() as u16 } else { f };
            // Deliberate difference (Documentation/rust_tun.rst, "A
            // persistent device's filter re-attached"): re-attaching a queue
            // of a device with a filter, tun.c reads the program again from
            // the user address `TUNATTACHFILTER` gave (here freed since) and
            // returns its error, or 0 without attaching the queue; rust_tun
            // attaches it with its copy. The differential run leaves such
            // attaches out (both runs decide alike: `filtered` is the same
            // in both until here).
            if f & IFF_ATTACH_QUEUE != 0 && { let g = w.lock().unwrap_or_else(|e| e.into_inner()); !g.chaos && g.filtered[q.dev] } {
                return ("TUNSETQUEUE attach with a filter (left out)".into(), Ok(0), false);
            }
            if f & IFF_DETACH_QUEUE != 0 {
                // A detach purges the queue's ring.
                drain(&mut w.lock().unwrap_or_else(|e| e.into_inner()), q.dev);
            }
            let mut ifr = IfReq::new("", f);
            let r = ioctl_ptr(fd, TUNSETQUEUE, &mut ifr).map(i64::from);
            if r.is_ok() {
                let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
                for x in g.queues.iter_mut().filter(|x| Arc::ptr_eq(&x.file, &q.file)) {
                    x.detached = f & IFF_DETACH_QUEUE != 0;
                }
                if f & IFF_DETACH_QUEUE != 0 {
                    g.departed[q.dev] = true;
                }
            }
            (format!("TUNSETQUEUE {f:#x}"), r, false)
        }
        3 => {
            let v = rng.below(2);
            (format!("TUNSETPERSIST {v}"), ioctl_val(fd, TUNSETPERSIST, v as libc::c_ulong).map(i64::from), false)
        }
        4 => {
            let v = [0u64, 1000, 2000, u32::MAX as u64][rng.below(4) as usize];
            (format!("TUNSETOWNER {v}"), ioctl_val(fd, TUNSETOWNER, v as libc::c_ulong).map(i64::from), false)
        }
        5 => {
            let v = [0u64, 1000, u32::MAX as u64][rng.below(3) as usize];
            (format!("TUNSETGROUP {v}"), ioctl_val(fd, TUNSETGROUP, v as libc::c_ulong).map(i64::from), false)
        }
        6 => ("TUNGETFEATURES".into(), ioctl_ptr(fd, TUNGETFEATURES, &mut int).map(|_| i64::from(int)), true),
        7 | 8 => {
            // Small send buffers make writes wait (chaos: blocking ones,
            // until a signal) or fail with EAGAIN.
            int = [0, -1, 1, 512, 2048, 4096, 16384, 65536, i32::MAX][rng.below(9) as usize];
            (format!("TUNSETSNDBUF {int}"), ioctl_ptr(fd, TUNSETSNDBUF, &mut int).map(i64::from), false)
        }
        9 => ("TUNGETSNDBUF".into(), ioctl_ptr(fd, TUNGETSNDBUF, &mut int).map(|_| i64::from(int)), false),
        10 | 11 => {
            // TUN_F_CSUM, TSO4, TSO6, TSO_ECN, UFO, USO4, USO6, and on 7.3
            // UDP_TUNNEL_GSO(_CSUM); or any bits.
            let known = if kernel_is_7_3() { 0x1ff } else { 0x7f };
            let v = if rng.below(4) == 0 { rng.next() as u32 } else { (rng.next() as u32) & known };
            (format!("TUNSETOFFLOAD {v:#x}"), ioctl_val(fd, TUNSETOFFLOAD, libc::c_ulong::from(v)).map(i64::from), false)
        }
        12 => ("TUNGETVNETHDRSZ".into(), ioctl_ptr(fd, TUNGETVNETHDRSZ, &mut int).map(|_| i64::from(int)), false),
        13 | 14 => {
            int = [-1, 0, 8, 10, 10, 12, 12, 16, 20, 64, 100][rng.below(11) as usize];
            let r = ioctl_ptr(fd, TUNSETVNETHDRSZ, &mut int).map(i64::from);
            if r.is_ok() {
                w.lock().unwrap_or_else(|e| e.into_inner()).hdrsz[q.dev] = int as usize;
            }
            (format!("TUNSETVNETHDRSZ {int}"), r, false)
        }
        15 | 16 => {
            let (mut f, what) = tx_filter(&w.lock().unwrap_or_else(|e| e.into_inner()), q.dev, rng);
            (what, ioctl_ptr(fd, TUNSETTXFILTER, f.as_mut_ptr()).map(i64::from), false)
        }
        17 | 18 => {
            let (prog, what) = bpf_prog(d.tap, rng);
            let mut fprog = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
            let r = ioctl_ptr(fd, TUNATTACHFILTER, &mut fprog).map(i64::from);
            // Both drivers keep a filter only if every queue took it.
            w.lock().unwrap_or_else(|e| e.into_inner()).filtered[q.dev] = r.is_ok();
            (format!("TUNATTACHFILTER {what}"), r, false)
        }
        19 => {
            int = rng.below(2) as i32;
            (format!("TUNSETCARRIER {int}"), ioctl_ptr(fd, TUNSETCARRIER, &mut int).map(i64::from), false)
        }
        20 => {
            let r = ioctl_val(fd, TUNGETDEVNETNS, 0);
            if let Ok(nsfd) = r {
                // SAFETY: The namespace fd it returned.
                unsafe { libc::close(nsfd) };
            }
            ("TUNGETDEVNETNS".into(), r.map(|_| 0), false)
        }
        21 => {
            // ARPHRD_ETHER, _NONE, _LOOPBACK, _VOID, any: only while down.
            // The differential run keeps the device's own type: another
            // one loses the peer's ARP entry, and the stack's ARP
            // requests then come on its timers, not the fuzzer's steps.
            let own = if d.tap { 1 } else { 65534 };
            let ty = [1u64, 65534, 772, 0xffff, rng.below(1000)][rng.below(5) as usize];
            let ty = if w.lock().unwrap_or_else(|e| e.into_inner()).chaos { ty } else { own };
            (format!("TUNSETLINK {ty}"), ioctl_val(fd, TUNSETLINK, ty as libc::c_ulong).map(i64::from), false)
        }
        22 => match rng.below(8) {
            0 => ("TUNGETVNETLE".into(), ioctl_ptr(fd, TUNGETVNETLE, &mut int).map(|_| i64::from(int)), false),
            1 => {
                int = rng.below(2) as i32;
                (format!("TUNSETVNETLE {int}"), ioctl_ptr(fd, TUNSETVNETLE, &mut int).map(i64::from), false)
            }
            2 => ("TUNSETNOCSUM 0".into(), ioctl_val(fd, TUNSETNOCSUM, 0).map(i64::from), false),
            3 => ("TUNSETDEBUG 0".into(), ioctl_val(fd, TUNSETDEBUG, 0).map(i64::from), false),
            4 => {
                let r = ioctl_val(fd, TUNDETACHFILTER, 0).map(i64::from);
                if r.is_ok() {
                    w.lock().unwrap_or_else(|e| e.into_inner()).filtered[q.dev] = false;
                }
                ("TUNDETACHFILTER".into(), r, false)
            }
            5 => {
                let mut prog = [0u64; 2];
                ("TUNGETFILTER".into(), ioctl_ptr(fd, TUNGETFILTER, prog.as_mut_ptr()).map(i64::from), false)
            }
            6 => {
                int = [12345, -1, 0][rng.below(3) as usize];
                (format!("TUNSETIFINDEX {int}"), ioctl_ptr(fd, TUNSETIFINDEX, &mut int).map(i64::from), false)
            }
            _ => {
                // A program of `ebpf_progs()`, a detach, or a descriptor
                // that is no program (the tun fd itself, -2).
                let progs = ebpf_progs();
                let (what, cmd) = if rng.below(2) == 0 { ("STEERING", TUNSETSTEERINGEBPF) } else { ("FILTER", TUNSETFILTEREBPF) };
                let pick = rng.below(progs.len() as u64 + 3) as usize;
                let (arg, name) = match progs.get(pick) {
                    Some((p, name)) => (p.as_raw_fd(), *name),
                    None => [(-1, "-1"), (fd, "the tun fd"), (-2, "-2")][pick - progs.len()],
                };
                int = arg;
                (format!("TUNSET{what}EBPF {name}"), ioctl_ptr(fd, cmd, &mut int).map(i64::from), false)
            }
        },
        _ => {
            // An unknown command; or a known one with a bad pointer.
            let cmd = [0x54ffu64, TUNGETIFF, TUNSETQUEUE, TUNGETFEATURES, TUNSETTXFILTER, TUNATTACHFILTER][rng.below(6) as usize];
            (format!("ioctl {cmd:#x} bad pointer"), ioctl_ptr(fd, cmd, 8usize as *mut u8).map(i64::from), cmd == TUNGETFEATURES)
        }
    };
    (format!("{desc} on {}", d.suffix), r, gap)
}

/// The socket-filter programs the fuzzer attaches (loaded once, never
/// closed): as steering programs, each picks a queue (the value modulo
/// the queue count); as filters, each drops, cuts or keeps.
fn ebpf_progs() -> &'static [(OwnedFd, &'static str)] {
    static PROGS: std::sync::OnceLock<Vec<(OwnedFd, &'static str)>> = std::sync::OnceLock::new();
    PROGS.get_or_init(|| {
        let progs: [(Vec<crate::bpf::Insn>, &str); 5] = [
            (crate::bpf::ret(0), "ret 0"),
            (crate::bpf::ret(1), "ret 1"),
            (crate::bpf::ret(40), "ret 40"),
            (crate::bpf::ret(u32::MAX), "ret -1"),
            (crate::bpf::byte_plus(14, 0), "byte 14"),
        ];
        // Without bpf(2) (or as a user it refuses) there are none.
        progs.into_iter().filter_map(|(insns, name)| Some((crate::bpf::socket_filter(&insns).ok()?, name))).collect()
    })
}
