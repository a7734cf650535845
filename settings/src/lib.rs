//! What every settings table of varzero shares, whichever crate owns the table: the list of
//! problems a check collects (so one run reports every bad key at once, each named), and the
//! `KEY=VALUE` override of the command line (`--param`, `--set`, a player spec's settings),
//! whose value is read as TOML. It sits below every crate that has settings (rules, search,
//! the trainer, the arena, the binary), so none of them depends on another for it.
#![forbid(unsafe_code)]

/// Everything out of range in a config, collected so that one run reports every bad key at
/// once, each named (`search.playouts: at least 1 (got 0)`).
#[derive(Debug, Default)]
pub struct Problems(pub Vec<String>);

impl Problems {
    /// Notes `key` unless `ok`.
    pub fn check(&mut self, ok: bool, key: &str, want: &str, got: impl std::fmt::Display) {
        if !ok {
            self.0.push(format!("{key}: {want} (got {got})"));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for Problems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("; "))
    }
}

/// `KEY=VALUE` split at the first `=`, both trimmed, the value read as a TOML value (`3`,
/// `true`, `"x"`, `[1, 2]`) and otherwise taken as a string (`draw`); `None` without an `=`.
///
/// ```
/// use varzero_settings::assignment;
/// let (k, v) = assignment("rules.stalemate = draw").unwrap();
/// assert_eq!((k, v.as_str()), ("rules.stalemate", Some("draw")));
/// assert_eq!(assignment("playouts=64").unwrap().1.as_integer(), Some(64));
/// assert!(assignment("playouts").is_none());
/// ```
pub fn assignment(s: &str) -> Option<(&str, toml::Value)> {
    let (key, value) = split_assignment(s)?;
    Some((key, value_of(value)))
}

/// `KEY=VALUE` split at the first `=`, both trimmed, the value as written (read it with
/// [`value_of`] when it is set).
pub fn split_assignment(s: &str) -> Option<(&str, &str)> {
    let (key, value) = s.split_once('=')?;
    Some((key.trim(), value.trim()))
}

/// A value as a TOML value, else as a string.
pub fn value_of(text: &str) -> toml::Value {
    format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_every_key() {
        let mut p = Problems::default();
        p.check(true, "a", "at least 1", 0);
        assert!(p.is_empty());
        p.check(false, "search.playouts", "at least 1", 0);
        p.check(false, "train.lr", "a positive number", "NaN");
        assert_eq!(
            p.to_string(),
            "search.playouts: at least 1 (got 0); train.lr: a positive number (got NaN)"
        );
    }

    #[test]
    fn values_are_toml_or_strings() {
        assert_eq!(value_of("0.5").as_float(), Some(0.5));
        assert_eq!(value_of("true").as_bool(), Some(true));
        assert_eq!(value_of("\"a b\"").as_str(), Some("a b"));
        assert_eq!(value_of("fsf@nodes=10").as_str(), Some("fsf@nodes=10"));
        let (k, v) = assignment(" gen0 = fsf@nodes=100 ").unwrap();
        assert_eq!((k, v.as_str()), ("gen0", Some("fsf@nodes=100")));
    }
}
