//! `web_fetch` against a local wiremock server: HTML → Markdown, text types, the size
//! cap, redirects (loops, other hosts), timeouts, refused types, HTTP errors.

use crate::tools_support;

use std::time::{Duration, Instant};

use decode_engine::tools::{ToolHandler, WebFetchTool, WEB_FETCH_MAX_BYTES};
use decode_policy::Mode;
use serde_json::json;
use tools_support::{public_uri, Project};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn fetch(tool: &WebFetchTool, url: &str) -> decode_engine::tools::ToolResult {
    let p = Project::new();
    tool.execute(json!({ "url": url }), &p.ctx(Mode::Default))
        .await
}

#[tokio::test]
async fn html_becomes_markdown() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<!doctype html><html><head><title>T</title><style>p{}</style><script>evil()</script></head>\
             <body><h1>Title</h1><p>Some <strong>bold</strong> text and a <a href=\"https://x.test/a\">link</a>.</p>\
             <ul><li>one</li><li>two</li></ul></body></html>",
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    let r = fetch(
        &WebFetchTool::new(),
        &format!("{}/page", public_uri(&server)),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("# Title"), "{}", r.content);
    assert!(r.content.contains("**bold**"), "{}", r.content);
    assert!(
        r.content.contains("[link](https://x.test/a)"),
        "{}",
        r.content
    );
    assert!(r.content.contains("one") && r.content.contains("two"));
    assert!(!r.content.contains("evil()"), "{}", r.content);
    assert!(!r.content.contains("<p>"), "{}", r.content);
}

