//! The filters: the TAP address filter (`TUNSETTXFILTER`, up to its
//! largest), classic BPF (`TUNATTACHFILTER`, `TUNDETACHFILTER`,
//! `TUNGETFILTER`).

use super::*;

/// `struct tun_filter` with `addrs`.
pub fn tun_filter(flags: u16, addrs: &[[u8; 6]]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&flags.to_ne_bytes());
    b.extend_from_slice(&(addrs.len() as u16).to_ne_bytes());
    for a in addrs {
        b.extend_from_slice(a);
    }
    b
}

/// `TUNSETTXFILTER`: a TAP passes frames to the listed addresses (and, past
/// eight, multicast ones by hash, or all with `TUN_FLT_ALLMULTI`) and drops
/// the rest; a unicast address past eight, or none, turns it off.
pub fn t_txfilter(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tf0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-tf0 up")?;
    drain(&t);
    let pk = Packet::open("rt-tf0")?;
    let src = [2, 0xaa, 0, 0, 0, 1];
    let frame = |dst: [u8; 6]| pkt::eth(dst, src, 0x88b5, &[0x5a; 46]);
    // Which of `dsts` the reader gets, in order.
    let passes = |dsts: &[[u8; 6]]| -> Result<Vec<bool>, String> {
        let mut out = Vec::new();
        for d in dsts {
            pk.send(&frame(*d))?;
            let got = drain(&t);
            out.push(got.iter().any(|f| f.get(..6) == Some(&d[..])));
        }
        Ok(out)
    };
    let set = |flags: u16, addrs: &[[u8; 6]]| {
        let mut b = tun_filter(flags, addrs);
        ioctl_ptr(t.fd(), TUNSETTXFILTER, b.as_mut_ptr())
    };
    let a = [2, 0, 0, 0, 0, 1];
    let b = [2, 0, 0, 0, 0, 2];
    let m1 = [0x33, 0x33, 0, 0, 0, 1];
    let m2 = [1, 0, 0x5e, 0, 0, 1];
    check!(passes(&[a, b, m1])? == [true, true, true], "no filter: all pass");
    let drops0 = stat("rt-tf0", "tx_dropped")?;
    check!(set(0, &[a]) == Ok(1), "one exact address: {:?}", set(0, &[a]));
    check!(passes(&[a, b, m1])? == [true, false, false], "exact filter");
    check!(stat("rt-tf0", "tx_dropped")? == drops0 + 2, "filtered frames are drops");
    let mut nine: Vec<[u8; 6]> = (0..8).map(|i| [2, 0, 0, 0, 1, i]).collect();
    nine[0] = a;
    nine.push(m1);
    check!(set(0, &nine) == Ok(8), "eight exact and a multicast: {:?}", set(0, &nine));
    check!(passes(&[a, b, m1, m2])? == [true, false, true, false], "multicast by hash");
    check!(set(TUN_FLT_ALLMULTI, &nine) == Ok(8), "allmulti");
    check!(passes(&[a, b, m1, m2])? == [true, false, true, true], "allmulti passes every group");
    let mut uni = nine.clone();
    uni[8] = b;
    check!(set(0, &uni) == Ok(0), "unicast past eight: {:?}", set(0, &uni));
    check!(passes(&[a, b, m1])? == [true, true, true], "unicast past eight turns the filter off");
    check!(set(0, &[a]) == Ok(1) && set(0, &[]) == Ok(0), "count 0");
    check!(passes(&[b])? == [true], "count 0 turns the filter off");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, 8usize as *mut u8), libc::EFAULT, "TUNSETTXFILTER from a bad pointer");
    // A header claiming more addresses than are mapped.
    let page = map_one_page()?;
    let hdr = tun_filter(0, &[]);
    let at = page + 4096 - 4;
    // SAFETY: The last 4 bytes of our page; the addresses would follow
    // past its end, which is unmapped.
    unsafe {
        std::ptr::copy_nonoverlapping(hdr.as_ptr(), at as *mut u8, 2);
        std::ptr::write_unaligned((at + 2) as *mut u16, 3);
    }
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, at as *mut u8), libc::EFAULT, "TUNSETTXFILTER with addresses past the mapping");
    let u = Tun::create(n.path, "rt-tf1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut f = tun_filter(0, &[a]);
    expect_errno!(ioctl_ptr(u.fd(), TUNSETTXFILTER, f.as_mut_ptr()), libc::EINVAL, "TUNSETTXFILTER on a TUN device");
    Ok(())
}

