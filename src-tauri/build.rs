//! Build script: runs tauri-build (config, icons, embedded UI, ACL) with the capabilities and the
//! app's own command permissions kept under src-tauri/.

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    println!("cargo:rerun-if-changed=src-tauri/permissions");
    // Once the app defines permissions for its own commands, the ACL checks every app command:
    // one missing from src-tauri/permissions/app.toml cannot be called from the webview.
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(
            tauri_build::AppManifest::new()
                .permissions_path_pattern("./src-tauri/permissions/**/*"),
        );
    if let Err(error) = tauri_build::try_build(attributes) {
        // Print the whole chain: tauri-build's errors name the offending file or permission.
        println!("cargo:warning=tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
