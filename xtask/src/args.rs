//! Minimal `--flag value` parsing (the commands take a handful of options;
//! not worth a dependency).

use anyhow::{Result, bail};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Options that take no value (`--all-ops`, `--help`); read them with
/// [`Args::switch`].
const SWITCHES: &[&str] = &["all-ops", "help", "verbose"];

pub struct Args {
    values: BTreeMap<String, String>,
}

impl Args {
    /// Accepts `--name value` and `--name=value`.
    pub fn parse(argv: impl Iterator<Item = String>) -> Result<Args> {
        let mut values = BTreeMap::new();
        let mut argv = argv.peekable();
        while let Some(arg) = argv.next() {
            let Some(flag) = arg.strip_prefix("--") else {
                bail!("unexpected argument {arg:?} (options are --name VALUE)");
            };
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None if SWITCHES.contains(&flag) => (flag.to_string(), String::new()),
                None => match argv.next() {
                    Some(v) => (flag.to_string(), v),
                    None => bail!("option --{flag} needs a value"),
                },
            };
            if values.insert(format!("--{name}"), value).is_some() {
                bail!("option --{name} given twice");
            }
        }
        Ok(Args { values })
    }

    pub fn take(&mut self, name: &str) -> Option<String> {
        self.values.remove(name)
    }

    pub fn path(&mut self, name: &str) -> Option<PathBuf> {
        self.take(name).map(PathBuf::from)
    }

    /// Whether the value-less option `name` (one of `SWITCHES`) was given.
    pub fn switch(&mut self, name: &str) -> bool {
        self.values.remove(name).is_some()
    }

    /// Fails on options nobody consumed (typos).
    pub fn finish(self) -> Result<()> {
        if let Some(name) = self.values.keys().next() {
            bail!("unknown option {name} (see `cargo xtask help`)");
        }
        Ok(())
    }
}
