//! The rules hash: a fingerprint of everything in a variant's merged configuration that changes
//! the game (not its name, description or Fairy-Stockfish name). Datasets and nets record it,
//! so data from other rules is never mixed in.

use crate::variant_file::VariantConfig;

/// The hash of `config`'s rules (its TOML text with the naming fields cleared).
pub(super) fn rules_hash(config: &VariantConfig) -> u64 {
    let mut hashed = config.clone();
    hashed.name.clear();
    hashed.description.clear();
    hashed.fairy_stockfish = None;
    fnv(toml::to_string(&hashed).unwrap_or_default().as_bytes())
}

/// 64-bit FNV-1a: stable across builds and platforms, unlike `std`'s hasher.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}
