//! Hosts (SPEC 17): other machines the user reaches with the system OpenSSH client, whose
//! backends the app drives with the same API it uses locally. [`protocol`] is the frames,
//! [`ssh`] how the system `ssh` is run and its failures read, [`client`] one host's connection
//! (handshake, requests, numbered events, reconnect and resync), [`install`] the copy of this
//! machine's `paseo-headless` to a host, [`window`] what the windows hear of the hosts.

pub mod client;
pub mod install;
pub mod manager;
pub mod protocol;
pub mod ssh;
pub mod window;

pub use client::{HostClient, Update};
pub use install::install;
pub use manager::{HostEvent, HostManager, HostState, HostStatus};
pub use ssh::{Host, SshOptions};

use thiserror::Error;

/// What went wrong reaching a host; each says what to do about it.
#[derive(Debug, Error)]
pub enum HostError {
    #[error("the ssh destination '{0}' is not valid: it must not be empty or start with '-'")]
    BadDestination(String),
    #[error("cannot run ssh ({program}): {source}; is the OpenSSH client installed?")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("ssh does not know the host key of {dest} yet (or it changed): run `ssh {dest}` once in a terminal to check and accept it, then connect again")]
    HostKey { dest: String },
    #[error("ssh cannot log in to {dest} without a password or passphrase prompt, and the app never asks for one: set up a key (`ssh-copy-id {dest}`) or load it into your ssh agent, then check with `ssh {dest} true` in a terminal")]
    Auth { dest: String },
    #[error("ssh could not connect to {dest}: {detail}")]
    Ssh { dest: String, detail: String },
    #[error("paseo-headless is not installed on {dest} (neither on its PATH nor in ~/.local/bin): install it on the host from this app")]
    NotInstalled { dest: String },
    #[error("{dest}: {message}")]
    Version { dest: String, message: String },
    #[error("{dest} refused the connection: {message}")]
    Refused { dest: String, message: String },
    #[error("{dest} broke the protocol: {detail}")]
    Protocol { dest: String, detail: String },
    #[error("the connection to {dest} ended: {detail}")]
    Closed { dest: String, detail: String },
    #[error("{dest} is a {theirs} machine and this paseo-headless is built for {ours}: install a {theirs} build of paseo-headless on it instead")]
    Arch {
        dest: String,
        ours: String,
        theirs: String,
    },
    #[error("cannot install paseo-headless on {dest}: {detail}")]
    Install { dest: String, detail: String },
}

impl HostError {
    /// The stable code a client acts on (the `ApiError` code at the app's boundary).
    pub fn code(&self) -> &'static str {
        match self {
            HostError::BadDestination(_) => "invalid",
            HostError::Spawn { .. } => "ssh_missing",
            HostError::HostKey { .. } => "ssh_host_key",
            HostError::Auth { .. } => "ssh_auth",
            HostError::Ssh { .. } => "ssh",
            HostError::NotInstalled { .. } => "not_installed",
            HostError::Version { .. } => "version",
            HostError::Refused { .. } => "forbidden",
            HostError::Protocol { .. } => "protocol",
            HostError::Closed { .. } => "disconnected",
            HostError::Arch { .. } => "arch",
            HostError::Install { .. } => "install",
        }
    }

    /// Whether installing this app's `paseo-headless` on the host would fix it.
    pub fn install_helps(&self) -> bool {
        matches!(
            self,
            HostError::NotInstalled { .. } | HostError::Version { .. }
        )
    }
}

impl From<HostError> for crate::api::ApiError {
    fn from(e: HostError) -> Self {
        crate::api::ApiError::new(e.code(), e.to_string())
    }
}
