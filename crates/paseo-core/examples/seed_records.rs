//! Writes N realistic agent records (in trees, over 20 workspaces) into a data root, for memory
//! and load measurements: `cargo run --release -p paseo-core --example seed_records -- HOME N`.
//! With `--crashed`, two thirds of them are left "running", as a killed app leaves them; with
//! `--archived`, every second tree is archived, as in the scroll bench's roots.

#[path = "../benches/support/seed.rs"]
mod seed;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let crashed = args.iter().any(|a| a == "--crashed");
    let archived = args.iter().any(|a| a == "--archived");
    let rest: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (Some(home), Some(n)) = (
        rest.first(),
        rest.get(1).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: seed_records HOME N [--crashed] [--archived]");
        std::process::exit(2);
    };
    let paths = seed::seed_archived(std::path::Path::new(home), n, if archived { 2 } else { 0 });
    let running = if crashed { seed::crash(&paths, 3) } else { 0 };
    println!("seeded {n} records into {home} ({running} left running)");
}
