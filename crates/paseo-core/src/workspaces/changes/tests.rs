//! Unit tests of the parsers (git's own output, recorded).

use super::read::*;
use super::*;

#[test]
fn raw_and_numstat_records_pair_up() {
    let out = b":000000 100644 0000000 2478dab A\0bin\0:100644 100644 de98044 a7bc997 M\0f\0:100644 100644 587be6b 587be6b R100\0g\0h\0-\t-\tbin\x002\t1\tf\x000\t0\t\0g\0h\0";
    let files = parse_raw_numstat(out);
    assert_eq!(files.len(), 3);
    assert_eq!(files[0].path, "bin");
    assert!(files[0].binary && files[0].additions.is_none());
    assert_eq!(files[0].status, FileStatus::Added);
    assert_eq!((files[1].additions, files[1].deletions), (Some(2), Some(1)));
    assert_eq!(files[2].status, FileStatus::Renamed);
    assert_eq!(files[2].old_path.as_deref(), Some("g"));
    assert_eq!(files[2].path, "h");
    assert_eq!((files[2].additions, files[2].deletions), (Some(0), Some(0)));
    let t = totals(&files);
    assert_eq!((t.files, t.additions, t.deletions, t.binary), (3, 2, 1, 1));
}

#[test]
fn hunks_are_numbered_and_no_newline_is_marked() {
    let diff = b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@ fn x()\n a\n-b\n+B\n\n\\ No newline at end of file\n@@ -10 +10,2 @@\n z\n+y\n";
    let p = parse_patch(diff);
    assert!(!p.binary);
    assert_eq!(p.hunks.len(), 2);
    let h = &p.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (1, 3, 1, 3)
    );
    assert_eq!(h.section, "fn x()");
    let kinds: Vec<_> = h.lines.iter().map(|l| l.kind).collect();
    use LineKind::*;
    assert_eq!(kinds, [Context, Remove, Add, Context]);
    assert_eq!(h.lines[1].old_line, Some(2));
    assert_eq!(h.lines[2].new_line, Some(2));
    assert_eq!(
        (h.lines[3].old_line, h.lines[3].new_line),
        (Some(3), Some(3))
    );
    assert!(h.lines[3].no_newline && h.lines[3].text.is_empty());
    let h = &p.hunks[1];
    assert_eq!((h.old_lines, h.new_lines), (1, 2));
    assert_eq!(h.lines[1].new_line, Some(11));
    let p = parse_patch(b"diff --git a/b b/b\nBinary files a/b and b/b differ\n");
    assert!(p.binary && p.hunks.is_empty());
}

#[test]
fn error_lists_are_bounded() {
    let files: Vec<String> = (0..25).map(|i| format!("f{i}")).collect();
    let e = ChangesError::Uncommitted {
        path: "/w".into(),
        files,
    };
    assert!(
        e.to_string()
            .ends_with("f9 and 15 more); commit them first"),
        "{e}"
    );
}
