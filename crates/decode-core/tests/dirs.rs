//! `Dirs::from_env` honours HOME and the XDG variables (one test: it sets the
//! process environment, so it lives alone in this binary).

use std::path::PathBuf;

use decode_core::dirs::{self, Dirs};

#[test]
fn from_env_honours_home_and_xdg() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::env::set_var("HOME", &home);
    for k in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] {
        std::env::remove_var(k);
    }
    let d = Dirs::from_env().unwrap();
    assert_eq!(d.home, home);
    assert_eq!(d.config, home.join(".config/decode"));
    assert_eq!(d.data, home.join(".local/share/decode"));
    assert_eq!(d.state, home.join(".local/state/decode"));

    std::env::set_var("XDG_CONFIG_HOME", tmp.path().join("cfg"));
    std::env::set_var("XDG_DATA_HOME", tmp.path().join("data"));
    std::env::set_var("XDG_STATE_HOME", tmp.path().join("state"));
    assert_eq!(dirs::config_dir().unwrap(), tmp.path().join("cfg/decode"));
    assert_eq!(dirs::data_dir().unwrap(), tmp.path().join("data/decode"));
    assert_eq!(dirs::state_dir().unwrap(), tmp.path().join("state/decode"));
    assert_eq!(dirs::home_dir().unwrap(), home);
    assert_eq!(PathBuf::from(std::env::var_os("HOME").unwrap()), home);
}