#[tokio::test]
async fn json_and_text_pass_through() {
    let server = MockServer::start().await;
    Mock::given(path("/data.json"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(r#"{"a": [1, 2]}"#, "application/json"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/plain"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("<b>not html</b>", "text/plain"))
        .mount(&server)
        .await;
    let tool = WebFetchTool::new();
    let r = fetch(&tool, &format!("{}/data.json", public_uri(&server))).await;
    assert!(!r.is_error);
    assert!(r.content.ends_with(r#"{"a": [1, 2]}"#), "{}", r.content);
    let r = fetch(&tool, &format!("{}/plain", public_uri(&server))).await;
    assert!(r.content.ends_with("<b>not html</b>"), "{}", r.content);
}

#[tokio::test]
async fn other_types_are_refused() {
    let server = MockServer::start().await;
    Mock::given(path("/img.png"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(vec![0x89u8, b'P', b'N', b'G', 0, 0], "image/png"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/blob"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(vec![1u8, 0, 2, 0], "application/octet-stream"),
        )
        .mount(&server)
        .await;
    let tool = WebFetchTool::new();
    let r = fetch(&tool, &format!("{}/img.png", public_uri(&server))).await;
    assert!(r.is_error);
    assert!(r.content.contains("image/png"), "{}", r.content);
    let r = fetch(&tool, &format!("{}/blob", public_uri(&server))).await;
    assert!(r.is_error);
    assert!(r.content.contains("binary"), "{}", r.content);
}

#[tokio::test]
async fn big_bodies_stop_at_the_cap() {
    let server = MockServer::start().await;
    let body = "a".repeat(WEB_FETCH_MAX_BYTES + 1024 * 1024);
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/plain"))
        .mount(&server)
        .await;
    let r = fetch(
        &WebFetchTool::new(),
        &format!("{}/big", public_uri(&server)),
    )
    .await;
    assert!(!r.is_error, "{}", &r.content[..200]);
    assert!(
        r.content.contains("larger than 5 MB"),
        "{}",
        &r.content[r.content.len() - 300..]
    );
    assert!(r.content.contains("content cut at 100000 characters"));
    assert!(r.content.len() < 200_000);
}

#[tokio::test]
async fn redirect_loops_fail_clearly() {
    let server = MockServer::start().await;
    Mock::given(path("/loop"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/loop"))
        .mount(&server)
        .await;
    let r = fetch(
        &WebFetchTool::new(),
        &format!("{}/loop", public_uri(&server)),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("too many redirects"), "{}", r.content);
}

/// Every redirect is judged by the gate before it is followed: allowed ones are
/// followed, denied ones stop the call, asked ones go back to the model.
#[tokio::test]
async fn every_redirect_is_judged_by_the_gate() {
    let server = MockServer::start().await;
    Mock::given(path("/old"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/new"))
        .mount(&server)
        .await;
    Mock::given(path("/new"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("arrived", "text/plain"))
        .mount(&server)
        .await;
    Mock::given(path("/redir"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/private/x"))
        .mount(&server)
        .await;
    Mock::given(path("/private/x"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("secret", "text/plain"))
        .mount(&server)
        .await;
    Mock::given(path("/asked"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/review/x"))
        .mount(&server)
        .await;
    let base = public_uri(&server);
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        &json!({"permissions": {
            "deny": [format!("web_fetch({base}/private/*)")],
            "ask": [format!("web_fetch({base}/review/*)")],
        }})
        .to_string(),
    );
    let tool = WebFetchTool::new();
    let ctx = p.ctx(Mode::Auto);
    let run = |url: String| {
        let ctx = ctx.clone();
        let tool = &tool;
        async move { tool.execute(json!({ "url": url }), &ctx).await }
    };
    let r = run(format!("{base}/old")).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.ends_with("arrived"), "{}", r.content);
    assert!(
        r.content.contains("/new"),
        "the final URL is shown: {}",
        r.content
    );

    // A same-host redirect into a denied path is not followed.
    let r = run(format!("{base}/redir")).await;
    assert!(r.is_error, "{}", r.content);
    assert!(r.content.contains("denies"), "{}", r.content);
    assert!(!r.content.contains("secret"), "{}", r.content);

    // One the gate asks about goes back to the model as a new call to make.
    let r = run(format!("{base}/asked")).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(
        r.content.contains(&format!("{base}/review/x")),
        "{}",
        r.content
    );
    assert!(r.content.contains("asks"), "{}", r.content);

    // Another port on the same host counts as another URL too.
    let other = MockServer::start().await;
    Mock::given(path("/hop"))
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", format!("{base}/private/x")),
        )
        .mount(&other)
        .await;
    let r = run(format!("{}/hop", public_uri(&other))).await;
    assert!(r.is_error && !r.content.contains("secret"), "{}", r.content);
}

#[tokio::test]
async fn slow_servers_time_out() {
    let server = MockServer::start().await;
    Mock::given(path("/slow"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("late", "text/plain")
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let started = Instant::now();
    let r = fetch(
        &WebFetchTool::with_timeout(Duration::from_millis(500)),
        &format!("{}/slow", public_uri(&server)),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(r.is_error);
    assert!(r.content.contains("timed out"), "{}", r.content);
}

#[tokio::test]
async fn http_errors_and_bad_urls_are_errors() {
    let server = MockServer::start().await;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_raw("no such page", "text/plain"))
        .mount(&server)
        .await;
    let tool = WebFetchTool::new();
    let r = fetch(&tool, &format!("{}/missing", public_uri(&server))).await;
    assert!(r.is_error);
    assert!(r.content.contains("404"), "{}", r.content);
    assert!(r.content.contains("no such page"));

    let r = fetch(&tool, "ftp://example.com/file").await;
    assert!(r.is_error);
    assert!(r.content.contains("only http and https"), "{}", r.content);
    assert!(tool
        .validate(&json!({"url": "file:///etc/passwd"}))
        .is_err());

    // Nothing listens there.
    let r = fetch(&tool, "http://127.0.0.1:9/").await;
    assert!(r.is_error);
}

/// A server that counts the requests it gets (to prove nothing was fetched).
async fn counting_server(body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "text/plain"))
        .mount(&server)
        .await;
    server
}

/// web_fetch of a metadata address, of a name that resolves to loopback, asks
/// (through the gate's one path); denied, nothing is fetched; allowed once, it is.
#[tokio::test]
async fn private_addresses_and_names_that_resolve_to_them_ask() {
    use decode_core::decision::{DecisionAnswer, DecisionRequest};
    use decode_engine::tools::{call_tool, handler};
    use decode_policy::{Tool, Verdict};
    use tools_support::Scripted;

    let p = Project::new();
    // The metadata address: asked, denied, never connected to.
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = p.ctx_with(Mode::Auto, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert!(
        o.decision.reason.contains("cloud metadata"),
        "{}",
        o.decision.reason
    );
    assert!(!o.ran);
    assert_eq!(s.asked().len(), 1);

    // A name that resolves to 127.0.0.1 (`localhost`, by the system resolver).
    let server = counting_server("inside").await;
    let port = server.address().port();
    let url = format!("http://localhost:{port}/x");
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = p.ctx_with(Mode::Auto, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert!(
        o.decision.reason.contains("resolves to"),
        "{}",
        o.decision.reason
    );
    assert_eq!(
        o.decision.always_allow_rules,
        vec!["net(domain:localhost)".to_string()]
    );
    assert!(matches!(&s.asked()[0], DecisionRequest::Permission { .. }));
    assert!(!o.ran);
    assert!(server.received_requests().await.unwrap().is_empty());

    // Allowed once: fetched from the address that was judged.
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert!(o.ran && !o.result.is_error, "{}", o.result.content);
    assert!(o.result.content.ends_with("inside"), "{}", o.result.content);

    // Bypass mode allows it without asking.
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Bypass, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert!(o.ran && !o.result.is_error, "{}", o.result.content);
    assert!(s.asked().is_empty());
}

/// A redirect from a public page to a private address or a name that resolves to
/// one is not followed: the model is told the gate asks.
#[tokio::test]
async fn redirects_to_private_addresses_ask() {
    let inside = counting_server("secret").await;
    let port = inside.address().port();
    let server = MockServer::start().await;
    for (from, to) in [
        ("/meta", "http://169.254.169.254/latest/".to_string()),
        ("/loop", format!("http://127.0.0.1:{port}/x")),
        ("/name", format!("http://localhost:{port}/x")),
        ("/v6", format!("http://[::ffff:127.0.0.1]:{port}/x")),
    ] {
        Mock::given(path(from))
            .respond_with(ResponseTemplate::new(302).insert_header("location", to.as_str()))
            .mount(&server)
            .await;
    }
    let base = public_uri(&server);
    let tool = WebFetchTool::new();
    for from in ["/meta", "/loop", "/name", "/v6"] {
        let r = fetch(&tool, &format!("{base}{from}")).await;
        assert!(!r.content.contains("secret"), "{from}: {}", r.content);
        assert!(r.content.contains("asks"), "{from}: {}", r.content);
        assert!(r.content.contains("address"), "{from}: {}", r.content);
    }
    assert!(inside.received_requests().await.unwrap().is_empty());
}

/// A `net(domain:…)` deny rule stops web_fetch of that host, in bypass mode too.
#[tokio::test]
async fn a_net_deny_rule_stops_web_fetch() {
    use decode_engine::tools::{call_tool, handler};
    use decode_policy::{Tool, Verdict};

    let server = counting_server("page").await;
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(domain:web.test)"]}}"#,
    );
    let ctx = p.ctx(Mode::Bypass);
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({"url": format!("{}/x", public_uri(&server))}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Deny, "{}", o.decision.reason);
    assert!(!o.ran);
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// "Always allow" of a web_fetch to a name that resolves to loopback saves
/// `net(domain:HOST)`; the next call is allowed without asking; a wildcard rule
/// over that name would not have lifted it.
#[tokio::test]
async fn always_allow_saves_a_net_rule_that_lifts_the_private_ask() {
    use decode_core::decision::DecisionAnswer;
    use decode_engine::tools::{call_tool, handler};
    use decode_policy::{Tool, Verdict};
    use tools_support::Scripted;

    let server = counting_server("dev server").await;
    let url = format!("http://localhost:{}/", server.address().port());
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        rules: vec![],
        target: None,
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert!(
        o.ran && o.result.content.ends_with("dev server"),
        "{}",
        o.result.content
    );
    let saved: serde_json::Value =
        serde_json::from_str(&p.read(".decode/settings.local.json")).unwrap();
    assert_eq!(
        saved["permissions"]["allow"],
        json!(["net(domain:localhost)"]),
        "{saved}"
    );
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    assert!(o.ran && s.asked().is_empty());

    // A wildcard over the name does not lift the private-address ask.
    let q = Project::new();
    q.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(*host)"]}}"#,
    );
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = q.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
}

/// On the window's path (`ActiveState::open` with a data folder) in an untrusted
/// project: the `net(domain:HOST)` rule "always allow" saved to the local file counts
/// at once and in a window opened afresh (the person saved it through Decode), while
/// the same rule committed to the local file by someone else never lifts the ask.
#[tokio::test]
async fn a_saved_net_rule_in_the_local_file_counts_untrusted_in_a_fresh_window() {
    use decode_core::decision::DecisionAnswer;
    use decode_core::state::ActiveState;
    use decode_engine::tools::{call_tool, handler, ToolContext};
    use decode_policy::{Tool, Verdict};
    use std::sync::Arc;
    use tools_support::Scripted;

    let server = counting_server("dev server").await;
    let url = format!("http://localhost:{}/", server.address().port());
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (home, data) = (base.join("home"), base.join("data"));
    for d in [
        &home,
        &data,
        &base.join("proj"),
        &base.join("other/.decode"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let open = |dir: &std::path::Path, answers: Vec<DecisionAnswer>| {
        let state = ActiveState::open(dir, &home, &data, None, Some(Mode::Default))
            .unwrap()
            .0;
        assert!(!state.trusted());
        let s = Scripted::new(answers);
        (ToolContext::new(Arc::new(state), s.clone()), s)
    };
    let root = base.join("proj");
    let (ctx, _) = open(
        &root,
        vec![DecisionAnswer::AlwaysAllow {
            rules: vec![],
            target: None,
        }],
    );
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert!(o.ran, "{}", o.result.content);
    let saved = std::fs::read_to_string(root.join(".decode/settings.local.json")).unwrap();
    assert!(saved.contains("net(domain:localhost)"), "{saved}");
    // The same window: no second question.
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    // A window opened afresh.
    let (ctx, s) = open(&root, vec![]);
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    assert!(o.ran && s.asked().is_empty());
    assert!(
        o.decision.reason.contains("settings.local.json"),
        "{}",
        o.decision.reason
    );

    // A cloned repository that ships the same local file gains nothing.
    let other = base.join("other");
    std::fs::write(other.join(".decode/settings.local.json"), &saved).unwrap();
    let (ctx, s) = open(&other, vec![]);
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({ "url": url }),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert!(!o.ran);
    assert_eq!(s.asked().len(), 1);
}

/// A URL whose host an ask rule names is asked about by its name (not looked up
/// first); approved, it is resolved then and fetched: the approval is never wasted.
#[tokio::test]
async fn an_approved_ask_by_name_is_fetched() {
    use decode_core::decision::DecisionAnswer;
    use decode_engine::tools::{call_tool, handler};
    use decode_policy::{Tool, Verdict};
    use tools_support::Scripted;

    let server = counting_server("asked page").await;
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"ask": ["web_fetch(domain:web.test)"]}}"#,
    );
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p.ctx_with(Mode::Auto, s.clone());
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({"url": format!("{}/x", public_uri(&server))}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert_eq!(s.asked().len(), 1);
    assert!(o.ran && !o.result.is_error, "{}", o.result.content);
    assert!(
        o.result.content.ends_with("asked page"),
        "{}",
        o.result.content
    );
}
