//! The temp project (from `decode-test-support`) and where the binaries under test are.

use std::path::{Path, PathBuf};

pub use decode_test_support::TempProject;

/// The cargo target folder holding this test binary (`target/<profile>/deps/<exe>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .expect("test executable lives in target/<profile>/deps")
}

/// The `decode` binary built next to this test binary (same profile).
pub fn decode_bin() -> PathBuf {
    if let Ok(p) = std::env::var("DECODE_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join("decode"))
        .expect("test executable lives in target/<profile>/deps")
}
