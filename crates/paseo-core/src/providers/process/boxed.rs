//! What an agent's box (SPEC 16) holds besides its cwd: its CLI's own state, writable, with the
//! CLI's settings kept read-only, and the files the app made for it inside the data root.

use std::path::{Path, PathBuf};

use super::AgentEnv;
use crate::model::AgentId;

/// A contained agent's own view of its CLI's state folder (SPEC 16b): a folder of its own in
/// the data root, named to the CLI by `var`, in which
/// - `shared` entries are links to the user's (transcripts, so sessions resume; the login,
///   so a refreshed one lands where the user's CLI reads it), which the agent writes through;
/// - `copies` are the user's settings copied at each start (or `empty`), read-only: they
///   grant permissions and run hooks;
/// - `read_only` entries are links to the user's (plugins, hooks, commands, skills, its
///   memory file), read, never written;
/// - `dropped` entries are removed at each start (an `.env` the CLI would load);
/// - `seed` is copied from the user's once (Claude Code's `.claude.json`);
/// - everything else the CLI writes stays its own.
///
/// So nothing an agent writes there makes another process run a command: not the user's own
/// CLI, not another agent, not its own next session (what it changed is made anew).
pub struct Layer<'a> {
    pub var: &'static str,
    /// The user's state folder.
    pub user: PathBuf,
    pub shared: &'a [&'a str],
    pub copies: &'a [(&'a str, &'a str)],
    pub read_only: &'a [&'a str],
    pub dropped: &'a [&'a str],
    /// Folders it writes, made first: under Landlock a folder holding a read-only file only
    /// takes writes into what already exists.
    pub made: &'a [&'a str],
    pub seed: Option<(PathBuf, &'a str)>,
}

impl AgentEnv {
    /// Lets the boxed session write its CLI's own state (SPEC 16: login, settings, sessions):
    /// the folders, made first when missing (a CLI inside its box could not make them in a
    /// read-only home), and the files that exist. Nothing when it runs unconfined.
    pub fn cli_state(&mut self, dirs: &[std::path::PathBuf], files: &[std::path::PathBuf]) {
        let Some(plan) = self.sandbox.as_mut() else {
            return;
        };
        let plan = std::sync::Arc::make_mut(plan);
        for d in dirs {
            if let Err(e) = std::fs::create_dir_all(d) {
                tracing::warn!(dir = %d.display(), "cannot make a CLI's state folder: {e}");
            }
            plan.write_if_exists(d);
        }
        for f in files {
            plan.write_if_exists(f);
        }
    }

    /// Keeps a CLI's settings read-only in the box (SPEC 14: an agent that could write them
    /// would grant itself permissions or hooks at its next start). A missing one is made empty
    /// first (`empty`: its content), so the agent cannot create it either.
    pub fn cli_settings(
        &mut self,
        files: &[(std::path::PathBuf, &str)],
        dirs: &[std::path::PathBuf],
    ) {
        let Some(plan) = self.sandbox.as_mut() else {
            return;
        };
        let plan = std::sync::Arc::make_mut(plan);
        for (f, empty) in files {
            if !f.exists() {
                if let Err(e) = std::fs::write(f, empty) {
                    tracing::warn!(file = %f.display(), "cannot make an empty CLI settings file: {e}");
                }
            }
            plan.protect(f);
        }
        for d in dirs {
            if let Err(e) = std::fs::create_dir_all(d) {
                tracing::warn!(dir = %d.display(), "cannot make a CLI settings folder: {e}");
            }
            plan.protect(d);
        }
    }

    /// Gives the boxed session its own layer over its CLI's state ([`Layer`]) and names it to
    /// the CLI; `false` when it runs unconfined (it then uses the user's state as it is).
    /// `Err` says what could not be made.
    pub fn cli_layer(&mut self, agent: AgentId, layer: &Layer) -> std::io::Result<bool> {
        let Some(plan) = self.sandbox.as_mut() else {
            return Ok(false);
        };
        let plan = std::sync::Arc::make_mut(plan);
        let own = plan
            .data_root()
            .join("state")
            .join(agent.to_string())
            .join(layer.var.to_ascii_lowercase());
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&own)?;
        }
        std::fs::create_dir_all(&layer.user)?;
        for name in layer.dropped {
            remove(&own.join(name))?;
        }
        for name in layer.made {
            let d = own.join(name);
            if std::fs::symlink_metadata(&d).is_err() {
                std::fs::create_dir_all(&d)?;
            }
        }
        for name in layer.shared {
            let theirs = layer.user.join(name);
            if !theirs.exists() && !name.contains('.') {
                std::fs::create_dir_all(&theirs)?;
            }
            if theirs.exists() {
                link(&theirs, &own.join(name))?;
                plan.write(&theirs);
            }
        }
        for name in layer.read_only {
            let theirs = layer.user.join(name);
            let mine = own.join(name);
            if theirs.exists() {
                link(&theirs, &mine)?;
            } else {
                remove(&mine)?;
            }
        }
        for (name, empty) in layer.copies {
            let mine = own.join(name);
            remove(&mine)?;
            match std::fs::read(layer.user.join(name)) {
                Ok(bytes) => std::fs::write(&mine, bytes)?,
                Err(_) => std::fs::write(&mine, empty)?,
            }
        }
        if let Some((from, name)) = &layer.seed {
            let mine = own.join(name);
            if std::fs::symlink_metadata(&mine).is_err() {
                if let Ok(bytes) = std::fs::read(from) {
                    std::fs::write(&mine, bytes)?;
                }
            }
        }
        plan.write(&own);
        for (name, _) in layer.copies {
            plan.protect(&own.join(name));
        }
        self.set
            .insert(layer.var.to_string(), own.to_string_lossy().into_owned());
        Ok(true)
    }

    /// Lets the boxed session read a file the app made for it inside a hidden path (its MCP
    /// configuration in the data root's `secrets/`).
    pub fn expose(&mut self, path: &Path) {
        if let Some(plan) = self.sandbox.as_mut() {
            std::sync::Arc::make_mut(plan).read(path);
        }
    }

    /// A folder named by a variable of the agent's environment, else `default` under HOME.
    pub fn dir_or_home(&self, var: &str, default: &str) -> Option<std::path::PathBuf> {
        match self.get(var).filter(|v| !v.is_empty()) {
            Some(v) => Some(std::path::PathBuf::from(v)),
            None => self
                .get("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(default)),
        }
    }
}

/// Removes what is at `path` (a link, a file or a folder of the agent's own), if anything.
fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes `at` a symlink to `to`, whatever was there.
fn link(to: &Path, at: &Path) -> std::io::Result<()> {
    if std::fs::read_link(at).ok().as_deref() == Some(to) {
        return Ok(());
    }
    remove(at)?;
    std::os::unix::fs::symlink(to, at)
}
