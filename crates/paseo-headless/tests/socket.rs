//! The backend's Unix socket (SPEC 17), spoken to by hand with the real backend: private,
//! replaces a stale socket, compares versions first, answers requests by id and numbers its
//! events so a snapshot says which it reflects. And contained agents (SPEC 16) cannot reach it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use paseo_headless::backend;
use paseo_headless::cli::Mode;
use paseo_headless::socket::socket_path;
use serde_json::{json, Value};

fn data_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("paseo");
    std::fs::create_dir(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
    (dir, root)
}

/// A connection speaking the frames by hand, one JSON value per line.
struct Conn {
    write: UnixStream,
    read: BufReader<UnixStream>,
}

impl Conn {
    fn open(root: &Path) -> Conn {
        let stream = UnixStream::connect(socket_path(root)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Conn {
            read: BufReader::new(stream.try_clone().unwrap()),
            write: stream,
        }
    }

    fn send(&mut self, frame: Value) {
        let mut line = frame.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).unwrap();
    }

    /// The next frame; `None` when the backend closed the connection.
    fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        if self.read.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        Some(serde_json::from_str(&line).unwrap())
    }

    fn hello(root: &Path) -> Conn {
        let mut c = Conn::open(root);
        c.send(json!({"type": "hello", "product": env!("CARGO_PKG_VERSION"), "protocol": 1}));
        let hello = c.next().unwrap();
        assert_eq!(hello["type"], "hello", "{hello}");
        assert_eq!(hello["product"], env!("CARGO_PKG_VERSION"));
        assert_eq!(hello["pid"], std::process::id());
        c
    }

    /// Sends a request and returns its answer, keeping the events that came first.
    fn call(&mut self, id: u64, request: Value, events: &mut Vec<Value>) -> Value {
        self.send(json!({"type": "request", "id": id, "request": request}));
        loop {
            let frame = self.next().expect("the backend closed the connection");
            if frame["type"] == "event" {
                events.push(frame);
            } else {
                assert_eq!(frame["id"], id, "{frame}");
                return frame;
            }
        }
    }
}

/// The socket is there, 0600, a socket, in the data root; a stale one left by a killed backend
/// (a socket file nobody listens on) is replaced; a request answers by id, a bad one fails its
/// own id naming the field; `syncSnapshot` numbers the snapshot, and the events after it are
/// numbered from the next one on, with nothing left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backend_listens_on_a_private_socket_and_numbers_its_events() {
    let (_dir, root) = data_root();
    // A killed backend's socket: the file stays, nobody listens.
    drop(std::os::unix::net::UnixListener::bind(socket_path(&root)).unwrap());
    assert!(UnixStream::connect(socket_path(&root)).is_err());
    let backend = backend::start(&root, Mode::Headless).await.unwrap();
    let meta = std::fs::metadata(socket_path(&root)).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);

    let project = root.parent().unwrap().join("project");
    std::fs::create_dir(&project).unwrap();
    let root2 = root.clone();
    tokio::task::spawn_blocking(move || {
        let root = root2;
        let mut c = Conn::hello(&root);
        let mut events = Vec::new();
        let bad = c.call(1, json!({"kind": "getAgent"}), &mut events);
        assert_eq!(bad["type"], "error");
        assert_eq!(bad["error"]["code"], "invalid");
        assert_eq!(bad["error"]["field"], "agentId");

        let synced = c.call(2, json!({"kind": "syncSnapshot"}), &mut events);
        assert_eq!(synced["response"]["kind"], "synced", "{synced}");
        let s = synced["response"]["value"]["seq"].as_u64().unwrap();
        assert!(synced["response"]["value"]["window"].is_object());
        events.retain(|e| e["seq"].as_u64().unwrap() > s);

        let created = c.call(
            3,
            json!({"kind": "createAgent", "provider": "shell",
                   "workspace": {"kind": "directory", "path": project.display().to_string()},
                   "prompt": "echo numbered-$((6*7))"}),
            &mut events,
        );
        assert_eq!(created["response"]["kind"], "agent", "{created}");
        // Until the output came: every event numbered, the first right after the snapshot,
        // none skipped.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !events.iter().any(|e| e.to_string().contains("numbered-42")) {
            assert!(Instant::now() < deadline, "no output in {events:#?}");
            let frame = c.next().unwrap();
            assert_eq!(frame["type"], "event", "{frame}");
            events.push(frame);
        }
        let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        let expected: Vec<u64> = (s + 1..s + 1 + seqs.len() as u64).collect();
        assert_eq!(seqs, expected);

        // Quiet now: a second client's snapshot reflects exactly what the first has seen,
        // and a late event reaches both with the same number.
        std::thread::sleep(Duration::from_millis(500));
        while let Ok(Some(f)) = {
            c.write
                .set_read_timeout(Some(Duration::from_millis(300)))
                .unwrap();
            let mut line = String::new();
            match c.read.read_line(&mut line) {
                Ok(0) => Ok(None),
                Ok(_) => Ok(Some(serde_json::from_str::<Value>(&line).unwrap())),
                Err(e) => Err(e),
            }
        } {
            events.push(f);
        }
        c.write
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let last = events.last().unwrap()["seq"].as_u64().unwrap();
        let mut d = Conn::hello(&root);
        let mut d_events = Vec::new();
        let synced = d.call(1, json!({"kind": "syncSnapshot"}), &mut d_events);
        assert_eq!(synced["response"]["value"]["seq"], last, "{synced}");
    })
    .await
    .unwrap();
    backend.shutdown().await;
    assert!(
        !socket_path(&root).exists(),
        "the socket goes with the backend"
    );
}

