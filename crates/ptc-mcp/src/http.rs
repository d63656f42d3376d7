//! The streamable HTTP transport: rmcp's, on a reqwest client with rustls and the `ring`
//! provider (as the LLM providers use), with the message size limit applied to JSON replies
//! and to each server-sent event.

use std::collections::{BTreeMap, HashMap};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

pub(crate) fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    max_message_bytes: usize,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "the URL {url:?} must start with http:// or https://"
        ));
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("the header name {name:?} is not valid: {e}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| format!("the value of header {name} is not valid: {e}"))?;
        custom.insert(header, value);
    }
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another part of the program may have installed one first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_json_response_size(max_message_bytes)
        .max_sse_event_size(max_message_bytes);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