/// One readable, writable page followed by an unmapped one; its address.
pub fn map_one_page() -> Result<usize, String> {
    // SAFETY: Anonymous mappings; the second page is unmapped right away.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), 8192, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            return Err(format!("mmap: errno {}", errno()));
        }
        libc::munmap((p as usize + 4096) as *mut libc::c_void, 4096);
        Ok(p as usize)
    }
}

pub fn attach_prog(fd: RawFd, prog: &[SockFilter]) -> Result<i32, i32> {
    let mut f = SockFprog { len: prog.len() as u16, filter: prog.as_ptr() };
    ioctl_ptr(fd, TUNATTACHFILTER, &mut f)
}

/// `TUNATTACHFILTER`/`TUNGETFILTER`/`TUNDETACHFILTER`: a classic BPF program
/// the kernel runs on every frame a TAP transmits to the file (0: drop, n:
/// keep n bytes); `TUNGETIFF` drops `IFF_NOFILTER` while one is attached.
pub fn t_attach_filter(n: Node) -> TestResult {
    // With tun_pi: IFF_NOFILTER is IFF_NO_PI's bit.
    let t = Tun::create(n.path, "rt-bf0", IFF_TAP).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-bf0 up")?;
    drain(&t);
    let nofilter = |t: &Tun| t.getiff().map(|(_, f)| f & IFF_NOFILTER != 0);
    check!(nofilter(&t) == Ok(true), "IFF_NOFILTER without a filter");
    let pk = Packet::open("rt-bf0")?;
    let frame = pkt::eth([2, 0, 0, 0, 0, 1], [2, 0xbb, 0, 0, 0, 1], 0x88b5, &[0x5a; 86]);
    attach_prog(t.fd(), &[bpf_ret(0)]).map_err(|e| format!("TUNATTACHFILTER drop-all: {e}"))?;
    check!(nofilter(&t) == Ok(false), "IFF_NOFILTER with a filter");
    let mut got = SockFprog { len: 0, filter: std::ptr::null() };
    ioctl_ptr(t.fd(), TUNGETFILTER, &mut got).map_err(|e| format!("TUNGETFILTER: {e}"))?;
    check!(got.len == 1, "TUNGETFILTER len {}", got.len);
    let drops0 = stat("rt-bf0", "tx_dropped")?;
    pk.send(&frame)?;
    check!(drain(&t).is_empty(), "drop-all filter: the frame reached the reader");
    check!(stat("rt-bf0", "tx_dropped")? == drops0 + 1, "filtered frame not counted as a drop");
    attach_prog(t.fd(), &[bpf_ret(20)]).map_err(|e| format!("TUNATTACHFILTER trim: {e}"))?;
    pk.send(&frame)?;
    let f = drain(&t);
    check!(f.len() == 1 && f[0].len() == 4 + 20, "trim to 20: {:?}", f.iter().map(|f| f.len()).collect::<Vec<_>>());
    ioctl_val(t.fd(), TUNDETACHFILTER, 0).map_err(|e| format!("TUNDETACHFILTER: {e}"))?;
    check!(nofilter(&t) == Ok(true), "IFF_NOFILTER after detach");
    pk.send(&frame)?;
    check!(drain(&t).len() == 1, "no filter: the frame passes");
    // Hostile programs.
    expect_errno!(ioctl_ptr(t.fd(), TUNATTACHFILTER, 8usize as *mut SockFprog), libc::EFAULT, "TUNATTACHFILTER from a bad pointer");
    let mut bad = SockFprog { len: 1, filter: 8usize as *const SockFilter };
    expect_errno!(ioctl_ptr(t.fd(), TUNATTACHFILTER, &mut bad), libc::EFAULT, "program at a bad pointer");
    expect_errno!(attach_prog(t.fd(), &[]), libc::EINVAL, "empty program");
    expect_errno!(attach_prog(t.fd(), &[SockFilter { code: 0xffff, jt: 0, jf: 0, k: 0 }]), libc::EINVAL, "invalid instruction");
    expect_errno!(ioctl_ptr(t.fd(), TUNGETFILTER, 8usize as *mut SockFprog), libc::EFAULT, "TUNGETFILTER to a bad pointer");
    check!(nofilter(&t) == Ok(true), "a failed attach left a filter");
    let u = Tun::create(n.path, "rt-bf1", IFF_TUN).map_err(|e| format!("TUNSETIFF: {e}"))?;
    expect_errno!(attach_prog(u.fd(), &[bpf_ret(0)]), libc::EINVAL, "TUNATTACHFILTER on TUN");
    expect_errno!(ioctl_val(u.fd(), TUNDETACHFILTER, 0), libc::EINVAL, "TUNDETACHFILTER on TUN");
    expect_errno!(ioctl_ptr(u.fd(), TUNGETFILTER, &mut got), libc::EINVAL, "TUNGETFILTER on TUN");

    // A persistent device keeps its filter for the next file: tun.c keeps
    // the `sock_fprog` as given, and the file attaching re-attaches the
    // program read from that user address, in its own address space.
    static DROP_ALL: [SockFilter; 1] = [SockFilter { code: 0x06, jt: 0, jf: 0, k: 0 }];
    let mut prog = SockFprog { len: 1, filter: DROP_ALL.as_ptr() };
    ioctl_ptr(t.fd(), TUNATTACHFILTER, &mut prog).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    ioctl_val(t.fd(), TUNSETPERSIST, 1).map_err(|e| format!("TUNSETPERSIST: {e}"))?;
    drop(t);
    // With IFF_NOFILTER (IFF_NO_PI's bit) the file does without.
    let nf = Tun::create(n.path, "rt-bf0", IFF_TAP | IFF_NOFILTER).map_err(|e| format!("re-attach with IFF_NOFILTER: {e}"))?;
    check!(nf.getiff().is_ok(), "IFF_NOFILTER re-attach: TUNGETIFF {:?}", nf.getiff());
    drop(nf);
    let f = Tun::open_node(n.path).map_err(|e| e.to_string())?;
    let mut ifr = IfReq::new("rt-bf0", IFF_TAP);
    ioctl_ptr(f.as_raw_fd(), TUNSETIFF, &mut ifr).map_err(|e| format!("re-attach: {e}"))?;
    let mut out = IfReq::new("", 0);
    let r = ioctl_ptr(f.as_raw_fd(), TUNGETIFF, &mut out);
    let keeper = if n.module == "tun" {
        // tun.c 6.12's tun_attach() returns right after re-attaching the
        // filter successfully (`if (!err) goto out`): TUNSETIFF succeeds,
        // the file is not attached. Deliberate difference: rust_tun
        // attaches it, with the filter.
        expect_errno!(r, libc::EBADFD, "tun.c: a re-attached filter leaves the file unattached");
        Tun::create(n.path, "rt-bf0", IFF_TAP | IFF_NOFILTER).map_err(|e| format!("attach: {e}"))?
    } else {
        check!(r.is_ok() && out.flags & IFF_NOFILTER == 0, "re-attach with the device's filter: {r:?} flags {:#x}", out.flags);
        Tun { file: f, name: "rt-bf0".into() }
    };
    // The program's memory gone by then: the re-attach fails, and the file
    // attaches without a filter (tun.c ignores the error).
    let page = map_one_page()?;
    // SAFETY: Our page; one instruction fits.
    unsafe { std::ptr::write(page as *mut SockFilter, bpf_ret(0)) };
    let mut prog = SockFprog { len: 1, filter: page as *const SockFilter };
    ioctl_ptr(keeper.fd(), TUNATTACHFILTER, &mut prog).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    drop(keeper);
    // SAFETY: Unmapping our page.
    unsafe { libc::munmap(page as *mut libc::c_void, 4096) };
    let g = Tun::create(n.path, "rt-bf0", IFF_TAP).map_err(|e| format!("re-attach, program unmapped: {e}"))?;
    let got = g.getiff();
    check!(got.as_ref().is_ok_and(|(_, fl)| fl & IFF_NOFILTER != 0), "re-attach with the program unmapped: {got:?}");
    ioctl_val(g.fd(), TUNSETPERSIST, 0).map_err(|e| format!("TUNSETPERSIST 0: {e}"))?;
    Ok(())
}

