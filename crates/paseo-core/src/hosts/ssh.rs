//! The system OpenSSH client, run as a child process: never an SSH library, so the user's
//! `~/.ssh/config`, keys, agent, ProxyJump and known hosts are ssh's business (SPEC 17).
//! `BatchMode=yes`: ssh never prompts; what it would have asked becomes an error saying what to
//! run in a terminal.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::process::Command;

use super::HostError;

pub use crate::config::Host;

/// How ssh is run: the program and options put before the destination (tests give `-F` with
/// their own config; the app uses the user's).
#[derive(Clone, Debug)]
pub struct SshOptions {
    pub program: PathBuf,
    pub extra: Vec<String>,
}

impl Default for SshOptions {
    fn default() -> Self {
        SshOptions {
            program: PathBuf::from("ssh"),
            extra: Vec::new(),
        }
    }
}

/// The default program on the host: the one installed to `~/.local/bin` first (the app's
/// install puts it there, and non-interactive ssh shells rarely have it on PATH), else PATH.
/// Run by `sh` whatever the user's login shell is.
const DEFAULT_ATTACH: &str = "sh -c 'if [ -x \"$HOME/.local/bin/paseo-headless\" ]; then exec \"$HOME/.local/bin/paseo-headless\" attach; else exec paseo-headless attach; fi'";

impl Host {
    /// The destination, checked: one that starts with `-` would be read by ssh as an option.
    pub fn destination(&self) -> Result<&str, HostError> {
        let dest = self.ssh.trim();
        if dest.is_empty() || dest.starts_with('-') {
            return Err(HostError::BadDestination(self.ssh.clone()));
        }
        Ok(dest)
    }

    /// The command line the host's shell runs to attach.
    pub fn attach_command(&self) -> String {
        match &self.command {
            Some(command) if !command.is_empty() => {
                let mut words: Vec<String> = command.iter().map(|w| quote(w)).collect();
                words.push("attach".into());
                words.join(" ")
            }
            _ => DEFAULT_ATTACH.to_string(),
        }
    }
}

/// One word for a POSIX shell.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `ssh -T -o BatchMode=yes -o ServerAlive… -a -x … <extra…> <dest> <remote>`, with its three
/// streams piped; killed when dropped.
pub fn command(host: &Host, opts: &SshOptions, remote: &str) -> Result<Command, HostError> {
    let dest = host.destination()?;
    let mut command = Command::new(&opts.program);
    command
        .arg("-T")
        .args(["-o", "BatchMode=yes"])
        // A network that went away without a word is noticed within a minute, not hours.
        .args([
            "-o",
            "ServerAliveInterval=15",
            "-o",
            "ServerAliveCountMax=3",
        ])
        // Nothing of this machine reaches the host's agents: no ssh agent (they would sign
        // with the user's keys), no X display, no port forwarded by a config entry.
        .args(["-a", "-x", "-o", "ClearAllForwardings=yes"])
        // One attempt against a host that does not answer ends, so the next one can start.
        .args(["-o", "ConnectTimeout=10"])
        .args(&opts.extra)
        .arg(dest)
        .arg(remote)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Ok(command)
}

pub(crate) fn spawn_error(opts: &SshOptions, source: std::io::Error) -> HostError {
    HostError::Spawn {
        program: opts.program.display().to_string(),
        source,
    }
}

/// What an ssh that ended (before or instead of the protocol) means: ssh's own failures exit
/// 255; 127 is the host's shell not finding the program.
pub fn classify(dest: &str, code: Option<i32>, stderr: &str) -> HostError {
    let dest = dest.to_string();
    let last = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    match code {
        Some(255) => {
            if stderr.contains("Host key verification failed")
                || stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
                || stderr.contains("No ED25519 host key is known")
                || stderr.contains("host key is known for")
            {
                HostError::HostKey { dest }
            } else if stderr.contains("Permission denied")
                || stderr.contains("Too many authentication failures")
            {
                HostError::Auth { dest }
            } else {
                let detail = if last.is_empty() {
                    "ssh exited with status 255".to_string()
                } else {
                    last
                };
                HostError::Ssh { dest, detail }
            }
        }
        Some(127) => HostError::NotInstalled { dest },
        other => {
            let status = match other {
                Some(code) => format!("exit status {code}"),
                None => "killed by a signal".to_string(),
            };
            let detail = if last.is_empty() {
                format!("the host's program ended ({status})")
            } else {
                format!("{last} ({status})")
            };
            HostError::Closed { dest, detail }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_failures_say_what_to_run() {
        let key = classify("box", Some(255), "Host key verification failed.\r\n");
        assert_eq!(key.code(), "ssh_host_key");
        assert!(
            key.to_string().contains("run `ssh box` once in a terminal"),
            "{key}"
        );
        let auth = classify("box", Some(255), "me@box: Permission denied (publickey).\n");
        assert_eq!(auth.code(), "ssh_auth");
        let gone = classify(
            "box",
            Some(255),
            "ssh: connect to host box port 22: Connection refused\n",
        );
        assert!(gone.to_string().ends_with("Connection refused"), "{gone}");
        assert_eq!(
            classify("box", Some(127), "sh: 1: exec: paseo-headless: not found").code(),
            "not_installed"
        );
    }

    #[test]
    fn nothing_is_forwarded_and_ssh_never_prompts() {
        let host = Host {
            name: "h".into(),
            ssh: "box".into(),
            command: None,
        };
        let command = command(&host, &SshOptions::default(), "true").unwrap();
        let args: Vec<String> = command
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for wanted in ["-T", "BatchMode=yes", "-a", "-x", "ClearAllForwardings=yes"] {
            assert!(args.iter().any(|a| a == wanted), "{wanted} in {args:?}");
        }
        // The destination last but the remote command: nothing after it is read as an option.
        assert_eq!(&args[args.len() - 2..], ["box", "true"]);
    }

    #[test]
    fn a_destination_that_ssh_would_read_as_an_option_is_refused() {
        let host = |ssh: &str| Host {
            name: "h".into(),
            ssh: ssh.into(),
            command: None,
        };
        assert!(host("-oProxyCommand=touch /tmp/x").destination().is_err());
        assert!(host(" ").destination().is_err());
        assert_eq!(host("me@box").destination().unwrap(), "me@box");
        let custom = Host {
            command: Some(vec!["/opt/paseo it/paseo-headless".into()]),
            ..host("box")
        };
        assert_eq!(
            custom.attach_command(),
            "'/opt/paseo it/paseo-headless' attach"
        );
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