/// The first exchange compares versions: another version is refused, naming both, and the
/// connection ends; a request before the hello is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_version_is_refused_naming_both() {
    let (_dir, root) = data_root();
    let backend = backend::start(&root, Mode::Headless).await.unwrap();
    let root2 = root.clone();
    tokio::task::spawn_blocking(move || {
        let mut c = Conn::open(&root2);
        c.send(json!({"type": "hello", "product": "0.0.1-old", "protocol": 1}));
        let refused = c.next().unwrap();
        assert_eq!(refused["type"], "refused", "{refused}");
        assert_eq!(refused["error"]["code"], "version");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("0.0.1-old"), "{message}");
        assert!(message.contains(env!("CARGO_PKG_VERSION")), "{message}");
        assert!(c.next().is_none(), "the connection ends");

        let mut c = Conn::open(&root2);
        c.send(json!({"type": "request", "id": 1, "request": {"kind": "syncSnapshot"}}));
        assert_eq!(c.next().unwrap()["type"], "refused");
    })
    .await
    .unwrap();
    backend.shutdown().await;
}

/// Defence in depth for Landlock, which does not govern `connect`: a peer with no_new_privs
/// (what both containment engines set) is refused before it can say anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_with_no_new_privs_is_refused() {
    let (_dir, root) = data_root();
    let backend = backend::start(&root, Mode::Headless).await.unwrap();
    let script = format!(
        "use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Peer => '{}') or die \"connect: $!\"; \
         print $s qq({{\"type\":\"hello\",\"product\":\"{}\",\"protocol\":1}}\\n); print scalar <$s>;",
        socket_path(&root).display(),
        env!("CARGO_PKG_VERSION")
    );
    let plain = tokio::process::Command::new("perl")
        .args(["-e", &script])
        .output()
        .await
        .unwrap();
    let plain = format!(
        "{}{}",
        String::from_utf8_lossy(&plain.stdout),
        String::from_utf8_lossy(&plain.stderr)
    );
    assert!(plain.contains("\"type\":\"hello\""), "{plain}");
    let boxed = tokio::process::Command::new("setpriv")
        .args(["--no-new-privs", "perl", "-e", &script])
        .output()
        .await
        .unwrap();
    let boxed = format!(
        "{}{}",
        String::from_utf8_lossy(&boxed.stdout),
        String::from_utf8_lossy(&boxed.stderr)
    );
    assert!(boxed.contains("\"type\":\"refused\""), "{boxed}");
    assert!(boxed.contains("no_new_privs"), "{boxed}");
    backend.shutdown().await;
}