/// `TUNSETTXFILTER` with the most addresses a `struct tun_filter` can
/// name (65535: 384 KiB, which tun.c copies with `memdup_user()`): eight
/// exact, the rest multicast by hash; the same filter one byte short of
/// its mapping is `EFAULT` and leaves the filter as it was. On the debug
/// kernel, rust_tun must take the largest filter with no page of order 1
/// or more to be had: it reads the addresses in bounded pieces and
/// allocates nothing (a deliberate difference: tun.c's copy fails there
/// with `ENOMEM`).
pub fn t_txfilter_largest(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-tl0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    sh("ip link set rt-tl0 up")?;
    drain(&t);
    let a = [2, 0, 0, 0, 0, 1];
    let b = [2, 0, 0, 0, 0, 2];
    let mut addrs: Vec<[u8; 6]> = (0..8).map(|i| [2, 0, 0, 0, 1, i]).collect();
    addrs[0] = a;
    addrs.extend((0..65535u32 - 8).map(|i| [1, 0, 0x5e, 0x7f & (i >> 16) as u8, (i >> 8) as u8, i as u8]));
    let mut f = tun_filter(0, &addrs);
    check!(f.len() == 4 + 6 * 65535, "filter of {} bytes", f.len());
    check!(ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr()) == Ok(8), "65535 addresses: {:?}", ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr()));
    let pk = Packet::open("rt-tl0")?;
    let src = [2, 0xaa, 0, 0, 0, 1];
    let passes = |d: [u8; 6]| -> Result<bool, String> {
        pk.send(&pkt::eth(d, src, 0x88b5, &[0x5a; 46]))?;
        Ok(drain(&t).iter().any(|f| f.get(..6) == Some(&d[..])))
    };
    check!(passes(a)? && !passes(b)?, "the largest filter does not filter");
    check!(passes([1, 0, 0x5e, 0, 0x12, 0x34])?, "a listed multicast address was dropped");

    // The same, one byte short of its mapping.
    let len = f.len();
    let pages = len.div_ceil(4096) + 1;
    // SAFETY: Anonymous mapping; its last page is unmapped right away.
    let map = unsafe {
        libc::mmap(std::ptr::null_mut(), pages * 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    };
    check!(map != libc::MAP_FAILED, "mmap: errno {}", errno());
    let end = map as usize + (pages - 1) * 4096;
    // SAFETY: Ours; the last page goes, the rest stays mapped.
    unsafe { libc::munmap(end as *mut libc::c_void, 4096) };
    let at = end - (len - 1);
    // SAFETY: `len - 1` bytes before the unmapped page, all mapped.
    unsafe { std::ptr::copy_nonoverlapping(f.as_ptr(), at as *mut u8, len - 1) };
    let mut one = tun_filter(0, &[b]);
    check!(ioctl_ptr(t.fd(), TUNSETTXFILTER, one.as_mut_ptr()) == Ok(1), "filter of b");
    expect_errno!(ioctl_ptr(t.fd(), TUNSETTXFILTER, at as *mut u8), libc::EFAULT, "65535 addresses, the last one byte short");
    check!(passes(b)? && !passes(a)?, "a failed TUNSETTXFILTER changed the filter");
    // SAFETY: The rest of our mapping.
    unsafe { libc::munmap(map, (pages - 1) * 4096) };

    if n.module == "rust_tun" && std::path::Path::new(crate::hardening::FAIL_PAGE_ALLOC).exists() {
        let r = {
            let _fail = crate::hardening::FailHighOrder::new(1)?;
            ioctl_ptr(t.fd(), TUNSETTXFILTER, f.as_mut_ptr())
        };
        check!(r == Ok(8), "65535 addresses without pages of order >= 1: {r:?}");
        check!(passes(a)? && !passes(b)?, "the filter set without high-order pages does not filter");
    }
    Ok(())
}

