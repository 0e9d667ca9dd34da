//! Links the cdylib with heapmpi's own symbol version script, so the
//! exported symbol set is spelled out in one reviewed file
//! (`linker-scripts/heapmpi.map`) rather than implied by attributes.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let map = format!("{dir}/linker-scripts/heapmpi.map");
    println!("cargo:rerun-if-changed={map}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={map}");
}
