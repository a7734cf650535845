//! Small CSV tables of typed rows: the logs a run keeps beside its Parquet data (training
//! steps, ratings, matches, stage usage). One [`Row`] type per file writes and reads it, so a
//! renamed column is an error naming the file and the column, never a quietly empty chart.
//!
//! The format is deliberately plain (comma-separated, no quoting, one header line): every
//! field we write is a number, a bool or a player spec, and a spec never holds a comma.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;
use thiserror::Error;

/// Why a table cannot be read.
#[derive(Debug, Error)]
pub enum TableError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: empty (no header line)")]
    NoHeader { path: String },
    #[error("{path}: no column '{column}' (the header has: {header})")]
    MissingColumn {
        path: String,
        column: String,
        header: String,
    },
    #[error("{path}:{line}: {found} fields, the header has {expected}")]
    FieldCount {
        path: String,
        line: usize,
        found: usize,
        expected: usize,
    },
    #[error("{path}:{line}: column '{column}': cannot read '{value}'")]
    Value {
        path: String,
        line: usize,
        column: String,
        value: String,
    },
}

/// One line of a table. `COLUMNS` is the header; `line` writes the fields in that order, in the
/// precision the file has always had (the files are compared byte for byte across versions).
pub trait Row: Sized {
    const COLUMNS: &'static [&'static str];
    fn line(&self) -> String;
    fn read(fields: &Fields) -> Result<Self, TableError>;
}

/// The fields of one line, looked up by column name.
pub struct Fields<'a> {
    path: &'a str,
    line: usize,
    index: &'a HashMap<&'a str, usize>,
    values: Vec<&'a str>,
}

impl Fields<'_> {
    /// The field of `column`, parsed.
    pub fn get<T: FromStr>(&self, column: &str) -> Result<T, TableError> {
        let raw = self.raw(column)?;
        raw.trim().parse().map_err(|_| TableError::Value {
            path: self.path.to_string(),
            line: self.line,
            column: column.to_string(),
            value: raw.to_string(),
        })
    }

    /// The field of `column` as written.
    pub fn raw(&self, column: &str) -> Result<&str, TableError> {
        // Columns were checked against the header before any line is read.
        Ok(self.values[self.index[column]])
    }
}

/// The whole file: the header, then one line per row.
pub fn to_csv<R: Row>(rows: &[R]) -> String {
    let mut s = R::COLUMNS.join(",");
    s.push('\n');
    for r in rows {
        let _ = writeln!(s, "{}", r.line());
    }
    s
}

/// Parses `text` (the contents of `path`). Extra columns are allowed (a newer writer may add
/// one); a missing column is an error naming it. A last line without its newline that does not
/// parse is dropped: an append cut short by a kill, the only line that can be torn.
pub fn parse_csv<R: Row>(path: &Path, text: &str) -> Result<Vec<R>, TableError> {
    let p = path.display().to_string();
    let mut lines = text.lines().enumerate();
    let Some((_, head)) = lines.next() else {
        return Err(TableError::NoHeader { path: p });
    };
    let cols: Vec<&str> = head.split(',').map(str::trim).collect();
    let index: HashMap<&str, usize> = cols.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    for c in R::COLUMNS {
        if !index.contains_key(c) {
            return Err(TableError::MissingColumn {
                path: p,
                column: c.to_string(),
                header: head.to_string(),
            });
        }
    }
    let torn_tail = !text.ends_with('\n');
    let total = text.lines().count();
    let mut out = Vec::new();
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let values: Vec<&str> = l.split(',').collect();
        let last = i + 1 == total;
        let row = if values.len() != cols.len() {
            Err(TableError::FieldCount {
                path: p.clone(),
                line: i + 1,
                found: values.len(),
                expected: cols.len(),
            })
        } else {
            R::read(&Fields {
                path: &p,
                line: i + 1,
                index: &index,
                values,
            })
        };
        match row {
            Ok(r) => out.push(r),
            Err(_) if last && torn_tail => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The rows of `path`, or `None` when the file is not there (not yet written).
pub fn read_csv<R: Row>(path: &Path) -> Result<Option<Vec<R>>, TableError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_csv(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TableError::Io {
            path: path.display().to_string(),
            source: e,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct R {
        a: u32,
        b: f64,
    }

    impl Row for R {
        const COLUMNS: &'static [&'static str] = &["a", "b"];
        fn line(&self) -> String {
            format!("{},{:.2}", self.a, self.b)
        }
        fn read(f: &Fields) -> Result<Self, TableError> {
            Ok(R {
                a: f.get("a")?,
                b: f.get("b")?,
            })
        }
    }

    #[test]
    fn rows_round_trip_and_columns_are_found_by_name() {
        let rows = vec![R { a: 1, b: 0.5 }, R { a: 2, b: -1.25 }];
        let text = to_csv(&rows);
        assert_eq!(text, "a,b\n1,0.50\n2,-1.25\n");
        let p = Path::new("t.csv");
        assert_eq!(parse_csv::<R>(p, &text).unwrap(), rows);
        // Another order and an extra column read the same.
        let other = "b,c,a\n0.50,x,1\n";
        assert_eq!(parse_csv::<R>(p, other).unwrap(), vec![R { a: 1, b: 0.5 }]);
    }

    #[test]
    fn a_renamed_column_or_a_bad_value_is_an_error_naming_the_file() {
        let p = Path::new("logs/x.csv");
        let e = parse_csv::<R>(p, "a,bb\n1,2\n").unwrap_err().to_string();
        assert!(
            e.contains("logs/x.csv") && e.contains("no column 'b'"),
            "{e}"
        );
        let e = parse_csv::<R>(p, "a,b\nx,2\n").unwrap_err().to_string();
        assert!(e.contains("logs/x.csv:2") && e.contains("'a'"), "{e}");
        let e = parse_csv::<R>(p, "a,b\n1\n").unwrap_err().to_string();
        assert!(e.contains("1 fields"), "{e}");
        assert!(parse_csv::<R>(p, "").is_err());
        // Only a torn last line (no newline) is dropped.
        assert_eq!(parse_csv::<R>(p, "a,b\n1,2\n3,").unwrap().len(), 1);
        assert!(parse_csv::<R>(p, "a,b\n1,2\n3,\n").is_err());
    }

    #[test]
    fn a_missing_file_is_not_yet_written() {
        let t = std::env::temp_dir().join("varzero-table-none.csv");
        let _ = std::fs::remove_file(&t);
        assert!(read_csv::<R>(&t).unwrap().is_none());
    }
}
