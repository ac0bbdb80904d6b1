//! What the binary prints for people and scripts: stdout for results, stderr for
//! diagnostics. (Library crates log through `tracing` instead.)

use std::io::Write;
use std::process::ExitCode;

/// One line (or block) of results on stdout. A closed pipe is not an error worth a panic.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// One diagnostic line on stderr.
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// A usage error: one line on stderr, exit code 2.
pub fn usage_error(line: &str) -> ExitCode {
    err(line);
    ExitCode::from(2)
}
