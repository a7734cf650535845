//! `varzero probe`: a JSON-lines machine interface to the rules core (see docs/probe.md).

use anyhow::Result;

pub fn run() -> Result<()> {
    anyhow::bail!("probe is not implemented yet")
}
