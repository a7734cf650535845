# Sourced by the other scripts (and by a user who runs cargo directly):
#   source scripts/env.sh && cargo build --release
# Keeps build outputs and tools in a cache outside the clone, so CI and scripts reuse them.
export VARZERO_CACHE="${VARZERO_CACHE:-$HOME/.cache/varzero}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$VARZERO_CACHE/target}"
mkdir -p "$VARZERO_CACHE"
# The binary built by `cargo build --release`.
export VARZERO_BIN="${VARZERO_BIN:-$CARGO_TARGET_DIR/release/varzero}"
# libtorch for tch 0.24 (scripts/setup-libtorch installs it when missing; LIBTORCH overrides).
if [ -z "${LIBTORCH:-}" ]; then
  LIBTORCH="$("$(dirname "${BASH_SOURCE[0]}")/setup-libtorch" | tail -n 1)" || { echo "env.sh: libtorch setup failed" >&2; return 1 2>/dev/null || exit 1; }
  export LIBTORCH
fi
export LIBTORCH_CXX11_ABI="${LIBTORCH_CXX11_ABI:-1}"
