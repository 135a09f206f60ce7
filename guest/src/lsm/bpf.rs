//! Just enough of bpf(2) to make an LSM hook refuse, without libbpf: the
//! BTF id of a hook's `bpf_lsm_*` function read from the kernel's own BTF
//! (`/sys/kernel/btf/vmlinux`), a two-instruction `BPF_PROG_TYPE_LSM`
//! program (`r0 = -errno; exit`) loaded for it (`BPF_LSM_MAC`), and a BPF
//! link that keeps it attached until closed. What a BPF LSM policy such as
//! systemd's `RestrictFileSystems=` or a container runtime's does with
//! libbpf, reduced to the calls the tests need.

use std::os::fd::{FromRawFd, OwnedFd};

/// Where the kernel exposes its own BTF (`CONFIG_DEBUG_INFO_BTF`).
pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// The active LSMs, in order (securityfs).
const LSM_LIST: &str = "/sys/kernel/security/lsm";

const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_PROG_TYPE_LSM: u32 = 29;
const BPF_LSM_MAC: u32 = 27;

const BTF_MAGIC: u16 = 0xeb9f;
/// `BTF_KIND_FUNC`: a function, named, its `type` a `FUNC_PROTO`.
pub const BTF_KIND_FUNC: u32 = 12;

/// `struct bpf_insn`.
#[repr(C)]
#[derive(Clone, Copy)]
struct BpfInsn {
    code: u8,
    /// `dst_reg` in the low nibble, `src_reg` in the high one.
    regs: u8,
    off: i16,
    imm: i32,
}

/// `BPF_ALU64 | BPF_MOV | BPF_K`: `dst = imm`.
const MOV64_IMM: u8 = 0x07 | 0xb0;
/// `BPF_JMP | BPF_EXIT`.
const EXIT: u8 = 0x05 | 0x90;

/// The prefix of `union bpf_attr` that `BPF_PROG_LOAD` reads, up to
/// `core_relo_cnt` so that no padding byte reaches the kernel (which
/// requires what it reads beyond the fields it is given to be zero).
#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
    prog_btf_fd: u32,
    func_info_rec_size: u32,
    func_info: u64,
    func_info_cnt: u32,
    line_info_rec_size: u32,
    line_info: u64,
    line_info_cnt: u32,
    attach_btf_id: u32,
    /// 0: `attach_btf_id` is vmlinux's.
    attach_btf_obj_fd: u32,
    core_relo_cnt: u32,
}

/// The prefix of `union bpf_attr` that `BPF_LINK_CREATE` reads for a
/// tracing or LSM program (no target: the program's own `attach_btf_id`).
#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    target_btf_id: u32,
    pad: u32,
}

/// bpf(2): the new fd, or the errno.
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> Result<OwnedFd, i32> {
    // SAFETY: `attr` is a valid, initialised `bpf_attr` prefix of the
    // size given, which the kernel reads (and may write) and keeps no
    // pointer to; the pointers inside it point to live buffers.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
    }
    // SAFETY: On success these commands return a new fd, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// What follows a `struct btf_type` of kind `kind`: (bytes once, bytes per
/// `vlen` element), for the kinds `include/uapi/linux/btf.h` defines.
fn btf_kind_size(kind: u32) -> Option<(usize, usize)> {
    Some(match kind {
        // INT, VAR, DECL_TAG: one u32.
        1 | 14 | 17 => (4, 0),
        // PTR, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, FLOAT, TYPE_TAG.
        2 | 7..=12 | 16 | 18 => (0, 0),
        // ARRAY: struct btf_array.
        3 => (12, 0),
        // STRUCT, UNION: struct btf_member; DATASEC: btf_var_secinfo;
        // ENUM64: btf_enum64.
        4 | 5 | 15 | 19 => (0, 12),
        // ENUM: btf_enum; FUNC_PROTO: btf_param.
        6 | 13 => (0, 8),
        _ => return None,
    })
}

