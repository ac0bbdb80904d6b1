//! The Gemini provider against a fake `streamGenerateContent?alt=sse` on 127.0.0.1.

use crate::fake_model;

use decode_engine::providers::{
    Message, ModelEvent, ModelRequest, ProviderErrorKind, ProviderKind, StopReason,
    ToolCallAssembler, ToolOutput, ToolSpec,
};
use fake_model::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: "You are Decode.".into(),
        messages,
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "additionalProperties": false,
                                 "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
        max_output_tokens: 2048,
    }
}

async fn server_with(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-test:streamGenerateContent"))
        .and(query_param("alt", "sse"))
        .and(header("x-goog-api-key", "sk-test-key"))
        .respond_with(Seq::new(responses))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn streams_text_and_parallel_function_calls_and_echoes_signatures() {
    let server = server_with(vec![
        sse(gemini_turn(
            "Reading two files. ",
            &[
                ("", "read", r#"{"path":"a.txt"}"#),
                ("", "read", r#"{"path":"b.txt"}"#),
            ],
        )),
        sse(gemini_turn("Both read.", &[])),
    ])
    .await;
    let c = client(ProviderKind::Gemini, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User {
            text: "read a and b".into(),
        }]),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(text_of(&events), "Reading two files. ");
    assert_eq!(events.last(), Some(&ModelEvent::Stop(StopReason::ToolUse)));
    let mut asm = ToolCallAssembler::default();
    for e in &events {
        asm.feed(e);
    }
    let calls = asm.finish();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].input, json!({"path": "b.txt"}));
    assert_eq!(calls[0].signature.as_deref(), Some("c2lnbmF0dXJl"));

    let first = body_json(&server.received_requests().await.unwrap()[0]);
    assert_eq!(
        first["systemInstruction"]["parts"][0]["text"],
        "You are Decode."
    );
    let decl = &first["tools"][0]["functionDeclarations"][0];
    assert_eq!(decl["name"], "read");
    assert!(decl["parameters"].get("additionalProperties").is_none());

    // The next turn sends the calls back with their signatures, and the results.
    let messages = vec![
        Message::User {
            text: "read a and b".into(),
        },
        Message::Assistant {
            text: "Reading two files. ".into(),
            tool_calls: calls.clone(),
        },
        Message::Tool {
            results: calls
                .iter()
                .map(|c| ToolOutput {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    content: "contents".into(),
                    is_error: false,
                    shortened: false,
                })
                .collect(),
        },
    ];
    let events = collect(c.stream(request(messages), CancellationToken::new())).await;
    assert_eq!(text_of(&events), "Both read.");
    let second = body_json(&server.received_requests().await.unwrap()[1]);
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][1]["functionCall"]["args"],
        json!({"path": "a.txt"})
    );
    assert_eq!(contents[1]["parts"][1]["thoughtSignature"], "c2lnbmF0dXJl");
    assert!(contents[1]["parts"][1]["functionCall"].get("id").is_none());
    assert_eq!(contents[2]["role"], "user");
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"],
        json!({"name": "read", "response": {"output": "contents"}})
    );
}

#[tokio::test]
async fn an_invalid_key_400_is_reported_as_a_key_problem() {
    let server = server_with(vec![ResponseTemplate::new(400).set_body_string(
        r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#,
    )])
    .await;
    let c = client(ProviderKind::Gemini, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    let ModelEvent::Error(e) = events.last().unwrap() else {
        panic!("{events:?}")
    };
    assert_eq!(e.kind, ProviderErrorKind::Auth);
    assert!(
        e.message.starts_with("the API key was rejected by Gemini"),
        "{e}"
    );
    assert!(e.message.contains("GEMINI_API_KEY"), "{e}");
}

#[tokio::test]
async fn rate_limit_with_http_date_retry_after() {
    let when = httpdate::fmt_http_date(std::time::SystemTime::now());
    let server = server_with(vec![
        ResponseTemplate::new(429)
            .insert_header("retry-after", when.as_str())
            .set_body_string(r#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}"#),
        sse(gemini_turn("ok", &[])),
    ])
    .await;
    let c = client(ProviderKind::Gemini, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(text_of(&events), "ok");
}

#[tokio::test]
async fn a_stream_without_finish_reason_is_cut_and_retried() {
    let chunk = "data: {\"candidates\":[{\"content\":{\"parts\":[],\"role\":\"model\"},\"index\":0}]}\r\n\r\n";
    let server = server_with(vec![sse(chunk), sse(gemini_turn("done", &[]))]).await;
    let c = client(ProviderKind::Gemini, &server.uri(), fast_policy());
    let events = collect(c.stream(
        request(vec![Message::User { text: "hi".into() }]),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(text_of(&events), "done");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}
