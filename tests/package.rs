//! The Debian package, end to end: built the way the README says (`scripts/package.sh`, i.e.
//! `cargo tauri build --bundles deb`), inspected with dpkg-deb (files, control fields, declared
//! dependencies), unpacked into a throwaway root with `dpkg -x`, its launcher entry checked with
//! desktop-file-validate, and the unpacked binary started under Xvfb with a temp `PASEO_HOME`: the
//! window "Paseo" appears with the WM_CLASS the launcher entry names, and SIGTERM stops it with
//! status 0. The unpacked `paseo-headless` links no window stack and answers over MCP.
//!
//! One test on purpose. It packages the binaries the rest of the suite built and ran
//! (`PASEO_PACKAGE_BINARIES`, see scripts/package.sh: the second half of `tauri build`, Tauri's
//! bundler, on stripped copies), so a fresh machine compiles the stack once; the app is built in
//! production mode in every build (Cargo.toml), so what the package holds and does is what
//! `scripts/package.sh`'s release package holds and does, unoptimised.

mod common;

use common::{mcp_call, window_stack, Harness, TIMEOUT};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// The binary, and the name its icons and launcher entry use (`mainBinaryName`).
const BINARY: &str = "paseo-desktop";
/// The headless mode without the window stack, installed beside it.
const HEADLESS: &str = "paseo-headless";
/// Where scripts/package.sh leaves a package of prebuilt binaries, under the target folder.
const PACKAGE_DIR: &str = "package-prebuilt/debug/bundle/deb";
/// Bound for `scripts/package.sh` bundling prebuilt binaries (seconds on an idle machine).
const BUILD_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// The app icon's sizes in the hicolor theme (pixels), besides `128x128@2` and `scalable`.
const ICON_SIZES: [u32; 8] = [16, 24, 32, 48, 64, 128, 256, 512];
/// What the package must depend on: WebKitGTK 4.1, GTK 3 and the tray library (loaded at run
/// time, so no ELF dependency names it).
const RUNTIME_DEPENDS: [&str; 4] = [
    "libwebkit2gtk-4.1-0",
    "libgtk-3-0",
    "libayatana-appindicator3-1",
    // Not a library: the sandbox every agent runs in (SPEC 16).
    "bubblewrap",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo target folder this test was built in (so CARGO_TARGET_DIR is honoured).
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).to_path_buf()
}

/// The folder of the binaries this suite built and runs (`CARGO_BIN_EXE_…`).
fn binaries() -> PathBuf {
    let app = Path::new(env!("CARGO_BIN_EXE_paseo-desktop"));
    app.parent().unwrap_or(app).to_path_buf()
}

/// Runs `program args`, asserts it succeeded, and returns its stdout.
fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {program} (run scripts/setup.sh): {error}"));
    assert!(
        output.status.success(),
        "{program} {args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `scripts/package.sh` (bounded), its output in `target/package-build.log`.
async fn build_package() -> Duration {
    use std::os::unix::process::CommandExt;
    let log_path = target_dir().join("package-build.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let started = Instant::now();
    let mut child = Command::new(repo().join("scripts/package.sh"))
        .current_dir(repo())
        .env("PASEO_PACKAGE_BINARIES", binaries())
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0)
        .spawn()
        .expect("cannot start scripts/package.sh");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BUILD_TIMEOUT {
            // SAFETY: kill(2) on the process group of the build we started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!(
                "scripts/package.sh did not finish within {BUILD_TIMEOUT:?}; log {}:\n{}",
                log_path.display(),
                tail(&std::fs::read_to_string(&log_path).unwrap_or_default(), 40)
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(
        status.success(),
        "scripts/package.sh failed ({status}); log {}:\n{}",
        log_path.display(),
        tail(&output, 60)
    );
    started.elapsed()
}

/// Package names in a Depends-style field, without versions or alternatives' bars.
fn package_names(field: &str) -> Vec<String> {
    field
        .split([',', '|'])
        .filter_map(|item| item.split_whitespace().next())
        .map(|name| name.split(':').next().unwrap_or(name).to_string())
        .collect()
}

/// Every package `apt-cache` sees in the dependency tree of `packages` (themselves included).
fn dependency_closure(packages: &[String]) -> BTreeSet<String> {
    let mut args = vec![
        "depends",
        "--recurse",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
    ];
    args.extend(packages.iter().map(String::as_str));
    run("apt-cache", &args)
        .lines()
        .map(|line| {
            let line = line.trim();
            let line = line.rsplit(": ").next().unwrap_or(line);
            let line = line.trim_start_matches('|');
            line.trim_matches(['<', '>']).to_string()
        })
        .map(|name| name.split(':').next().unwrap_or(&name).to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

/// Width, height and PNG colour type of a PNG file (6 is RGBA).
fn png_header(path: &Path) -> (u32, u32, u8) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() > 26 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "{} is not a PNG",
        path.display()
    );
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (width, height, bytes[25])
}

/// The `[Desktop Entry]` group of a .desktop file as key/value pairs.
fn desktop_entry(text: &str) -> Vec<(String, String)> {
    let mut in_group = false;
    let mut entries = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_group = line == "[Desktop Entry]";
        } else if in_group && !line.starts_with('#') {
            if let Some((key, value)) = line.split_once('=') {
                entries.push((key.trim().to_string(), value.trim().to_string()));
            }
        }
    }
    entries
}

