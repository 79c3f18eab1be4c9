//! The daily log files, `paseo.YYYY-MM-DD.log` (UTC) in `$PASEO_HOME/logs/`, created private
//! (0600) whatever the umask: log lines name agents, paths and errors, and the data root is the
//! user's alone (SPEC 16). The rolling appender of `tracing-appender` cannot set a file's mode,
//! so the app opens its files itself; the names are the ones that appender used, so older logs
//! keep rotating out.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use paseo_core::store::private::FILE_MODE;

const PREFIX: &str = "paseo.";
const SUFFIX: &str = ".log";

/// Appends to today's file, moving to a new one when the day changes and removing the oldest
/// beyond `keep`.
pub struct DailyFile {
    dir: PathBuf,
    keep: usize,
    day: String,
    file: File,
}

fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

fn open_day(dir: &Path, day: &str) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(FILE_MODE)
        .open(dir.join(format!("{PREFIX}{day}{SUFFIX}")))
}

impl DailyFile {
    /// Opens today's file in `dir` (which must exist), so a folder that cannot be written
    /// fails the start rather than the first log line.
    pub fn open(dir: &Path, keep: usize) -> io::Result<DailyFile> {
        let day = today();
        let file = open_day(dir, &day)?;
        let daily = DailyFile {
            dir: dir.to_path_buf(),
            keep,
            day,
            file,
        };
        daily.prune();
        Ok(daily)
    }

    /// Removes the oldest daily files beyond `keep` (the names sort by date).
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut days: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
            })
            .collect();
        days.sort();
        let extra = days.len().saturating_sub(self.keep);
        for old in &days[..extra] {
            // A file that cannot go now goes at a later day's change.
            let _ = std::fs::remove_file(old);
        }
    }
}

impl Write for DailyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let day = today();
        if day != self.day {
            self.file = open_day(&self.dir, &day)?;
            self.day = day;
            self.prune();
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// SPEC 16: a log file is private from its creation, not only once a start tightened it.
    #[test]
    fn log_files_are_created_private_and_old_ones_rotate_out() {
        let d = tempfile::tempdir().unwrap();
        for day in ["2020-01-01", "2020-01-02", "2020-01-03"] {
            std::fs::write(d.path().join(format!("paseo.{day}.log")), "old\n").unwrap();
        }
        std::fs::write(d.path().join("other.txt"), "kept").unwrap();
        let mut f = DailyFile::open(d.path(), 2).unwrap();
        writeln!(f, "hello").unwrap();
        f.flush().unwrap();
        let path = d.path().join(format!("paseo.{}.log", today()));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "other.txt".to_string(),
                "paseo.2020-01-03.log".to_string(),
                format!("paseo.{}.log", today())
            ]
        );
    }
}
