//! Where things live under the data root, and the `{cwd-with-dashes}` derivation of SPEC 1.

use std::path::{Path, PathBuf};

use crate::model::AgentId;

/// The layout of a data root (`$PASEO_HOME`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub home: PathBuf,
}

impl Layout {
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Layout { home: home.into() }
    }
    pub fn agents_dir(&self) -> PathBuf {
        self.home.join("agents")
    }
    /// `agents/{cwd-with-dashes}/{id}.json`.
    pub fn record_path(&self, cwd: &str, id: AgentId) -> PathBuf {
        self.agents_dir()
            .join(cwd_with_dashes(cwd))
            .join(format!("{id}.json"))
    }
    pub fn quarantine_dir(&self) -> PathBuf {
        self.home.join("quarantine")
    }
    /// The agents' live process groups (`run/{agentId}.{pgid}.json`), for crash cleanup.
    pub fn run_dir(&self) -> PathBuf {
        self.home.join("run")
    }
    /// A contained agent's private temp folder (its `TMPDIR`, SPEC 16).
    pub fn agent_tmp(&self, id: AgentId) -> PathBuf {
        self.home.join("tmp").join(id.to_string())
    }
    pub fn inbox_dir(&self) -> PathBuf {
        self.home.join("inbox")
    }
    pub fn inbox_path(&self, id: AgentId) -> PathBuf {
        self.inbox_dir().join(format!("{id}.json"))
    }
    pub fn timelines_dir(&self) -> PathBuf {
        self.home.join("timelines")
    }
    pub fn timeline_path(&self, id: AgentId) -> PathBuf {
        self.timelines_dir().join(format!("{id}.jsonl"))
    }
    pub fn projects_dir(&self) -> PathBuf {
        self.home.join("projects")
    }
    pub fn workspaces_path(&self) -> PathBuf {
        self.projects_dir().join("workspaces.json")
    }
    pub fn projects_path(&self) -> PathBuf {
        self.projects_dir().join("projects.json")
    }
    pub fn worktrees_dir(&self) -> PathBuf {
        self.home.join("worktrees")
    }
    /// What is left of removed worktrees (ignored files), kept for `storage.trashDays` days
    /// (SPEC 15; see [`crate::workspaces::trash`]).
    pub fn trash_dir(&self) -> PathBuf {
        self.home.join("trash")
    }
    pub fn config_path(&self) -> PathBuf {
        self.home.join("config.json")
    }
    pub fn windows_path(&self) -> PathBuf {
        self.home.join("windows.json")
    }
    /// A copy of the settled record files, read at start instead of each file
    /// ([`super::records_cache`]).
    pub fn records_cache_path(&self) -> PathBuf {
        self.home.join("cache").join("records.bin")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.home.join("logs")
    }
    pub fn mcp_json_path(&self) -> PathBuf {
        self.home.join("mcp.json")
    }
    /// What each schedule did (SPEC 20, `schedules::ledger`).
    pub fn schedules_path(&self) -> PathBuf {
        self.home.join("schedules.json")
    }
    pub fn mcp_token_path(&self) -> PathBuf {
        self.home.join("mcp-token")
    }
    /// Private (0700) folder for per-session secrets, such as the MCP configuration files
    /// handed to agent CLIs; emptied at every start.
    pub fn secrets_dir(&self) -> PathBuf {
        self.home.join("secrets")
    }
    /// Whether `p` lies inside the data root (lexically; callers pass normalized paths).
    pub fn contains(&self, p: &Path) -> bool {
        p.starts_with(&self.home)
    }
}

/// `{cwd-with-dashes}`: the absolute cwd with its root removed, trailing separators removed, and
/// every run of `/` or `\` replaced by one `-`. A Windows drive `C:\` becomes `C`, a UNC prefix
/// `\\server\share` becomes `server-share`, and the bare root becomes `root`.
///
/// The result is always one safe path component: it never contains a separator, and the
/// names `.` and `..` (which `/.` or `/..` would give) map to `root` like the root itself.
pub fn cwd_with_dashes(cwd: &str) -> String {
    let is_sep = |c: char| c == '/' || c == '\\';
    let mut out = String::with_capacity(cwd.len());
    let mut pending_sep = false;
    let mut rest = cwd;
    // A drive letter: keep the letter, drop the colon.
    let b = cwd.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        out.push(b[0] as char);
        rest = &cwd[2..];
        pending_sep = true;
    }
    for c in rest.chars() {
        if is_sep(c) {
            pending_sep = true;
            continue;
        }
        if pending_sep && !out.is_empty() {
            out.push('-');
        }
        pending_sep = false;
        // NUL and other control characters cannot be in a file name portably.
        out.push(if c.is_control() { '_' } else { c });
    }
    if out.is_empty() || out == "." || out == ".." {
        return "root".to_string();
    }
    out
}

