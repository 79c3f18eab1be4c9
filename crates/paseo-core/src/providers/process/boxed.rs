//! What an agent's box (SPEC 16) holds besides its cwd: its CLI's own state, writable, with the
//! CLI's settings kept read-only, and the files the app made for it inside the data root.

use std::path::Path;

use super::AgentEnv;

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