/// Bytes in the regular files under `path`, and the number of folders (`path` included).
fn size_of_tree(path: &Path) -> (u64, u64) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if !meta.is_dir() {
        return (meta.len(), 0);
    }
    std::fs::read_dir(path)
        .unwrap()
        .map(|entry| size_of_tree(&entry.unwrap().path()))
        .fold((0, 1), |(bytes, dirs), (b, d)| (bytes + b, dirs + d))
}

/// Checks an unpacked binary: an ELF without symbols or debug info, each library it needs
/// brought by the declared dependencies (`closure`, from `depends`). Returns those libraries.
fn check_binary(binary: &Path, closure: &BTreeSet<String>, depends: &str) -> Vec<String> {
    let binary_str = binary.to_str().unwrap();
    let bytes = std::fs::read(binary).unwrap();
    assert!(
        bytes.starts_with(b"\x7fELF"),
        "{binary_str}: not an ELF binary"
    );
    let sections = run("readelf", &["--section-headers", "--wide", binary_str]);
    for section in [".symtab", ".debug_info", ".debug_line"] {
        assert!(
            !sections.contains(&format!("{section} ")),
            "{binary_str} still has {section}"
        );
    }
    let dynamic = run("readelf", &["--dynamic", "--wide", binary_str]);
    let needed: Vec<String> = dynamic
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .filter_map(|line| line.split('[').nth(1)?.split(']').next())
        .map(str::to_string)
        .collect();
    for soname in &needed {
        let owners = run("dpkg", &["-S", &format!("*/{soname}")]);
        let owners: Vec<String> = owners
            .lines()
            .filter_map(|line| line.split(": ").next())
            .flat_map(package_names)
            .collect();
        assert!(
            owners.iter().any(|owner| closure.contains(owner)),
            "{binary_str}: {soname} (from {owners:?}) is not brought by the declared dependencies {depends}"
        );
    }
    needed
}

