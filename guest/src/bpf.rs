//! eBPF programs for the tests, as raw instructions loaded with bpf(2)
//! (no libbpf, no compiler: the guest has neither), and what the kernel
//! says of a loaded program (its id, whether it still exists).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_PROG_LOAD: i32 = 5;
const BPF_MAP_CREATE: i32 = 0;
const BPF_PROG_GET_FD_BY_ID: i32 = 13;
const BPF_OBJ_GET_INFO_BY_FD: i32 = 15;
const BPF_OBJ_PIN: i32 = 6;

/// `enum bpf_prog_type`.
pub const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
pub const BPF_PROG_TYPE_XDP: u32 = 6;

/// `struct bpf_insn`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

/// `r0 = imm` (`BPF_MOV64_IMM`).
pub const fn mov_r0(imm: i32) -> Insn {
    Insn { code: 0xb7, regs: 0, off: 0, imm }
}

/// `r6 = r1`: the context where `LD_ABS` wants it (`BPF_MOV64_REG`).
pub const fn ctx_to_r6() -> Insn {
    Insn { code: 0xbf, regs: 6 | (1 << 4), off: 0, imm: 0 }
}

/// `r0 = *(u8 *)(skb->data + off)` (`BPF_LD_ABS(BPF_B, off)`; the
/// program ends, returning 0, past the packet's end).
pub const fn ld_byte(off: i32) -> Insn {
    Insn { code: 0x30, regs: 0, off: 0, imm: off }
}

/// `r0 += imm` (`BPF_ALU64_IMM(BPF_ADD)`).
pub const fn add_r0(imm: i32) -> Insn {
    Insn { code: 0x07, regs: 0, off: 0, imm }
}

/// `rDST = imm` (`BPF_MOV64_IMM`).
pub const fn mov_imm(dst: u8, imm: i32) -> Insn {
    Insn { code: 0xb7, regs: dst & 0xf, off: 0, imm }
}

/// Any instruction: opcode, destination and source registers, offset,
/// immediate.
pub const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: (dst & 0xf) | (src << 4), off, imm }
}

/// `call HELPER` (`BPF_EMIT_CALL`).
pub const fn call(helper: i32) -> Insn {
    Insn { code: 0x85, regs: 0, off: 0, imm: helper }
}

/// `bpf_redirect()`'s helper number (`BPF_FUNC_redirect`).
pub const BPF_FUNC_REDIRECT: i32 = 23;

/// `return bpf_redirect(ifindex, 0)`: an XDP program sending every frame
/// to device `ifindex` (`XDP_REDIRECT`, or `XDP_ABORTED` on bad flags).
pub fn redirect(ifindex: i32) -> Vec<Insn> {
    vec![mov_imm(1, ifindex), mov_imm(2, 0), call(BPF_FUNC_REDIRECT), exit()]
}

/// `bpf_xdp_adjust_head()`, `bpf_xdp_adjust_tail()` (`BPF_FUNC_*`).
pub const BPF_FUNC_XDP_ADJUST_HEAD: i32 = 44;
pub const BPF_FUNC_XDP_ADJUST_TAIL: i32 = 65;

/// `helper(ctx, delta); return act`: an XDP program moving the frame's
/// start (`BPF_FUNC_XDP_ADJUST_HEAD`, a positive delta drops bytes) or
/// end (`BPF_FUNC_XDP_ADJUST_TAIL`, a negative delta cuts).
pub fn xdp_adjust(helper: i32, delta: i32, act: u32) -> Vec<Insn> {
    vec![mov_imm(2, delta), call(helper), mov_r0(act as i32), exit()]
}

/// An XDP program returning the frame's byte `off` as its action (the
/// frame picks), `XDP_DROP` if the frame is shorter: direct packet
/// access from `xdp_md->data`, bounded by `data_end`.
pub fn xdp_byte_action(off: i16) -> Vec<Insn> {
    vec![
        // r2 = ctx->data; r3 = ctx->data_end
        insn(0x61, 2, 1, 0, 0),
        insn(0x61, 3, 1, 4, 0),
        // r4 = r2 + off + 1; if r4 > r3 goto drop
        insn(0xbf, 4, 2, 0, 0),
        insn(0x07, 4, 0, 0, off as i32 + 1),
        insn(0x2d, 4, 3, 2, 0),
        // r0 = *(u8 *)(r2 + off); exit
        insn(0x71, 0, 2, off, 0),
        exit(),
        // drop: r0 = XDP_DROP; exit
        mov_r0(1),
        exit(),
    ]
}

