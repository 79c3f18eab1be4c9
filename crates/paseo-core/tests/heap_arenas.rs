//! The app caps glibc's malloc at two arenas before its threads start
//! (`paseo_core::runtime::limit_heap_arenas`, docs/scale.md). A test binary of its own: the
//! count of arenas only grows in a process, so this one must be the first to set it.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::sync::{Arc, Barrier};

/// The heaps glibc reports (`malloc_info`: one `<heap nr=…>` per arena).
fn arenas() -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("malloc_info.xml");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a FILE opened here on a path this test owns, written once and closed.
    unsafe {
        let f = libc::fopen(c_path.as_ptr(), c"w".as_ptr());
        assert!(!f.is_null(), "could not open {}", path.display());
        assert_eq!(libc::malloc_info(0, f), 0);
        libc::fclose(f);
    }
    let xml = std::fs::read_to_string(&path).unwrap();
    xml.matches("<heap nr=").count()
}

#[test]
fn eight_threads_allocating_at_once_share_two_arenas() {
    paseo_core::runtime::limit_heap_arenas();
    // Each thread's first allocation happens while the others hold theirs: without the cap,
    // glibc gives each of them an arena of its own (up to eight per core).
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let kept: Vec<Vec<u8>> = (0..1000).map(|n| vec![i as u8; 64 + n % 512]).collect();
                barrier.wait();
                kept.len()
            })
        })
        .collect();
    for w in workers {
        assert_eq!(w.join().unwrap(), 1000);
    }
    let n = arenas();
    assert!(n <= 2, "{n} arenas");
}
