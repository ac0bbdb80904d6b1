//! The config file, what a run resolves to (flags > config > defaults; keys from env,
//! DECODE_API_KEY, then the keyring), and the keyring through keyring's mock store.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use decode_engine::config::{
    resolve, ApiKey, Config, ConfigError, KeyError, KeyOrigin, KeyringStore, Overrides,
    SecretStore, SetupError,
};
use decode_engine::providers::ProviderKind;

/// An in-memory store (the keyring's contract without a keyring).
#[derive(Default)]
struct MemStore {
    keys: Mutex<HashMap<ProviderKind, ApiKey>>,
    fail: Option<KeyError>,
}

impl SecretStore for MemStore {
    fn get(&self, kind: ProviderKind) -> Result<Option<ApiKey>, KeyError> {
        if let Some(e) = &self.fail {
            return Err(e.clone());
        }
        Ok(self.keys.lock().unwrap().get(&kind).cloned())
    }
    fn set(&self, kind: ProviderKind, key: &ApiKey) -> Result<(), KeyError> {
        self.keys.lock().unwrap().insert(kind, key.clone());
        Ok(())
    }
    fn delete(&self, kind: ProviderKind) -> Result<bool, KeyError> {
        Ok(self.keys.lock().unwrap().remove(&kind).is_some())
    }
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn cfg(json: &str) -> Config {
    Config::parse(Path::new("config.json"), json).unwrap().0
}

#[test]
fn a_missing_file_is_the_empty_config() {
    let dir = tempfile::tempdir().unwrap();
    let (c, w) = Config::load(dir.path()).unwrap();
    assert_eq!(c, Config::default());
    assert!(w.is_empty());
}

#[test]
fn the_documented_keys_are_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"provider":"openai","model":"qwen2.5-coder:7b","baseUrl":"http://localhost:11434/v1",
            "maxTurns":12,"contextTokens":32768,"colour":"blue"}"#,
    )
    .unwrap();
    let (c, warnings) = Config::load(dir.path()).unwrap();
    assert_eq!(c.provider, Some(ProviderKind::Openai));
    assert_eq!(c.model.as_deref(), Some("qwen2.5-coder:7b"));
    assert_eq!(c.base_url.as_deref(), Some("http://localhost:11434/v1"));
    assert_eq!(c.max_turns, Some(12));
    assert_eq!(c.context_tokens, Some(32768));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("unknown key `colour`"));
}

