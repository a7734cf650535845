// Puts an rpath to the libtorch libraries into the binary, so `varzero` runs without
// LD_LIBRARY_PATH; with the `cuda` feature also forces the link of libtorch_cuda (rustc links
// with --as-needed, which would silently drop it since nothing references it directly).
fn main() {
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
    if std::env::var("CARGO_FEATURE_CUDA").is_ok() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
}
