//! Logs on standard error: what the library reports through `tracing` (retries, each turn's
//! tokens and time, ...), at a level chosen by `-v`/`-q` or `RUST_LOG`, as text or JSON lines.

use std::io::IsTerminal;

use clap::{Args, ValueEnum};
use ptc_agent::otlp::OtlpExport;
use tracing_subscriber::fmt::format::debug_fn;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// One line a message.
    #[default]
    Text,
    /// One JSON object a line, with every field and the spans it happened in.
    Json,
}

/// The logging flags, accepted before or after the subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct LogOptions {
    /// Log more: -v each turn's tokens and time and each model call, -vv the details, -vvv
    /// everything (the HTTP stack too). Overrides RUST_LOG.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors, and for `run` no turn-by-turn trace: just the result.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// How log lines are written on standard error.
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value_t,
        global = true
    )]
    pub log_format: LogFormat,
}

impl LogOptions {
    /// What to log: the flags, else `RUST_LOG`, else warnings (retries, failed checkpoints)
    /// and the notices of a model request still waiting for its answer.
    fn filter(&self) -> EnvFilter {
        let ours = |level: &str| {
            format!("warn,ptc_agent={level},ptc_store={level},ptc_cli={level},ptc_lisp={level}")
        };
        let directives = match (self.quiet, self.verbose) {
            (true, _) => "error".to_string(),
            // Warnings, and the notices that a model request is still waiting for its answer.
            (false, 0) => {
                // The connection pool's own warnings (a connection closed, one not recycled)
                // repeat, less clearly, what the fleet's commands say of an outage.
                return EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                    EnvFilter::new(format!(
                        "warn,deadpool=error,{}=info",
                        ptc_agent::llm::WAIT_TARGET
                    ))
                });
            }
            (false, 1) => ours("info"),
            (false, 2) => ours("debug"),
            (false, _) => "trace".to_string(),
        };
        EnvFilter::new(directives)
    }

    /// Installs the subscriber for the whole process: the log lines on standard error, and,
    /// when `otlp` is given, the export of the spans to its collector (which filters for
    /// itself, whatever the log level).
    pub fn init(&self, otlp: Option<&OtlpExport>) {
        let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
        let logs = match self.log_format {
            LogFormat::Text => fmt
                .with_ansi(std::io::stderr().is_terminal())
                .without_time()
                .with_target(false)
                // The messages carry what a person needs; the fields are for JSON readers.
                .fmt_fields(debug_fn(|writer, field, value| {
                    if field.name() == "message" {
                        write!(writer, "{value:?}")
                    } else {
                        Ok(())
                    }
                }))
                .with_filter(self.filter())
                .boxed(),
            LogFormat::Json => fmt
                .json()
                .with_current_span(false)
                .with_filter(self.filter())
                .boxed(),
        };
        let installed = tracing_subscriber::registry()
            .with(logs)
            .with(otlp.map(OtlpExport::layer))
            .try_init();
        // Only a second call in one process can fail, and the first subscriber then stays.
        let _ = installed;
    }
}
