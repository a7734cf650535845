// An rpath to the libtorch libraries in this crate's test binaries, so `cargo test` runs them
// without LD_LIBRARY_PATH (the `varzero` binary gets the same from the root build.rs).
fn main() {
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
