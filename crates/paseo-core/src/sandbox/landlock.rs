//! Landlock, for machines where bubblewrap cannot make a box (user namespaces off): the
//! kernel lets the process write only its own trees and read only outside the hidden paths.
//!
//! Landlock only grants (a rule allows a tree and everything beneath it), so "read everything
//! but the hidden paths" is the set of trees beside them: every folder on the way down to a
//! hidden path is split into its entries, and each entry that is not hidden (and holds nothing
//! hidden) is allowed whole. The folders on that way may be listed (names only), not read
//! into. Entries made after the start are not readable: the price of the fallback.
//!
//! The ruleset is built before the fork, with the `landlock` crate (opening paths allocates);
//! the child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self` (through the
//! crate's `restrict_self`, see [`Rules::prepare`]), which are safe between fork and exec.
//! Other processes are out of reach too: Landlock refuses ptrace (and so `/proc/<pid>/environ`)
//! of any process outside the sandbox.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    make_bitflags, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
    ABI,
};

use super::Plan;

/// The Landlock ABI this kernel speaks.
///
/// The crate keeps the running ABI to itself on purpose (its rules degrade on their own), but
/// the engine is chosen by it and the status bar says what each ABI leaves open, so this one
/// question stays a raw syscall.
pub(super) fn probe() -> Result<u32, String> {
    const CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented way to ask for the ABI version: no attribute, size 0.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if abi < 1 {
        return Err(format!(
            "Landlock is not available in this kernel ({})",
            io::Error::last_os_error()
        ));
    }
    Ok(abi as u32)
}

/// The file system rights handled at `abi`: named one by one rather than the crate's
/// `from_all`, so a newer crate or kernel adds nothing the status bar does not know of.
fn handled(abi: u32) -> BitFlags<AccessFs> {
    let mut h = AccessFs::from_all(ABI::V1);
    if abi >= 2 {
        h |= AccessFs::Refer;
    }
    if abi >= 3 {
        h |= AccessFs::Truncate;
    }
    if abi >= 5 {
        h |= AccessFs::IoctlDev;
    }
    h
}

/// What one boxed process is allowed, by path, and what it may not reach at all.
#[derive(Clone, Debug)]
pub struct Rules {
    abi: u32,
    /// The file system is governed (the Landlock engine); else only the scopes are (bubblewrap
    /// boxes the files, and must still mount).
    fs: bool,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    list: Vec<PathBuf>,
    /// No TCP (`sandbox.network: false` under Landlock; ABI 4).
    deny_tcp: bool,
}

impl Rules {
    pub(super) fn for_plan(plan: &Plan) -> Rules {
        let abi = match plan.engine {
            super::Engine::Landlock(abi) => abi,
            super::Engine::Bwrap(_) => 1,
        };
        // Only what exists is split around: a path that is not there has nothing to read, and
        // a folder on the way to it would only cost a listing and a rule per entry. (One made
        // later, inside a folder allowed whole, is not hidden: bubblewrap's box has the same
        // limit, docs/security.md.)
        let hidden: Vec<PathBuf> = plan
            .hidden()
            .into_iter()
            .filter(|h| std::fs::symlink_metadata(h).is_ok())
            .collect();
        let mut read = Vec::new();
        let mut list = Vec::new();
        beside(Path::new("/"), &hidden, &mut read, &mut list);
        // A write tree that holds a hidden path (a cwd of $HOME) is split around it like the
        // read tree: Landlock cannot take a subtree back from a rule.
        let mut write = Vec::new();
        for w in &plan.writes {
            let inside: Vec<PathBuf> = hidden
                .iter()
                .chain(&plan.protected)
                .filter(|h| h.starts_with(w) && *h != w)
                .cloned()
                .collect();
            beside(w, &inside, &mut write, &mut list);
        }
        read.extend(plan.protected.iter().cloned());
        // Terminals, /dev/null and friends are written by nearly every program.
        write.push(PathBuf::from("/dev"));
        read.extend(plan.reads.iter().cloned());
        Rules {
            abi,
            fs: true,
            read,
            write,
            list,
            deny_tcp: !plan.settings.network,
        }
    }

    /// What a bubblewrap box adds on a kernel that scopes (ABI 6): no abstract Unix socket and
    /// no signal outside the box. Applied before bwrap runs, so it governs nothing of the file
    /// system (bwrap must mount); `None` on an older kernel, where the status bar says so.
    pub(super) fn scope_only() -> Option<Rules> {
        let abi = super::landlock_abi().filter(|abi| *abi >= 6)?;
        Some(Rules {
            abi,
            fs: false,
            read: Vec::new(),
            write: Vec::new(),
            list: Vec::new(),
            deny_tcp: false,
        })
    }