#[tokio::test]
async fn the_deb_installs_a_launchable_app_with_its_launcher_entry_and_icons() {
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("tauri.conf.json")).unwrap())
            .unwrap();
    let product = config["productName"].as_str().unwrap();
    let short_description = config["bundle"]["shortDescription"].as_str().unwrap();
    assert_eq!(config["mainBinaryName"], BINARY);

    // --- build ------------------------------------------------------------------------------
    let version = env!("CARGO_PKG_VERSION");
    let arch = run("dpkg", &["--print-architecture"]).trim().to_string();
    let deb = target_dir().join(format!("{PACKAGE_DIR}/{product}_{version}_{arch}.deb"));
    let before_build = SystemTime::now();
    let took = build_package().await;
    let deb_meta = std::fs::metadata(&deb)
        .unwrap_or_else(|_| panic!("scripts/package.sh made no {}", deb.display()));
    assert!(
        deb_meta.modified().unwrap() >= before_build,
        "{} was not rewritten by this build",
        deb.display()
    );
    let deb_str = deb.to_str().unwrap();

    // --- control fields ---------------------------------------------------------------------
    let field = |name: &str| {
        run("dpkg-deb", &["--field", deb_str, name])
            .trim()
            .to_string()
    };
    assert_eq!(field("Package"), "paseo");
    assert_eq!(field("Version"), version);
    assert_eq!(field("Architecture"), arch);
    assert_eq!(field("Section"), "devel");
    assert_eq!(field("Priority"), "optional");
    assert!(!field("Maintainer").is_empty(), "no Maintainer");
    let description = field("Description");
    let mut description_lines = description.lines();
    assert_eq!(description_lines.next(), Some(short_description));
    assert!(
        description_lines.count() >= 2,
        "no long description: {description}"
    );
    let installed_kib: u64 = field("Installed-Size").parse().unwrap();

    let depends = field("Depends");
    let declared = package_names(&depends);
    for needed in RUNTIME_DEPENDS {
        assert!(
            declared.iter().any(|name| name == needed),
            "Depends lacks {needed}: {depends}"
        );
    }
    let dev: Vec<_> = declared
        .iter()
        .filter(|name| name.ends_with("-dev"))
        .collect();
    assert!(
        dev.is_empty(),
        "Depends names -dev packages {dev:?}: {depends}"
    );

    // --- files ------------------------------------------------------------------------------
    let contents = run("dpkg-deb", &["--contents", deb_str]);
    let mut files = BTreeSet::new();
    for line in contents.lines() {
        let columns: Vec<&str> = line.split_whitespace().collect();
        let [mode, owner, .., path] = columns[..] else {
            panic!("unexpected dpkg-deb --contents line {line:?}");
        };
        assert_eq!(owner, "0/0", "{path} is not owned by root: {line}");
        let path = path.trim_start_matches("./").trim_end_matches('/');
        match mode.chars().next() {
            Some('d') => assert_eq!(mode, "drwxr-xr-x", "{line}"),
            Some('-') => {
                let expected = if path.starts_with("usr/bin/") {
                    "-rwxr-xr-x"
                } else {
                    "-rw-r--r--"
                };
                assert_eq!(mode, expected, "{line}");
                files.insert(path.to_string());
            }
            _ => panic!("unexpected entry in the package: {line}"),
        }
    }
    let hicolor = "usr/share/icons/hicolor";
    let mut expected: BTreeSet<String> = ICON_SIZES
        .iter()
        .map(|size| format!("{hicolor}/{size}x{size}/apps/{BINARY}.png"))
        .collect();
    expected.insert(format!("{hicolor}/128x128@2/apps/{BINARY}.png"));
    expected.insert(format!("{hicolor}/scalable/apps/{BINARY}.svg"));
    expected.insert(format!("usr/bin/{BINARY}"));
    expected.insert(format!("usr/bin/{HEADLESS}"));
    expected.insert(format!("usr/share/applications/{product}.desktop"));
    assert_eq!(files, expected, "the package's files");

    // --- installed into a throwaway root ----------------------------------------------------
    let root = tempfile::Builder::new()
        .prefix("paseo-deb-root-")
        .tempdir()
        .unwrap();
    run("dpkg", &["-x", deb_str, root.path().to_str().unwrap()]);
    // Installed-Size (KiB) covers the files, and at most a block for each folder besides.
    let (installed_bytes, folders) = size_of_tree(root.path());
    let files_kib = installed_bytes.div_ceil(1024);
    assert!(
        files_kib <= installed_kib && installed_kib <= files_kib + 4 * folders,
        "Installed-Size {installed_kib} KiB but the files take {installed_bytes} bytes in {folders} folders"
    );

    // Icons: drawn at the size their folder says, RGBA; the scalable one is our SVG source.
    for file in files.iter().filter(|file| file.starts_with(hicolor)) {
        let path = root.path().join(file);
        let folder = file[hicolor.len() + 1..].split('/').next().unwrap();
        if folder == "scalable" {
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(repo().join("icons/src/app.svg")).unwrap(),
                "{file}"
            );
            continue;
        }
        let (size, scale) = folder.split_once('@').unwrap_or((folder, "1"));
        let (w, h) = size.split_once('x').unwrap();
        let scale: u32 = scale.parse().unwrap();
        let want = (
            w.parse::<u32>().unwrap() * scale,
            h.parse::<u32>().unwrap() * scale,
        );
        let (width, height, colour) = png_header(&path);
        assert_eq!((width, height), want, "{file}");
        assert_eq!(colour, 6, "{file} is not RGBA");
    }

    // The launcher entry: valid, and naming the binary, the icon and the window's class.
    let desktop_file = root
        .path()
        .join(format!("usr/share/applications/{product}.desktop"));
    let validate = Command::new("desktop-file-validate")
        .arg(&desktop_file)
        .output()
        .expect("cannot run desktop-file-validate (run scripts/setup.sh)");
    let complaints = format!(
        "{}{}",
        String::from_utf8_lossy(&validate.stdout),
        String::from_utf8_lossy(&validate.stderr)
    );
    assert!(
        validate.status.success() && complaints.trim().is_empty(),
        "desktop-file-validate: {complaints}"
    );
    let entry = desktop_entry(&std::fs::read_to_string(&desktop_file).unwrap());
    let key = |name: &str| {
        entry
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .unwrap_or_else(|| panic!("the launcher entry has no {name}: {entry:?}"))
    };
    assert_eq!(key("Type"), "Application");
    assert_eq!(key("Name"), product);
    assert_eq!(key("Comment"), short_description);
    assert_eq!(key("Exec"), BINARY);
    assert_eq!(key("Icon"), BINARY);
    assert_eq!(key("Terminal"), "false");
    assert!(key("Categories").split(';').any(|c| c == "Development"));
    let wm_class = key("StartupWMClass").to_string();

    // The binaries: stripped, and every library they link comes with the declared
    // dependencies; the app built in production mode (a dev-mode context embeds the project
    // folder as the config's parent), paseo-headless linking no window stack.
    let closure = dependency_closure(&declared);
    let binary = root.path().join(format!("usr/bin/{BINARY}"));
    let binary_bytes = std::fs::read(&binary).unwrap();
    let project = repo().to_str().unwrap().as_bytes();
    assert!(
        !binary_bytes.windows(project.len()).any(|w| w == project),
        "the binary names the project folder {}: not a production build",
        repo().display()
    );
    let needed = check_binary(&binary, &closure, &depends);
    assert!(
        needed.iter().any(|n| n == "libwebkit2gtk-4.1.so.0"),
        "{needed:?}"
    );
    let headless = root.path().join(format!("usr/bin/{HEADLESS}"));
    let needed = check_binary(&headless, &closure, &depends);
    let stack = window_stack(&needed.join("\n"));
    assert!(stack.is_empty(), "{HEADLESS} links {stack:?}");
    // apt can install it here: dependencies resolvable, nothing removed.
    let simulate = run(
        "apt-get",
        &["install", "--simulate", "--no-install-recommends", deb_str],
    );
    assert!(
        !simulate.contains("\nRemv "),
        "installing would remove packages:\n{simulate}"
    );

    // --- launched from the throwaway root ---------------------------------------------------
    let h = Harness::new("package_launch");
    let mut app = h.spawn("paseo-desktop-installed", h.command(&binary));
    h.wait_for_lock_holder(app.pid()).await;
    h.wait_window_visible(product, true).await;
    let windows = h.windows(product, true).await;
    assert_eq!(windows.len(), 1, "windows titled {product}: {windows:?}");
    let xprop = run(
        "xprop",
        &[
            "-display",
            h.display(),
            "-id",
            &windows[0].to_string(),
            "WM_CLASS",
        ],
    );
    // WM_CLASS(STRING) = "paseo-desktop", "Paseo-desktop"
    let classes: Vec<&str> = xprop.split('"').skip(1).step_by(2).collect();
    assert_eq!(
        classes.first().copied(),
        Some(wm_class.as_str()),
        "StartupWMClass={wm_class} but the window says {xprop}"
    );
    app.signal(libc::SIGTERM);
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(
        status.code(),
        Some(0),
        "{status}; stderr:\n{}",
        app.stderr()
    );
    assert!(h.lock_is_free(), "the data root is still locked after exit");
    drop(app);

    // The installed paseo-headless answers over MCP, with no display at all.
    let hh = Harness::builder("package_headless").display(false).build();
    let mut headless_app = hh.spawn("paseo-headless-installed", hh.command(&headless));
    hh.wait_for_lock_holder(headless_app.pid()).await;
    hh.wait_for_mcp().await;
    let listed = mcp_call(hh.home(), "list_agents", serde_json::json!({}));
    assert_eq!(listed["total"], 0, "{listed}");
    headless_app.signal(libc::SIGTERM);
    let status = headless_app.wait_exit(TIMEOUT).await;
    assert_eq!(
        status.code(),
        Some(0),
        "{status}; stderr:\n{}",
        headless_app.stderr()
    );
    drop(headless_app);
    let left = hh.shutdown();
    assert!(left.is_empty(), "left behind: {left:?}");
    let left = h.shutdown();
    assert!(left.is_empty(), "left behind: {left:?}");

    eprintln!(
        "package: {} ({} KiB), installed {} KiB, binary {} KiB, built in {took:.0?}",
        deb.display(),
        deb_meta.len() / 1024,
        installed_bytes / 1024,
        binary_bytes.len() / 1024
    );
}