/// The longest file name the file system under `dir` takes (`NAME_MAX`); 255, the limit of
/// every common Linux and macOS file system, when it cannot be asked.
pub fn name_max(dir: &Path) -> usize {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) {
            // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
            let n = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
            if n > 0 {
                return n as usize;
            }
        }
    }
    255
}

/// Refuses a cwd whose record folder (`agents/{cwd-with-dashes}`) would be a longer name than
/// the data root's file system allows: such an agent could never be written, and would run
/// and vanish at the next start (SPEC 15). The message is for the `cwd` field.
pub fn check_record_dir(layout: &Layout, cwd: &str) -> Result<(), String> {
    let name = cwd_with_dashes(cwd);
    let root = if layout.agents_dir().is_dir() {
        layout.agents_dir()
    } else {
        layout.home.clone()
    };
    let max = name_max(&root).min(255);
    if name.len() > max {
        return Err(format!(
            "the agent's record would be stored in a folder named after the cwd, {} bytes long; \
             the data root's file system allows {max}: use a shorter path",
            name.len()
        ));
    }
    Ok(())
}

/// Makes sure a record for `cwd` can be written before its agent exists: the folder is made and
/// takes a small file (made, written and removed). Any cause counts: a read-only or full file
/// system, a file in the folder's way, a permission. An agent that starts with a record that
/// cannot land would run and vanish at the next start (SPEC 15).
pub fn probe_record_dir(layout: &Layout, cwd: &str) -> Result<(), super::StoreError> {
    use std::io::Write;
    let dir = layout.agents_dir().join(cwd_with_dashes(cwd));
    let fail = |source| super::StoreError::Unwritable {
        path: dir.display().to_string(),
        source,
    };
    super::atomic::ensure_dir(&dir).map_err(fail)?;
    let probe = dir.join(format!(".probe-{}", uuid::Uuid::new_v4()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| f.write_all(b"{}"));
    let _ = std::fs::remove_file(&probe);
    written.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_matches_spec_examples_and_edges() {
        let cases = [
            ("/home/me/src/app", "home-me-src-app"),
            ("/home/me/src/app/", "home-me-src-app"),
            ("/home//me///src/app//", "home-me-src-app"),
            ("/", "root"),
            ("//", "root"),
            ("C:\\", "C"),
            ("C:\\Users\\me\\src", "C-Users-me-src"),
            ("C:/Users/me/", "C-Users-me"),
            ("d:\\", "d"),
            ("\\\\server\\share\\dir", "server-share-dir"),
            ("\\\\server\\share\\", "server-share"),
            ("/a\\b/c", "a-b-c"),
            ("/tmp/my app", "tmp-my app"),
            ("/.", "root"),
            ("/..", "root"),
            ("/a/../b", "a-..-b"),
            ("/x\0y", "x_y"),
        ];
        for (cwd, want) in cases {
            assert_eq!(cwd_with_dashes(cwd), want, "cwd {cwd:?}");
        }
    }

    #[test]
    fn a_cwd_too_long_for_a_folder_name_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let l = Layout::new(d.path());
        assert_eq!(name_max(d.path()), 255);
        let fits = format!("/{}", "a".repeat(255));
        assert!(check_record_dir(&l, &fits).is_ok());
        let long = format!("/{}/{}", "a".repeat(200), "b".repeat(55));
        let err = check_record_dir(&l, &long).unwrap_err();
        assert!(err.contains("256 bytes") && err.contains("255"), "{err}");
        // Multi-byte characters count in bytes.
        assert!(check_record_dir(&l, &format!("/{}", "é".repeat(128))).is_err());
    }

    #[test]
    fn record_path_stays_inside_the_agents_dir() {
        let l = Layout::new("/data");
        let id = AgentId::new();
        for cwd in ["/..", "/../../etc", "/a/..", "\\\\..\\..", "C:..\\.."] {
            let p = l.record_path(cwd, id);
            assert_eq!(
                p.parent().unwrap().parent().unwrap(),
                l.agents_dir(),
                "{cwd}"
            );
            let comp = p.parent().unwrap().file_name().unwrap().to_str().unwrap();
            assert!(
                comp != ".." && comp != "." && !comp.contains('/'),
                "{cwd} -> {comp}"
            );
        }
    }
}