#[test]
fn a_malformed_file_is_an_error_with_line_and_column_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let text = "{\n  \"provider\": \"openai\",\n  \"model\": gpt-4\n}\n";
    std::fs::write(&path, text).unwrap();
    let e = Config::load(dir.path()).unwrap_err();
    let ConfigError::Malformed { line, column, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!((*line, *column), (3, 12));
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("{}:3:12: ", path.display())),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    let e = Config::parse(Path::new("c.json"), r#"{"provider": "mistral"}"#).unwrap_err();
    assert!(e.to_string().contains("unknown provider `mistral`"), "{e}");
    let e = Config::parse(Path::new("c.json"), r#"{"maxTurns": "ten"}"#).unwrap_err();
    assert!(e.to_string().contains("c.json:1:"), "{e}");
}

#[test]
fn flags_override_the_config_and_keys_come_from_the_env_first() {
    let store = MemStore::default();
    store
        .set(ProviderKind::Anthropic, &ApiKey::new("from-keyring"))
        .unwrap();
    let c = cfg(r#"{"provider":"anthropic","model":"claude-x","maxTurns":7}"#);

    let r = resolve(
        &c,
        &Overrides::default(),
        &env(&[]),
        &store,
        Path::new("cfg"),
    )
    .unwrap();
    assert_eq!(r.provider.kind, ProviderKind::Anthropic);
    assert_eq!(r.provider.model, "claude-x");
    assert_eq!(r.provider.base_url, "https://api.anthropic.com/v1");
    assert_eq!(r.max_turns, 7);
    assert_eq!(r.key_origin, KeyOrigin::Keyring);
    assert_eq!(
        r.provider.api_key.as_ref().unwrap().expose(),
        "from-keyring"
    );

    let r = resolve(
        &c,
        &Overrides::default(),
        &env(&[("DECODE_API_KEY", "generic")]),
        &store,
        Path::new("cfg"),
    )
    .unwrap();
    assert_eq!(r.key_origin, KeyOrigin::Env("DECODE_API_KEY".into()));
    let r = resolve(
        &c,
        &Overrides::default(),
        &env(&[
            ("DECODE_API_KEY", "generic"),
            ("ANTHROPIC_API_KEY", "specific"),
        ]),
        &store,
        Path::new("cfg"),
    )
    .unwrap();
    assert_eq!(r.provider.api_key.unwrap().expose(), "specific");

    // --provider naming another provider starts from that provider's defaults.
    let o = Overrides {
        provider: Some(ProviderKind::Gemini),
        ..Overrides::default()
    };
    let r = resolve(
        &c,
        &o,
        &env(&[("GEMINI_API_KEY", "g")]),
        &store,
        Path::new("cfg"),
    )
    .unwrap();
    assert_eq!(r.provider.model, "gemini-2.5-flash");
    assert_eq!(
        r.provider.base_url,
        "https://generativelanguage.googleapis.com/v1beta"
    );

    let o = Overrides {
        model: Some("claude-y".into()),
        base_url: Some("http://127.0.0.1:9/v1".into()),
        max_turns: Some(3),
        ..Overrides::default()
    };
    let r = resolve(&c, &o, &env(&[]), &store, Path::new("cfg")).unwrap();
    assert_eq!(r.provider.model, "claude-y");
    assert_eq!(r.provider.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(r.max_turns, 3);
}

#[test]
fn local_openai_compatible_servers_need_no_key_but_a_model() {
    let store = MemStore {
        fail: Some(KeyError::Unavailable {
            var: "OPENAI_API_KEY".into(),
            detail: "no bus".into(),
        }),
        ..MemStore::default()
    };
    let c =
        cfg(r#"{"provider":"openai","baseUrl":"http://localhost:11434/v1","model":"llama3.1"}"#);
    let r = resolve(
        &c,
        &Overrides::default(),
        &env(&[]),
        &store,
        Path::new("cfg"),
    )
    .unwrap();
    assert!(r.provider.api_key.is_none());
    assert_eq!(r.key_origin, KeyOrigin::None);

    let c = cfg(r#"{"provider":"openai","baseUrl":"http://localhost:11434/v1"}"#);
    let e = resolve(
        &c,
        &Overrides::default(),
        &env(&[]),
        &store,
        Path::new("cfg"),
    )
    .unwrap_err();
    assert!(matches!(e, SetupError::NoModel { .. }));
    assert!(e.to_string().contains("pass --model"), "{e}");
}

#[test]
fn missing_keys_and_providers_are_one_sentence_each() {
    let store = MemStore::default();
    let e = resolve(
        &Config::default(),
        &Overrides::default(),
        &env(&[]),
        &store,
        Path::new("/c/config.json"),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no model provider is configured: pass --provider (gemini, anthropic, openai or script) or set \"provider\" in /c/config.json"
    );
    // A provider key in the environment picks that provider.
    let r = resolve(
        &Config::default(),
        &Overrides::default(),
        &env(&[("GEMINI_API_KEY", "k")]),
        &store,
        Path::new("c"),
    )
    .unwrap();
    assert_eq!(r.provider.kind, ProviderKind::Gemini);

    let c = cfg(r#"{"provider":"anthropic"}"#);
    let e = resolve(&c, &Overrides::default(), &env(&[]), &store, Path::new("c")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no API key for anthropic: set ANTHROPIC_API_KEY (or DECODE_API_KEY), or store one with `decode key set anthropic`"
    );
    let broken = MemStore {
        fail: Some(KeyError::Unavailable {
            var: "ANTHROPIC_API_KEY".into(),
            detail: "no D-Bus session".into(),
        }),
        ..MemStore::default()
    };
    let e = resolve(
        &c,
        &Overrides::default(),
        &env(&[]),
        &broken,
        Path::new("c"),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .ends_with("(the system keyring could not be read: no D-Bus session)"),
        "{e}"
    );
}

#[test]
fn the_script_provider_needs_no_key() {
    let o = Overrides {
        provider: Some(ProviderKind::Script),
        script: Some("demo.json".into()),
        ..Overrides::default()
    };
    let r = resolve(
        &Config::default(),
        &o,
        &env(&[]),
        &MemStore::default(),
        Path::new("c"),
    )
    .unwrap();
    assert_eq!(r.provider.script.as_deref(), Some(Path::new("demo.json")));
    assert!(r.provider.api_key.is_none());
}

/// keyring's mock store: no persistence across entries, errors injectable per entry.
#[test]
fn keyring_entries_through_the_mock_store() {
    use keyring::mock::MockCredential;
    keyring::set_default_credential_builder(keyring::mock::default_credential_builder());

    let entry = KeyringStore::entry(ProviderKind::Openai).unwrap();
    assert_eq!(
        KeyringStore::get_from(ProviderKind::Openai, &entry).unwrap(),
        None
    );
    KeyringStore::set_on(ProviderKind::Openai, &entry, &ApiKey::new("sk-mock")).unwrap();
    assert_eq!(
        KeyringStore::get_from(ProviderKind::Openai, &entry)
            .unwrap()
            .unwrap()
            .expose(),
        "sk-mock"
    );
    assert!(KeyringStore::delete_on(ProviderKind::Openai, &entry).unwrap());
    assert!(!KeyringStore::delete_on(ProviderKind::Openai, &entry).unwrap());

    // No Secret Service (no D-Bus): one sentence pointing at the environment variable.
    let mock: &MockCredential = entry.get_credential().downcast_ref().unwrap();
    mock.set_error(keyring::Error::PlatformFailure(
        "failed to autolaunch D-Bus session bus".into(),
    ));
    let e = KeyringStore::get_from(ProviderKind::Openai, &entry).unwrap_err();
    assert!(matches!(e, KeyError::Unavailable { .. }));
    assert_eq!(
        e.to_string(),
        "the system keyring is not available (failed to autolaunch D-Bus session bus): set OPENAI_API_KEY (or DECODE_API_KEY) in the environment instead"
    );
    // A locked or absent keyring.
    mock.set_error(keyring::Error::NoStorageAccess(
        "no default collection".into(),
    ));
    let e = KeyringStore::set_on(ProviderKind::Openai, &entry, &ApiKey::new("x")).unwrap_err();
    assert!(e.to_string().contains("locked"), "{e}");
    assert!(e.to_string().contains("OPENAI_API_KEY"), "{e}");

    // Through the SecretStore trait (each call makes a fresh mock entry: nothing stored).
    assert_eq!(KeyringStore.get(ProviderKind::Gemini).unwrap(), None);
    KeyringStore
        .set(ProviderKind::Gemini, &ApiKey::new("g"))
        .unwrap();
}