/// `TUNGETFILTER` gives back the `struct sock_fprog` that `TUNATTACHFILTER`
/// was given, all 16 bytes of it (tun.c copies the struct in and out
/// whole, padding included), and zeroes before any was attached.
pub fn t_getfilter_bytes(n: Node) -> TestResult {
    let t = Tun::create(n.path, "rt-gf0", IFF_TAP | IFF_NO_PI).map_err(|e| format!("TUNSETIFF: {e}"))?;
    let mut got = [0x5au8; 16];
    ioctl_ptr(t.fd(), TUNGETFILTER, got.as_mut_ptr()).map_err(|e| format!("TUNGETFILTER before: {e}"))?;
    check!(got == [0; 16], "TUNGETFILTER before any filter: {got:02x?}");
    static PROG: [SockFilter; 1] = [SockFilter { code: 0x06, jt: 0, jf: 0, k: 0xffff }];
    let mut given = [0xa5u8; 16];
    given[..2].copy_from_slice(&1u16.to_ne_bytes());
    given[8..].copy_from_slice(&(PROG.as_ptr() as usize).to_ne_bytes());
    ioctl_ptr(t.fd(), TUNATTACHFILTER, given.as_mut_ptr()).map_err(|e| format!("TUNATTACHFILTER: {e}"))?;
    let mut got = [0x5au8; 16];
    ioctl_ptr(t.fd(), TUNGETFILTER, got.as_mut_ptr()).map_err(|e| format!("TUNGETFILTER: {e}"))?;
    check!(got == given, "TUNGETFILTER gave {got:02x?}, TUNATTACHFILTER was given {given:02x?}");
    Ok(())
}