    /// Opens every path and builds the ruleset now (in the parent); the returned closure is
    /// what the child runs between fork and exec.
    pub(super) fn prepare(
        &self,
    ) -> io::Result<impl FnMut() -> io::Result<()> + Send + Sync + 'static> {
        let all = if self.fs {
            handled(self.abi)
        } else {
            BitFlags::EMPTY
        };
        // Every right asked for is one the probed ABI has (the one the status bar reports), so
        // the crate's best effort would drop nothing; a hard requirement makes any disagreement
        // between the crate and that probe fail the spawn instead of boxing with less.
        let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
        if !all.is_empty() {
            ruleset = ruleset.handle_access(all).map_err(io_error)?;
        }
        // TCP handled with no port allowed: no TCP connect or bind at all.
        if self.deny_tcp && self.abi >= 4 {
            ruleset = ruleset
                .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
                .map_err(io_error)?;
        }
        // No connect to an abstract Unix socket made outside the domain (the user's D-Bus, X11
        // and ssh-agent listen on some), no signal to a process outside it.
        if self.abi >= 6 {
            ruleset = ruleset
                .scope(Scope::AbstractUnixSocket | Scope::Signal)
                .map_err(io_error)?;
        }
        let mut ruleset = ruleset.create().map_err(io_error)?;
        let read = make_bitflags!(AccessFs::{Execute | ReadFile | ReadDir});
        for (paths, access) in [
            (&self.read, read),
            (&self.list, AccessFs::ReadDir.into()),
            (&self.write, all),
        ] {
            for p in paths {
                ruleset = add(ruleset, p, access & all)?;
            }
        }
        let drop_caps = self.fs;
        Ok(move || {
            // The Landlock engine's process runs with no capability (as bwrap's do): one
            // started by root would otherwise read other processes' memory and environment.
            if drop_caps {
                // SAFETY: syscalls on stack values only, in the child before exec.
                unsafe { drop_capabilities()? };
            }
            // The crate's `restrict_self` is `prctl(PR_SET_NO_NEW_PRIVS)`, then
            // `landlock_restrict_self` on the fd opened above, then closing that fd: syscalls on
            // values it holds inline, no allocation and no lock (read in landlock 0.4.8; its
            // errors wrap the `io::Error` of errno, which allocates nothing). It consumes the
            // ruleset, so it runs on a duplicate (`fcntl(F_DUPFD_CLOEXEC)`): the closure can
            // run again if the command is spawned again.
            let status = ruleset.try_clone()?.restrict_self().map_err(|e| {
                os_error(&e).unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))
            })?;
            // A hard requirement makes a kernel without Landlock an error above; a process
            // that would run unboxed anyway does not run.
            if status.ruleset == RulesetStatus::NotEnforced {
                return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
            }
            // Landlock does not govern connecting to a Unix socket by its path (the user's
            // D-Bus bus, ssh-agent), and bubblewrap's hides are not there to keep them out of
            // sight: no new Unix socket at all (a socketpair between its own processes still
            // works).
            if drop_caps {
                // SAFETY: no_new_privs is set; stack values and one syscall, before exec.
                unsafe { no_unix_sockets()? };
            }
            Ok(())
        })
    }
}

/// The errno inside a crate error, found without allocating (the child between fork and exec
/// may not). std hands only a `pre_exec` error's errno to the parent anyway.
fn os_error(e: &RulesetError) -> Option<io::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(code) = c
            .downcast_ref::<io::Error>()
            .and_then(io::Error::raw_os_error)
        {
            return Some(io::Error::from_raw_os_error(code));
        }
        cause = c.source();
    }
    None
}

/// A crate error as the spawn's error: the kernel's errno when there is one (as the raw
/// syscalls gave), else the crate's own words.
fn io_error(e: RulesetError) -> io::Error {
    os_error(&e).unwrap_or_else(|| io::Error::other(e))
}