/// What a contained agent tries (SPEC 16): the socket would give it the user's power. From a
/// real shell agent in each engine's box: under bubblewrap the path is not there at all; under
/// Landlock (which does not govern `connect`) the backend refuses the peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contained_agent_cannot_reach_the_socket() {
    for engine in ["bubblewrap", "landlock"] {
        let (_dir, root) = data_root();
        std::fs::write(
            root.join("config.json"),
            json!({"sandbox": {"engine": engine}}).to_string(),
        )
        .unwrap();
        let backend = backend::start(&root, Mode::Headless).await.unwrap();
        let project = root.parent().unwrap().join("project");
        std::fs::create_dir(&project).unwrap();
        let sock = socket_path(&root).display().to_string();
        let script = format!(
            "test -e {sock} && echo SOCKET-VISIBLE || echo SOCKET-ABSENT; \
             perl -MIO::Socket::UNIX -e '$SIG{{PIPE}} = \"IGNORE\"; \
             my $s = IO::Socket::UNIX->new(Peer => \"{sock}\") or die \"cannot connect: $!\\n\"; \
             print $s qq({{\"type\":\"hello\",\"product\":\"{v}\",\"protocol\":1}}\\n); \
             print \"GOT \", scalar <$s>; \
             print $s qq({{\"type\":\"request\",\"id\":1,\"request\":{{\"kind\":\"listAgents\"}}}}\\n); \
             print \"GOT \", scalar <$s>;'; echo AGENT-$((40+2))-DONE",
            v = env!("CARGO_PKG_VERSION")
        );
        let h = backend.handle();
        let created = h
            .call(
                paseo_core::api::Caller::User,
                paseo_core::api::Request::from_value(json!({
                    "kind": "createAgent", "provider": "shell",
                    "workspace": {"kind": "directory", "path": project.display().to_string()},
                    "prompt": script,
                }))
                .unwrap(),
            )
            .await
            .unwrap();
        let id = match created {
            paseo_core::api::Response::Agent(a) => a.id(),
            other => panic!("{other:?}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let text = loop {
            let items = match h
                .call(
                    paseo_core::api::Caller::User,
                    paseo_core::api::Request::Timeline(paseo_core::api::verbs::Timeline {
                        agent_id: id,
                        before: None,
                        limit: Some(500),
                    }),
                )
                .await
                .unwrap()
            {
                paseo_core::api::Response::Timeline(items) => items,
                other => panic!("{other:?}"),
            };
            let text: String = items.iter().map(|i| format!("{}\n", i.text)).collect();
            if text.contains("AGENT-42-DONE") {
                break text;
            }
            assert!(Instant::now() < deadline, "{engine}: no end in {text}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let fleet = paseo_core::api::verbs::Fleet {};
        let info = match h
            .call(paseo_core::runtime::Caller::User, fleet.into())
            .await
        {
            Ok(paseo_core::api::Response::Fleet(f)) => f.containment,
            other => panic!("fleet: {other:?}"),
        };
        assert!(
            format!("{info:?}").to_lowercase().contains(&engine[..4]),
            "{engine} is the engine: {info:?}"
        );
        // The command line is echoed in the timeline; what the socket said would follow "GOT".
        assert!(!text.contains("GOT {\"type\":\"hello"), "{engine}: {text}");
        match engine {
            "bubblewrap" => assert!(
                text.contains("SOCKET-ABSENT") && text.contains("cannot connect"),
                "{text}"
            ),
            // Landlock does not hide the socket's path, and no new Unix socket can be made in
            // its box (a seccomp filter): the connect fails before the backend's own peer check
            // (no_new_privs) would refuse it.
            _ => assert!(text.contains("cannot connect"), "{text}"),
        }
        backend.shutdown().await;
    }
}

/// A socket's address holds 107 bytes of path: a data root deeper than that still gets its
/// socket, reached through the open folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_data_root_still_gets_its_socket() {
    let dir = tempfile::tempdir().unwrap();
    let mut root = dir.path().canonicalize().unwrap();
    while root.as_os_str().len() < 150 {
        root.push("a-rather-long-folder-name");
    }
    std::fs::create_dir_all(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
    let backend = backend::start(&root, Mode::Headless).await.unwrap();
    assert!(socket_path(&root).exists());
    let stream = paseo_headless::socket::connect(&root).unwrap();
    let std_stream = stream.into_std().unwrap();
    std_stream.set_nonblocking(false).unwrap();
    std_stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut c = Conn {
        read: BufReader::new(std_stream.try_clone().unwrap()),
        write: std_stream,
    };
    let c = tokio::task::spawn_blocking(move || {
        c.send(json!({"type": "hello", "product": env!("CARGO_PKG_VERSION"), "protocol": 1}));
        assert_eq!(c.next().unwrap()["type"], "hello");
        c
    })
    .await
    .unwrap();
    drop(c);
    backend.shutdown().await;
}
