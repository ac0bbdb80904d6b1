//! What the binary prints for people and scripts: stdout for results, stderr for
//! diagnostics. (Library crates log through `tracing` instead.)

use std::io::Write;
use std::process::ExitCode;

/// One line (or block) of results on stdout. A closed pipe is not an error worth a
/// panic. Control characters and escape sequences in it (from a project, a model or
/// the network) are shown escaped, never sent to the terminal raw.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", decode_core::display::sanitize(text));
}

/// One JSON line on stdout, with what a terminal could act on written as JSON
/// escapes.
pub fn json(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", decode_core::display::json_line(line));
}

/// One diagnostic line on stderr, escaped like [`out`].
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", decode_core::display::sanitize(text));
}

/// A usage error: one line on stderr, exit code 2.
pub fn usage_error(line: &str) -> ExitCode {
    err(line);
    ExitCode::from(2)
}