/// A seccomp filter: `socket(AF_UNIX, …)` fails with EACCES, every other call is allowed. Only
/// stack values and syscalls (it runs between fork and exec); no_new_privs must be set.
///
/// # Safety
/// Installs a filter on the calling thread; meant for the child before exec.
unsafe fn no_unix_sockets() -> std::io::Result<()> {
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO_EACCES: u32 = 0x0005_0000 | libc::EACCES as u32;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xc000_00b7;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return Ok(());
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // seccomp_data: nr at 0, arch at 4, args[0] (low half) at 16.
        let f = |code, jt, jf, k| SockFilter { code, jt, jf, k };
        let prog = [
            f(LD_W_ABS, 0, 0, 4),
            f(JEQ_K, 1, 0, ARCH),
            f(RET_K, 0, 0, ALLOW),
            f(LD_W_ABS, 0, 0, 0),
            f(JEQ_K, 0, 3, libc::SYS_socket as u32),
            f(LD_W_ABS, 0, 0, 16),
            f(JEQ_K, 0, 1, libc::AF_UNIX as u32),
            f(RET_K, 0, 0, ERRNO_EACCES),
            f(RET_K, 0, 0, ALLOW),
        ];
        let fprog = SockFprog {
            len: prog.len() as u16,
            filter: prog.as_ptr(),
        };
        const SECCOMP_SET_MODE_FILTER: u32 = 1;
        if libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            0u32,
            &fprog as *const SockFprog,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Clears every capability: the bounding set (so an exec cannot bring one back), the
/// ambient set, then the effective, permitted and inheritable sets. Only syscalls on stack
/// values (it runs between fork and exec).
///
/// # Safety
/// Changes the calling process's credentials; meant for the child before exec.
unsafe fn drop_capabilities() -> std::io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // Capabilities the kernel knows are below 64; one it does not know answers EINVAL.
    for cap in 0..64 {
        if libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) == 1 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
    }
    libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL,
        0,
        0,
        0,
    );
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    if libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Adds a rule for `path`; a path that does not exist (any more) is skipped. A file gets only
/// the rights that apply to files.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> io::Result<RulesetCreated> {
    let c = match std::ffi::CString::new(path.as_os_str().as_bytes()) {
        Ok(c) => c,
        Err(_) => return Ok(ruleset),
    };
    // A symlink is not followed: a rule on its target would grant what lies at the link's
    // target (a hidden folder, the user's own CLI state) through a link an agent or the user
    // left in a folder that is split around a hidden path. The target has its own rule if it
    // is to have one. (The crate's `PathFd` follows links, hence this fd of our own.)
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(ruleset);
    }
    // SAFETY: a NUL-terminated path; O_PATH opens without reading anything.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        )
    };
    if fd < 0 {
        return Ok(ruleset);
    }
    // SAFETY: just opened, owned here only.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
    let file_rights =
        make_bitflags!(AccessFs::{Execute | WriteFile | ReadFile | Truncate | IoctlDev});
    let allowed = if is_dir { access } else { access & file_rights };
    // The kernel refuses a rule that allows nothing.
    if allowed.is_empty() {
        return Ok(ruleset);
    }
    ruleset
        .add_rule(PathBeneath::new(fd, allowed))
        .map_err(io_error)
}

/// Splits `dir` around the hidden paths: trees holding nothing hidden go to `read` whole, the
/// folders on the way to a hidden path to `list`.
fn beside(dir: &Path, hidden: &[PathBuf], read: &mut Vec<PathBuf>, list: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| dir.starts_with(h)) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        read.push(dir.to_path_buf());
        return;
    }
    list.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        beside(&e.path(), hidden, read, list);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rights handled at each ABI are the kernel's bits the raw syscalls passed before the
    /// crate: a crate update that moved one would change what a box allows.
    #[test]
    fn each_abi_handles_the_same_bits_as_before() {
        let v1 = (1u64 << 13) - 1;
        let (refer, truncate, ioctl_dev) = (1u64 << 13, 1u64 << 14, 1u64 << 15);
        let expected = [
            v1,
            v1 | refer,
            v1 | refer | truncate,
            v1 | refer | truncate,
            v1 | refer | truncate | ioctl_dev,
            v1 | refer | truncate | ioctl_dev,
            v1 | refer | truncate | ioctl_dev,
        ];
        for (abi, bits) in (1..).zip(expected) {
            assert_eq!(handled(abi).bits(), bits, "ABI {abi}");
        }
        assert_eq!(
            (AccessNet::BindTcp | AccessNet::ConnectTcp).bits(),
            0b11,
            "TCP bind and connect"
        );
        assert_eq!(
            (Scope::AbstractUnixSocket | Scope::Signal).bits(),
            0b11,
            "abstract Unix sockets and signals"
        );
    }

    #[test]
    fn the_tree_is_split_around_hidden_paths() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for p in ["home/.ssh", "home/src/app", "data/agents", "other"] {
            std::fs::create_dir_all(root.join(p)).unwrap();
        }
        std::fs::write(root.join("home/.netrc"), "x").unwrap();
        let hidden = vec![root.join("home/.ssh"), root.join("data")];
        let (mut read, mut list) = (Vec::new(), Vec::new());
        beside(root, &hidden, &mut read, &mut list);
        read.sort();
        assert_eq!(list, [root.to_path_buf(), root.join("home")]);
        assert_eq!(
            read,
            [
                root.join("home/.netrc"),
                root.join("home/src"),
                root.join("other")
            ]
        );
    }
}
