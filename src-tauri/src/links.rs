//! The webview never leaves Decode's own page (docs/window.md, "What you see is what
//! runs"). Text the model, a repository or a web page wrote may hold links; a click on
//! one only shows its full URL in the app's own dialog. The webview itself refuses
//! every navigation away from the app's page and every new window, however it was
//! started (a click, the context menu's "Open Link", a dropped link, script), and a
//! link reaches the person's browser only through [`open_in_browser`], after the
//! person confirmed the URL they were shown.

use std::process::{Command, Stdio};

use tauri::Url;

/// Whether `url` is Decode's own page: the frontend embedded in the binary and served
/// by Tauri's custom protocol (`tauri://localhost/…`; `http://tauri.localhost/…` where
/// a platform serves it over http).
pub(crate) fn own_page(url: &Url) -> bool {
    let host = url.host_str();
    match url.scheme() {
        "tauri" => host == Some("localhost"),
        "http" | "https" => host == Some("tauri.localhost") && url.port().is_none(),
        _ => false,
    }
}

/// The URL a person confirmed, if it may go to a browser: http or https, with a host.
pub(crate) fn browser_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "only http and https links open in the browser (this one is {}:)",
            url.scheme()
        ));
    }
    Ok(url)
}

/// Hands a confirmed link to the person's desktop (`xdg-open`), which opens their
/// browser. The child is not waited for in this thread.
pub(crate) fn open_in_browser(url: &Url) -> Result<(), String> {
    let mut child = Command::new("xdg-open")
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not start xdg-open to open the link: {e}"))?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    tracing::info!(url = %url, "link opened in the browser");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn only_the_apps_own_page_is_a_place_to_navigate() {
        assert!(own_page(&url("tauri://localhost/")));
        assert!(own_page(&url("tauri://localhost/index.html#x")));
        assert!(own_page(&url("http://tauri.localhost/index.html")));
        for away in [
            "https://example.com/",
            "http://localhost:1420/",
            "tauri://evil.example/",
            "http://tauri.localhost.evil.example/",
            "http://tauri.localhost:8080/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,<h1>Allow bash?</h1>",
            "about:blank",
        ] {
            assert!(!own_page(&url(away)), "{away}");
        }
    }

    #[test]
    fn only_http_links_reach_the_browser() {
        assert_eq!(
            browser_url(" https://example.com/a?b#c ").unwrap().as_str(),
            "https://example.com/a?b#c"
        );
        assert!(browser_url("http://127.0.0.1:8080/").is_ok());
        for bad in [
            "file:///home/me/.ssh/id_rsa",
            "javascript:alert(1)",
            "data:text/html,x",
            "vscode://extension/x",
            "not a url",
            "",
        ] {
            assert!(browser_url(bad).is_err(), "{bad}");
        }
    }
}
