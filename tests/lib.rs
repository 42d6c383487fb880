//! Shared helpers of the workspace's integration tests.

#[path = "golden.rs"]
pub mod golden;
