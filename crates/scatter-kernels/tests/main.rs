//! The kernels' integration tests, one test binary: each `tests/<name>.rs`
//! is a module of it. Run one file's tests with
//! `cargo test --test kernels <name>::`.

mod error_messages;
mod grad_properties;
mod hostile;
mod oracle;
mod parallel;
mod properties;
mod split_choice;
