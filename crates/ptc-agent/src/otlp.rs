//! Runs exported as OpenTelemetry traces, over OTLP/HTTP with protobuf bodies (feature `otlp`).
//!
//! The agent already reports through `tracing` spans named as the GenAI semantic conventions
//! name them; [`OtlpExport::layer`] turns them into OpenTelemetry spans and sends them in
//! batches to a collector:
//!
//! - `invoke_agent` — one per run (`gen_ai.operation.name`, provider, model, outcome, the run's
//!   token totals);
//! - `agent_turn` — one per turn, under the run;
//! - `chat {model}` — one per model request, under its turn, with `gen_ai.usage.input_tokens`,
//!   `gen_ai.usage.output_tokens` (and the prompt cache's share), the provider and the model;
//! - `execute_tool {name}` — one per tool call, under its turn, with `gen_ai.tool.name`.
//!
//! Each turn's span carries its program and its output (what it printed, then its value or
//! error) as span events, each cut to [`CONTENT_LIMIT`] characters.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let export = ptc_agent::otlp::OtlpExport::start("http://localhost:4318")?;
//! tracing_subscriber::registry().with(export.layer()).init();
//! // ... run agents ...
//! export.shutdown()?; // sends what is still buffered
//! # Ok::<(), String>(())
//! ```

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

pub use crate::telemetry::{CONTENT_LIMIT, CONTENT_TARGET};

/// The path OTLP/HTTP collectors take traces at.
const TRACES_PATH: &str = "/v1/traces";

/// An exporter of traces to one collector, and the batch that is waiting to be sent.
#[derive(Debug)]
pub struct OtlpExport {
    provider: SdkTracerProvider,
    url: String,
}

impl OtlpExport {
    /// An exporter sending to `endpoint`: a collector's base URL (`http://localhost:4318`), to
    /// which `/v1/traces` is added, or the full URL of its traces path. Spans are sent in
    /// batches from a thread of the exporter's own; nothing is sent before the first span ends.
    pub fn start(endpoint: &str) -> Result<OtlpExport, String> {
        let url = traces_url(endpoint)?;
        crate::llm::http::install_crypto_provider();
        let exporter = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url.as_str())
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot export traces to {url}: {e}"))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name("ptc").build())
            .build();
        Ok(OtlpExport { provider, url })
    }

    /// Where the spans go: the collector's traces URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `tracing` layer that turns the agent's spans into OpenTelemetry spans for this
    /// exporter. It keeps the spans and events of the agent library at `INFO` and above, and
    /// the content events of [`CONTENT_TARGET`]; it filters for itself, whatever the other
    /// layers log.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let filter = Targets::new()
            .with_target("ptc_agent", Level::INFO)
            .with_target(CONTENT_TARGET, Level::TRACE);
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("ptc-agent"))
            .with_location(false)
            .with_threads(false)
            .with_filter(filter)
    }

    /// Sends the spans still buffered and stops the exporter; call it before the process
    /// exits, after the last run ended.
    pub fn shutdown(self) -> Result<(), String> {
        let flushed = self.provider.force_flush();
        let stopped = self.provider.shutdown();
        flushed
            .and(stopped)
            .map_err(|e| format!("cannot send the traces to {}: {e}", self.url))
    }
}

/// `endpoint` as the URL of a collector's traces path.
fn traces_url(endpoint: &str) -> Result<String, String> {
    let endpoint = endpoint.trim();
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(format!(
            "the OTLP endpoint `{endpoint}` is not an http:// or https:// URL"
        ));
    }
    let base = endpoint.trim_end_matches('/');
    if base.ends_with(TRACES_PATH) {
        Ok(base.to_string())
    } else {
        Ok(format!("{base}{TRACES_PATH}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_traces_path_and_a_full_one_stays() {
        assert_eq!(
            traces_url("http://localhost:4318").as_deref(),
            Ok("http://localhost:4318/v1/traces")
        );
        assert_eq!(
            traces_url("http://localhost:6006/").as_deref(),
            Ok("http://localhost:6006/v1/traces")
        );
        assert_eq!(
            traces_url("https://collector.example/v1/traces").as_deref(),
            Ok("https://collector.example/v1/traces")
        );
        assert_eq!(
            traces_url("localhost:4318"),
            Err("the OTLP endpoint `localhost:4318` is not an http:// or https:// URL".to_string())
        );
    }
}
