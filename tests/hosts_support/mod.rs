//! A real `sshd` on a loopback port for the hosts tests (SPEC 17): its own host key and
//! sshd_config in a temp folder, run in the foreground (`-D -e -f`), a throwaway Unix user per
//! test with an authorized key made here, and an ssh config file whose Host alias the client
//! reaches through `-F`. Nothing stands in for ssh: the client runs the system `ssh`.
//!
//! Needs root (to create the users and to run sshd for them); without it each test says so and
//! returns. CI runs as root and has openssh-server from scripts/setup.sh, so it runs them.

use std::io::Write;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use paseo_core::hosts::{Host, SshOptions};

pub const HEADLESS: &str = env!("CARGO_BIN_EXE_paseo-headless");

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run(program: &str, args: &[&str]) -> std::process::Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

fn sshd_program() -> PathBuf {
    for p in ["/usr/sbin/sshd", "/usr/bin/sshd", "/sbin/sshd"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("sshd is not installed: run scripts/setup.sh (it installs openssh-server)");
}

/// A throwaway user on this machine, the host's user in these tests.
pub struct HostUser {
    pub name: String,
    pub home: PathBuf,
    pub uid: u32,
}

impl HostUser {
    /// Creates `name` if missing (a login shell, no password: only the key gets in) and
    /// empties what a previous run left in its home.
    fn ensure(name: &str) -> HostUser {
        if !run("id", &["-u", name]).status.success() {
            let made = run("useradd", &["--create-home", "--shell", "/bin/bash", name]);
            assert!(
                made.status.success() || run("id", &["-u", name]).status.success(),
                "useradd {name}: {}",
                String::from_utf8_lossy(&made.stderr)
            );
        }
        // "*": no password, yet not locked (sshd refuses keys of a locked account).
        let unlocked = run("usermod", &["-p", "*", name]);
        assert!(unlocked.status.success(), "usermod {name}");
        let uid: u32 = String::from_utf8_lossy(&run("id", &["-u", name]).stdout)
            .trim()
            .parse()
            .unwrap();
        let home = PathBuf::from(
            String::from_utf8_lossy(&run("getent", &["passwd", name]).stdout)
                .trim()
                .split(':')
                .nth(5)
                .unwrap(),
        );
        for leftover in [".paseo", ".local", "work"] {
            let _ = std::fs::remove_dir_all(home.join(leftover));
        }
        HostUser {
            name: name.to_string(),
            home,
            uid,
        }
    }
}

/// sshd on 127.0.0.1, the host user, and the client's ssh options.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub user: HostUser,
    child: Child,
    /// Backends the tests started on the host (by pid), stopped at the end.
    pub backends: Vec<u32>,
}

impl Sshd {
    /// `None` (with the reason on stderr) when this process cannot run sshd for another user.
    pub fn start(test: &str) -> Option<Sshd> {
        if !is_root() {
            eprintln!(
                "SKIPPED {test}: the hosts tests need root (to create a throwaway user and run \
                 sshd for it); CI runs them as root"
            );
            return None;
        }
        let sshd = sshd_program();
        let user = HostUser::ensure(&format!("paseo-h-{test}"));
        let dir = tempfile::tempdir().unwrap();
        // sshd reads the authorized keys as the user: the folder must be open to it.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let d = dir.path();
        for (key, comment) in [
            ("host_key", "host"),
            ("id_ed25519", "client"),
            ("stranger_key", "not authorized"),
        ] {
            let made = run(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-C",
                    comment,
                    "-f",
                    d.join(key).to_str().unwrap(),
                ],
            );
            assert!(made.status.success(), "ssh-keygen: {made:?}");
        }
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).unwrap();
        std::fs::set_permissions(
            d.join("authorized_keys"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 AllowUsers {user}\nPermitRootLogin no\nLogLevel VERBOSE\n",
                d = d.display(),
                user = user.name
            ),
        )
        .unwrap();
        let _ = std::fs::create_dir_all("/run/sshd");
        let log = std::fs::File::create(d.join("sshd.log")).unwrap();
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                std::fs::read_to_string(d.join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let host_key = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        let mut known = std::fs::File::create(d.join("known_hosts")).unwrap();
        let key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        writeln!(known, "[127.0.0.1]:{port} {}", key.join(" ")).unwrap();
        for (name, known_hosts, strict, key) in [
            ("box", d.join("known_hosts"), "yes", "id_ed25519"),
            // Never seen: no known_hosts entry, ssh's default checking.
            ("newbox", d.join("known_hosts_empty"), "ask", "id_ed25519"),
            // A key the host does not know: only a password would get in.
            ("nokey", d.join("known_hosts"), "yes", "stranger_key"),
        ] {
            let mut config = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(d.join("ssh_config"))
                .unwrap();
            writeln!(
                config,
                "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/{key}\n  \
                 IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking {strict}\n  ConnectTimeout 10\n",
                user = user.name,
                d = d.display(),
                known = known_hosts.display()
            )
            .unwrap();
        }
        Some(Sshd {
            dir,

            user,
            child,
            backends: Vec::new(),
        })
    }

    /// The client's ssh: the system one, with this test's config instead of the user's.
    pub fn ssh_options(&self) -> SshOptions {
        SshOptions {
            program: PathBuf::from("ssh"),
            extra: vec![
                "-F".into(),
                self.dir.path().join("ssh_config").display().to_string(),
            ],
        }
    }

    /// The host as config.json would name it: the alias of the ssh config.
    pub fn host(&self, alias: &str) -> Host {
        Host {
            name: alias.to_string(),
            ssh: alias.to_string(),
            command: None,
        }
    }

    /// The listening sshd (a stopped one accepts no new login; sessions it forked go on).
    #[allow(dead_code)] // hosts_app.rs's; each test target compiles this module on its own
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The host user's backend, by the pid its data root's lock names, if one runs.
    #[allow(dead_code)] // hosts_app.rs's
    pub fn host_backend(&self) -> Option<u32> {
        let lock = std::fs::read_to_string(self.user.home.join(".paseo/lock")).ok()?;
        lock.split_whitespace().find_map(|w| w.parse::<u32>().ok())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // The host's backends run detached (they outlive ssh by design): stopped by pid.
        for pid in &self.backends {
            stop_pid(*pid);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGTERM, then waits (bounded) until the process is gone.
pub fn stop_pid(pid: u32) {
    let pid = pid as libc::pid_t;
    // SAFETY: plain signals to a pid this test started (directly or through attach).
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid as u32) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if alive(pid as u32) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The ssh processes carrying an app's connections to its hosts: its children named ssh.
#[allow(dead_code)] // not every target that compiles this module kills ssh
pub fn ssh_children(app_pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (comm, rest) = stat.split_once(") ")?;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == app_pid && comm.ends_with("(ssh")).then_some(pid)
        })
        .collect()
}

/// The ssh process carrying the app's connection to its one host.
#[allow(dead_code)]
pub fn ssh_child(app_pid: u32) -> Option<u32> {
    ssh_children(app_pid).first().copied()
}

pub fn alive(pid: u32) -> bool {
    // A zombie is gone for our purposes.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
