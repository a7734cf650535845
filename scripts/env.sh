# Sourced by the other scripts (and by a user who runs cargo directly):
#   source scripts/env.sh && cargo build --release
# Keeps build outputs and tools in a cache outside the clone, so CI and scripts reuse them.
export VARZERO_CACHE="${VARZERO_CACHE:-$HOME/.cache/varzero}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$VARZERO_CACHE/target}"
mkdir -p "$VARZERO_CACHE"
# The binary built by `cargo build --release`.
export VARZERO_BIN="${VARZERO_BIN:-$CARGO_TARGET_DIR/release/varzero}"
