//! A process kept alive across timing rounds and asked for one round at a
//! time: a line written to its stdin, a line read back from its stdout.
//! The bench keeps one per engine and mode (and one onnxruntime Python) so
//! that a round of every one of them runs within seconds of the others:
//! their ratios are then taken round by round, on the same state of a
//! machine whose speed drifts by tens of percent over minutes.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, bail};

pub struct Server {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts `command` with piped stdin and stdout; `what` names it in
    /// errors. Pipe its stderr to get its last line as the error of a
    /// request it dies on.
    pub fn start(mut command: Command, what: &str) -> Result<Server> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let stdin = child.stdin.take().context("piped stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("piped stdout")?);
        Ok(Server {
            what: what.into(),
            child,
            stdin: Some(stdin),
            stdout,
        })
    }

    /// Sends `request` (one line) and returns the line answered; `Err`
    /// with the process's last stderr line (when piped) if it exits
    /// instead.
    pub fn ask(&mut self, request: &str) -> Result<String> {
        let stdin = self.stdin.as_mut().context("the server was stopped")?;
        let sent = writeln!(stdin, "{request}").and_then(|_| stdin.flush());
        self.answer(sent.is_ok())
    }

    /// The next line the process prints unasked (a line it writes once
    /// ready); `Err` as [`Server::ask`]'s if it exits instead.
    pub fn read(&mut self) -> Result<String> {
        let running = self.stdin.is_some();
        self.answer(running)
    }

    /// The line read back when `sent`, else (or at end of output) the
    /// process's failure.
    fn answer(&mut self, sent: bool) -> Result<String> {
        let mut line = String::new();
        let read = if sent {
            self.stdout.read_line(&mut line).ok()
        } else {
            None
        };
        if read.unwrap_or(0) > 0 {
            return Ok(line.trim_end().to_string());
        }
        self.stdin = None;
        let status = self.child.wait()?;
        let mut stderr = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut stderr);
        }
        match stderr.lines().last() {
            Some(last) => bail!("{last}"),
            None => bail!("{} exited ({status}) without an answer", self.what),
        }
    }
}

impl Drop for Server {
    /// Closing stdin ends the serving loop; the process is then waited
    /// for, so that none outlives the bench (or keeps its memory).
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]).stderr(Stdio::piped());
        command
    }

    #[test]
    fn a_server_answers_each_request_in_turn() {
        let mut server =
            Server::start(sh("while read l; do echo \"got $l\"; done"), "echo server").unwrap();
        assert_eq!(server.ask("1").unwrap(), "got 1");
        assert_eq!(server.ask("two words").unwrap(), "got two words");
    }

    #[test]
    fn a_server_that_dies_reports_its_last_stderr_line() {
        let mut server = Server::start(
            sh("read l; echo planning >&2; echo 'planning: no such op' >&2; exit 2"),
            "failing server",
        )
        .unwrap();
        let err = server.ask("100").unwrap_err();
        assert_eq!(format!("{err:#}"), "planning: no such op");
        assert!(server.ask("100").is_err(), "a stopped server stays stopped");
    }

    #[test]
    fn a_line_printed_unasked_is_read_and_a_death_before_it_is_an_error() {
        let mut server = Server::start(sh("echo ready; read l; echo \"got $l\""), "ready").unwrap();
        assert_eq!(server.read().unwrap(), "ready");
        assert_eq!(server.ask("1").unwrap(), "got 1");
        let mut failing =
            Server::start(sh("echo 'planning: no such op' >&2; exit 2"), "x").unwrap();
        let err = failing.read().unwrap_err();
        assert_eq!(format!("{err:#}"), "planning: no such op");
    }
}
