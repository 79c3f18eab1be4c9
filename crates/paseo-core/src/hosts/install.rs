//! "Install on host" (SPEC 17): copies this machine's own `paseo-headless` to
//! `~/.local/bin/paseo-headless` on the host, over the same ssh the app connects with, when the
//! host lacks it or runs another version. Only to a host of the same architecture: a binary
//! that cannot run there is an error saying so, never a copy.

use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::ssh::{self, Host, SshOptions};
use super::HostError;

/// Written beside the target and renamed over it: a backend running the old binary keeps it,
/// and an interrupted copy never leaves half a program where the next attach looks.
const INSTALL: &str = "sh -c 'mkdir -p \"$HOME/.local/bin\" && cat > \"$HOME/.local/bin/paseo-headless.tmp\" && chmod 755 \"$HOME/.local/bin/paseo-headless.tmp\" && mv -f \"$HOME/.local/bin/paseo-headless.tmp\" \"$HOME/.local/bin/paseo-headless\"'";

/// `uname -m` names for this build's architecture.
fn machine_names() -> &'static [&'static str] {
    match std::env::consts::ARCH {
        "x86_64" => &["x86_64", "amd64"],
        "aarch64" => &["aarch64", "arm64"],
        "x86" => &["i386", "i486", "i586", "i686"],
        "arm" => &["armv6l", "armv7l", "armv7", "arm"],
        "riscv64" => &["riscv64"],
        _ => &[],
    }
}

/// Copies `binary` (this machine's `paseo-headless`) to the host.
pub async fn install(host: &Host, opts: &SshOptions, binary: &Path) -> Result<(), HostError> {
    let dest = host.destination()?.to_string();
    let (code, out, err) = run(host, opts, "uname -m", None).await?;
    if code != Some(0) {
        return Err(match ssh::classify(&dest, code, &err) {
            HostError::Closed { detail, .. } => HostError::Install { dest, detail },
            other => other,
        });
    }
    let theirs = out.trim().to_string();
    if !machine_names().contains(&theirs.as_str()) {
        return Err(HostError::Arch {
            dest,
            ours: std::env::consts::ARCH.to_string(),
            theirs,
        });
    }
    let bytes = tokio::fs::read(binary)
        .await
        .map_err(|e| HostError::Install {
            dest: dest.clone(),
            detail: format!("cannot read {}: {e}", binary.display()),
        })?;
    let (code, _, err) = run(host, opts, INSTALL, Some(bytes)).await?;
    if code != Some(0) {
        return Err(match ssh::classify(&dest, code, &err) {
            HostError::Closed { detail, .. } => HostError::Install { dest, detail },
            other => other,
        });
    }
    tracing::info!(host = %host.name, "paseo-headless installed in ~/.local/bin");
    Ok(())
}

/// Runs `remote` over ssh, feeding `input`; its exit code, stdout and stderr.
async fn run(
    host: &Host,
    opts: &SshOptions,
    remote: &str,
    input: Option<Vec<u8>>,
) -> Result<(Option<i32>, String, String), HostError> {
    let mut command = ssh::command(host, opts, remote)?;
    if input.is_none() {
        command.stdin(Stdio::null());
    }
    let mut child = command.spawn().map_err(|e| ssh::spawn_error(opts, e))?;
    let stdin = child.stdin.take();
    let feed = tokio::spawn(async move {
        if let (Some(mut stdin), Some(bytes)) = (stdin, input) {
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        }
    });
    // Both read at once: either could fill its pipe while the other is waited on.
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let read_all = |pipe: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>| async move {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text).await;
        }
        text
    };
    let (out, err) = tokio::join!(
        read_all(stdout.map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>)),
        read_all(stderr.map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>)),
    );
    let _ = feed.await;
    let status = child.wait().await.map_err(|e| ssh::spawn_error(opts, e))?;
    Ok((status.code(), out, err))
}