/// `exit` (`BPF_EXIT_INSN`).
pub const fn exit() -> Insn {
    Insn { code: 0x95, regs: 0, off: 0, imm: 0 }
}

/// `return k`.
pub fn ret(k: u32) -> Vec<Insn> {
    vec![mov_r0(k as i32), exit()]
}

/// `return skb->data[off] + add`: a program whose value the packet picks.
pub fn byte_plus(off: i32, add: i32) -> Vec<Insn> {
    vec![ctx_to_r6(), ld_byte(off), add_r0(add), exit()]
}

fn bpf(cmd: i32, attr: &mut [u64; 16]) -> Result<i32, i32> {
    // SAFETY: A zero-padded `union bpf_attr` of 128 bytes, ours.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), std::mem::size_of_val(attr)) };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(r as i32)
    }
}

/// `BPF_PROG_LOAD` of `insns` as a program of `prog_type`; its fd.
pub fn load(prog_type: u32, insns: &[Insn]) -> Result<OwnedFd, i32> {
    static LICENSE: &[u8] = b"GPL\0";
    let mut attr = [0u64; 16];
    attr[0] = u64::from(prog_type) | ((insns.len() as u64) << 32);
    attr[1] = insns.as_ptr() as u64;
    attr[2] = LICENSE.as_ptr() as u64;
    let fd = bpf(BPF_PROG_LOAD, &mut attr)?;
    // SAFETY: A new fd of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A socket-filter program (what tun's two ioctls take).
pub fn socket_filter(insns: &[Insn]) -> Result<OwnedFd, String> {
    load(BPF_PROG_TYPE_SOCKET_FILTER, insns).map_err(|e| format!("BPF_PROG_LOAD socket filter: errno {e}"))
}

/// An array map of one 4-byte value: a bpf fd that is not a program.
pub fn array_map() -> Result<OwnedFd, String> {
    let mut attr = [0u64; 16];
    // map_type BPF_MAP_TYPE_ARRAY (2), key_size 4, value_size 4, max_entries 1.
    attr[0] = 2 | (4 << 32);
    attr[1] = 4 | (1 << 32);
    let fd = bpf(BPF_MAP_CREATE, &mut attr).map_err(|e| format!("BPF_MAP_CREATE: errno {e}"))?;
    // SAFETY: A new fd of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An XDP program (what `IFLA_XDP_FD` takes).
pub fn xdp(insns: &[Insn]) -> Result<OwnedFd, String> {
    load(BPF_PROG_TYPE_XDP, insns).map_err(|e| format!("BPF_PROG_LOAD xdp: errno {e}"))
}

/// `BPF_OBJ_PIN` of the program or map `fd` at `path` (on a bpf file
/// system): what `ip link set DEV xdp pinned PATH` opens.
pub fn obj_pin(fd: RawFd, path: &str) -> Result<(), i32> {
    let path = std::ffi::CString::new(path).map_err(|_| libc::EINVAL)?;
    let mut attr = [0u64; 16];
    attr[0] = path.as_ptr() as u64;
    attr[1] = u64::from(fd as u32);
    bpf(BPF_OBJ_PIN, &mut attr).map(|_| ())
}

/// The id of the program behind `fd` (`bpf_prog_info.id`).
pub fn prog_id(fd: RawFd) -> Result<u32, String> {
    let mut info = [0u32; 2];
    let mut attr = [0u64; 16];
    attr[0] = fd as u32 as u64 | ((std::mem::size_of_val(&info) as u64) << 32);
    attr[1] = info.as_mut_ptr() as u64;
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr).map_err(|e| format!("BPF_OBJ_GET_INFO_BY_FD: errno {e}"))?;
    Ok(info[1])
}

/// Whether a program of this id is still loaded: someone (a device)
/// holds a reference on it.
pub fn prog_exists(id: u32) -> bool {
    let mut attr = [0u64; 16];
    attr[0] = u64::from(id);
    match bpf(BPF_PROG_GET_FD_BY_ID, &mut attr) {
        // SAFETY: A new fd of ours, closed at once.
        Ok(fd) => drop(unsafe { OwnedFd::from_raw_fd(fd) }),
        Err(_) => return false,
    }
    true
}

/// Waits up to 2 s for the program `id` to be freed (programs are put
/// after an RCU grace period and freed from a work item).
pub fn wait_prog_freed(id: u32) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(2) {
        if !prog_exists(id) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// The raw fd of an `OwnedFd`, for an ioctl argument.
pub fn raw(fd: &OwnedFd) -> i32 {
    fd.as_raw_fd()
}
