//! Running a test that changes process-wide state in a child process of
//! the test binary, so the other tests (threads of the same process) never
//! see the change.

/// Set in the child to the test it runs.
const CHILD: &str = "INTEGRATION_TESTS_OWN_PROCESS";

/// Runs `body` in a child process: there when this process is the child
/// `test` (the calling test's path in the binary, `module::name`) started,
/// else starts that child and asserts it passed.
pub fn in_own_process(test: &str, body: impl FnOnce()) {
    if std::env::var(CHILD).is_ok_and(|t| t == test) {
        body();
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, test)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} in its own process: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