/// The id of the type of kind `kind` named `name` in the BTF blob `btf`
/// (little-endian, as x86's kernel writes it), `None` if it has none.
///
/// Walks the type section, ids from 1 in order; a kind newer than this
/// parser is sized from the blob's layout section (`struct btf_layout`,
/// which kernels that have one write for every kind they know).
pub fn btf_find(btf: &[u8], name: &str, kind: u32) -> Result<Option<u32>, String> {
    let bad = |what: &str| format!("BTF: {what}");
    if u16_at(btf, 0) != Some(BTF_MAGIC) {
        return Err(bad("no BTF magic (or not little-endian)"));
    }
    let h = |i: usize| u32_at(btf, 4 + 4 * i).map(|v| v as usize).ok_or_else(|| bad("short header"));
    let hdr_len = h(0)?;
    let section = |off: usize, len: usize, what: &str| {
        btf.get(hdr_len + off..hdr_len + off + len).ok_or_else(|| bad(&format!("{what} section out of bounds")))
    };
    let types = section(h(1)?, h(2)?, "type")?;
    let strings = section(h(3)?, h(4)?, "string")?;
    // btf_header's layout_off/layout_len, present when hdr_len covers them.
    let layout = if hdr_len >= 32 { section(h(5)?, h(6)?, "layout")? } else { &[] };
    let layout_size = |kind: u32| {
        let at = kind as usize * 4;
        layout.get(at..at + 2).map(|l| (l[0] as usize, l[1] as usize))
    };
    let mut pos = 0;
    let mut id = 1u32;
    while pos < types.len() {
        let (name_off, info) =
            u32_at(types, pos).zip(u32_at(types, pos + 4)).ok_or_else(|| bad(&format!("type {id} truncated")))?;
        let k = (info >> 24) & 0x7f;
        let vlen = (info & 0xff_ffff) as usize;
        let (once, each) = btf_kind_size(k)
            .or_else(|| layout_size(k))
            .ok_or_else(|| bad(&format!("type {id} of unknown kind {k}")))?;
        if k == kind {
            let n = strings.get(name_off as usize..).and_then(|s| s.split(|&c| c == 0).next());
            if n == Some(name.as_bytes()) {
                return Ok(Some(id));
            }
        }
        pos += 12 + once + vlen * each;
        id += 1;
    }
    Ok(None)
}

/// The kernel's BTF, read once.
pub struct VmlinuxBtf(Vec<u8>);

impl VmlinuxBtf {
    pub fn read() -> Result<Self, String> {
        std::fs::read(VMLINUX_BTF).map(VmlinuxBtf).map_err(|e| format!("{VMLINUX_BTF}: {e}"))
    }

    /// The BTF id of the FUNC `bpf_lsm_HOOK`, the function a BPF LSM
    /// program for `HOOK` attaches to (`CONFIG_BPF_LSM`: one per hook).
    pub fn lsm_hook(&self, hook: &str) -> Result<Option<u32>, String> {
        btf_find(&self.0, &format!("bpf_lsm_{hook}"), BTF_KIND_FUNC)
    }
}

/// Why BPF LSM programs cannot refuse `hook` on the running kernel, if
/// they cannot: no BTF, no BPF LSM built, or not among the active LSMs
/// (`CONFIG_LSM` or the `lsm=` boot parameter lacks `bpf`: programs then
/// load and attach, and are never called).
pub fn unavailable(btf: Option<&VmlinuxBtf>, hook: &str) -> Result<Option<String>, String> {
    let Some(btf) = btf else {
        return Ok(Some(format!("no {VMLINUX_BTF} (CONFIG_DEBUG_INFO_BTF=n): no BPF LSM programs")));
    };
    if btf.lsm_hook(hook)?.is_none() {
        return Ok(Some(format!("no bpf_lsm_{hook} in the kernel's BTF (CONFIG_BPF_LSM=n)")));
    }
    if !std::path::Path::new(LSM_LIST).exists() {
        // securityfs, not mounted by the guest's init.
        let _ = std::process::Command::new("mount")
            .args(["-t", "securityfs", "securityfs", "/sys/kernel/security"])
            .status();
    }
    let lsms = std::fs::read_to_string(LSM_LIST).map_err(|e| format!("{LSM_LIST}: {e}"))?;
    if !lsms.trim().split(',').any(|l| l == "bpf") {
        return Ok(Some(format!(
            "the BPF LSM is built but not active (active LSMs: {}; boot with lsm=...,bpf)",
            lsms.trim()
        )));
    }
    Ok(None)
}

/// A BPF LSM program attached to `bpf_lsm_HOOK` that makes every call of
/// the hook return `-errno`, for every process: the LSM's verdict, as a
/// policy that refuses would give it. Detached when dropped (its link and
/// program fds closed), or when the process exits.
pub struct Refusal {
    _link: OwnedFd,
    _prog: OwnedFd,
}

