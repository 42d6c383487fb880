//! The snapshot macro of the integration tests.

/// `insta::assert_snapshot!` into `tests/snapshots/`, wherever insta thinks
/// the workspace is (it falls back to the package dir when `cargo metadata`
/// fails, e.g. while another workspace member is mid-edit).
macro_rules! snap {
    ($name:expr, $value:expr $(,)?) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
        settings.bind(|| insta::assert_snapshot!($name, $value));
    }};
}
