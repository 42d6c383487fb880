//! Golden conformance harness for ONNX node tests.
//!
//! Reads ONNX node-test directories (`model.onnx` plus
//! `test_data_set_*/{input,output}_*.pb`), runs them through one or more named
//! frameworks (decluttered and optimized), compares outputs with the ONNX
//! backend tolerances, and reports. It knows nothing of any particular
//! operator: which tests to run is the caller's business, driven by the
//! pinned manifest ([`manifest`], [`fetch`]) and local corpora.

#![deny(missing_docs)]

pub mod all_ops;
pub mod compare;
pub mod expected_failures;
pub mod fetch;
pub mod framework;
pub mod generated;
pub mod layout;
pub mod manifest;
pub mod never_worse;
pub mod node_test;
pub mod outcome;
pub mod panic_guard;
pub mod real_models;
pub mod recurrent;
pub mod report;
pub mod run;
pub mod stop;
pub mod suite;
mod tables;
pub mod tensor_proto;
pub mod wheel_file;

pub use expected_failures::{ExpectedFailure, ExpectedFailures, Gate};
pub use framework::{Framework, InputFacts, LoadOnnx, Mode, Tract};
pub use manifest::{Manifest, Release};
pub use never_worse::{GateFrameworks, NeverWorse, Pairing};
pub use node_test::NodeTest;
pub use outcome::{FrameworkOutcome, Outcome, Phase};
pub use report::{Format, Report};
pub use suite::{CaseResult, NamedFramework, Suite, run_suites};