impl Refusal {
    /// Loads and attaches the program (root: `CAP_BPF`, `CAP_SYS_ADMIN`).
    pub fn attach(btf: &VmlinuxBtf, hook: &str, errno: i32) -> Result<Self, String> {
        let id = btf.lsm_hook(hook)?.ok_or_else(|| format!("no bpf_lsm_{hook} in {VMLINUX_BTF}"))?;
        let insns = [
            BpfInsn { code: MOV64_IMM, regs: 0, off: 0, imm: -errno },
            BpfInsn { code: EXIT, regs: 0, off: 0, imm: 0 },
        ];
        let license = c"GPL";
        let mut log = vec![0u8; 1 << 16];
        let mut name = [0u8; 16];
        name[..8].copy_from_slice(b"rtun_lsm");
        let mut attr = ProgLoadAttr {
            prog_type: BPF_PROG_TYPE_LSM,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            log_level: 1,
            log_size: log.len() as u32,
            log_buf: log.as_mut_ptr() as u64,
            prog_name: name,
            expected_attach_type: BPF_LSM_MAC,
            attach_btf_id: id,
            ..Default::default()
        };
        let prog = bpf(BPF_PROG_LOAD, &mut attr).map_err(|e| {
            let text = String::from_utf8_lossy(log.split(|&c| c == 0).next().unwrap_or(&[])).trim().to_string();
            format!("BPF_PROG_LOAD for bpf_lsm_{hook} (BTF id {id}): errno {e}; verifier: {text}")
        })?;
        let mut attr = LinkCreateAttr {
            prog_fd: std::os::fd::AsRawFd::as_raw_fd(&prog) as u32,
            attach_type: BPF_LSM_MAC,
            ..Default::default()
        };
        let link =
            bpf(BPF_LINK_CREATE, &mut attr).map_err(|e| format!("BPF_LINK_CREATE for bpf_lsm_{hook}: errno {e}"))?;
        Ok(Refusal { _link: link, _prog: prog })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob: header (`hdr_len` 24 or 32, the latter with a layout
    /// section for `layout`'s kinds), `types` as (name, kind, vlen, extra
    /// bytes), their names in the string section.
    fn blob(types: &[(&str, u32, u32, usize)], layout: Option<&[(u32, u8, u8)]>) -> Vec<u8> {
        let mut strs = vec![0u8];
        let mut ty = Vec::new();
        for &(name, kind, vlen, extra) in types {
            let off = strs.len() as u32;
            strs.extend_from_slice(name.as_bytes());
            strs.push(0);
            ty.extend_from_slice(&off.to_le_bytes());
            ty.extend_from_slice(&((kind << 24) | vlen).to_le_bytes());
            ty.extend_from_slice(&0u32.to_le_bytes());
            ty.extend(std::iter::repeat(0xffu8).take(extra));
        }
        let mut lay = Vec::new();
        if let Some(l) = layout {
            let max = l.iter().map(|e| e.0).max().unwrap_or(0);
            lay = vec![0u8; (max as usize + 1) * 4];
            for &(k, once, each) in l {
                lay[k as usize * 4] = once;
                lay[k as usize * 4 + 1] = each;
            }
        }
        let hdr_len: u32 = if layout.is_some() { 32 } else { 24 };
        let mut b = Vec::new();
        b.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        let (tl, sl) = (ty.len() as u32, strs.len() as u32);
        let mut fields = vec![hdr_len, 0, tl, tl, sl];
        if layout.is_some() {
            fields.extend([tl + sl, lay.len() as u32]);
        }
        for f in fields {
            b.extend_from_slice(&f.to_le_bytes());
        }
        b.extend(ty);
        b.extend(strs);
        b.extend(lay);
        b
    }

    #[test]
    fn finds_func_past_every_kind() {
        let b = blob(
            &[
                ("int", 1, 0, 4),
                ("", 2, 0, 0),
                ("", 3, 0, 12),
                ("s", 4, 3, 36),
                ("e", 6, 2, 16),
                ("bpf_lsm_tun_dev_create", 13, 0, 0),
                ("", 13, 2, 16),
                ("v", 14, 0, 4),
                (".data", 15, 1, 12),
                ("t", 17, 0, 4),
                ("e64", 19, 1, 12),
                ("bpf_lsm_tun_dev_create", 12, 0, 0),
            ],
            None,
        );
        // The FUNC_PROTO of the same name (id 6) is not it.
        assert_eq!(btf_find(&b, "bpf_lsm_tun_dev_create", BTF_KIND_FUNC), Ok(Some(12)));
        assert_eq!(btf_find(&b, "bpf_lsm_tun_dev_open", BTF_KIND_FUNC), Ok(None));
        assert_eq!(btf_find(&b, "bpf_lsm_tun_dev", BTF_KIND_FUNC), Ok(None));
    }

    #[test]
    fn unknown_kind_sized_by_layout() {
        let types = [("new", 20, 2, 4 + 2 * 8), ("f", 12, 0, 0)];
        assert!(btf_find(&blob(&types, None), "f", BTF_KIND_FUNC).is_err());
        let b = blob(&types, Some(&[(12, 0, 0), (20, 4, 8)]));
        assert_eq!(btf_find(&b, "f", BTF_KIND_FUNC), Ok(Some(2)));
    }

    #[test]
    fn rejects_bad_blobs() {
        let b = blob(&[("f", 12, 0, 0)], None);
        assert!(btf_find(&b[..10], "f", BTF_KIND_FUNC).is_err());
        assert!(btf_find(&b[..b.len() - 1], "f", BTF_KIND_FUNC).is_err());
        let mut swapped = b.clone();
        swapped[..2].copy_from_slice(&BTF_MAGIC.to_be_bytes());
        assert!(btf_find(&swapped, "f", BTF_KIND_FUNC).is_err());
    }

    /// The host's own BTF, where it has one: a real blob parses to its
    /// end, and has the hooks if its kernel has the BPF LSM.
    #[test]
    fn host_vmlinux_parses() {
        let Ok(b) = std::fs::read(VMLINUX_BTF) else { return };
        assert_eq!(btf_find(&b, "no such function", BTF_KIND_FUNC), Ok(None));
        assert!(btf_find(&b, "schedule", BTF_KIND_FUNC).is_ok_and(|id| id.is_some()));
    }
}
