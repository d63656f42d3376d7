//! `ptc submit`, `ptc worker`, `ptc status` and `ptc requeue`: runs on a PostgreSQL database
//! shared by a fleet of workers (see `docs/fleet.md`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ptc_agent::llm::ReplayLlm;
use ptc_agent::store::{FleetStore, RunState, RunStatus, StoreError};
use ptc_agent::{Agent, AsyncTool, RunOptions, Worked, Worker, WorkerReport};
use ptc_store::PgStore;
use ptc_turn::{StepOutcome, Task};

use crate::config_file::Config;
use crate::exit;
use crate::mcp::{block_on, with_servers};
use crate::options::{AgentOptions, HistoryOptions, InputOptions, LimitOptions, McpOptions};
use crate::report;
use crate::run::{AgentArgs, Resolved, build_agent, build_agent_with};

/// `ptc submit`: queues a run for the fleet.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The fleet's PostgreSQL database, as a URL (postgres://USER@HOST:PORT/DATABASE).
    #[arg(long, value_name = "URL", env = "PTC_STORE")]
    pub store: String,
    /// The run's id: unique in the database.
    #[arg(long, value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub spec: AgentArgs,
}

/// `ptc worker`: works the fleet's runs.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The fleet's PostgreSQL database, as a URL (postgres://USER@HOST:PORT/DATABASE).
    #[arg(long, value_name = "URL", env = "PTC_STORE")]
    pub store: String,
    /// How many runs to work at once.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrency: usize,
    /// The worker's name in the leases it holds (default: worker-PROCESS_ID).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// How long a lease lasts after each claim, renewal or commit, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub lease: u64,
    /// Stop when nothing is runnable and the worker's own runs are done, instead of waiting
    /// for more until Ctrl-C or SIGTERM.
    #[arg(long)]
    pub until_idle: bool,
    /// How often to look for runnable runs, in seconds, besides claiming at once the runs the
    /// database announces (a lease that expired is not announced).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = positive_seconds)]
    pub poll: f64,
    /// How long the store may stay unreachable, in seconds, before the worker gives up (exit
    /// status 4); until then it tries again, and its runs go on once the store is back.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub outage_limit: u64,
    /// The model and settings of the agent that works each run; each run brings its mission
    /// and data.
    #[command(flatten)]
    pub agent: AgentOptions,
    /// The tools (`--tools`); a `--data` file is not read, as each run brings its data.
    #[command(flatten)]
    pub input: InputOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    #[command(flatten)]
    pub history: HistoryOptions,
    /// MCP servers, started when the worker starts and again if one dies: their tools serve every run it works.
    #[command(flatten)]
    pub mcp: McpOptions,
}

/// `ptc status`: where runs stand.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The fleet's PostgreSQL database, as a URL (postgres://USER@HOST:PORT/DATABASE).
    #[arg(long, value_name = "URL", env = "PTC_STORE")]
    pub store: String,
    /// Print one JSON object a run, on a line of its own, instead of text.
    #[arg(long)]
    pub json: bool,
    /// The runs' ids.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
}

/// `ptc requeue`: refused runs made claimable by every worker again.
#[derive(Debug, Args)]
pub struct RequeueArgs {
    /// The fleet's PostgreSQL database, as a URL (postgres://USER@HOST:PORT/DATABASE).
    #[arg(long, value_name = "URL", env = "PTC_STORE")]
    pub store: String,
    /// The runs' ids.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

fn done(result: Result<u8, String>) -> ExitCode {
    match result {
        Ok(status) => exit::code(status),
        Err(message) => {
            eprintln!("error: {message}");
            exit::code(exit::USAGE)
        }
    }
}

async fn connect(url: &str) -> Result<PgStore, String> {
    PgStore::connect(url)
        .await
        .map_err(|e| format!("cannot open the store: {e}"))
}

pub fn submit(args: &SubmitArgs, config: &Config) -> ExitCode {
    let settings = Resolved::new(&args.spec, config);
    // The servers' tools are part of the run's task: a worker works it with the same tools.
    let servers = settings.mcp.clone();
    with_servers(&servers, |mcp| {
        done(
            block_on(mcp, async {
                // The model is not part of the run: a worker's works it. Without one, the agent
                // is given a model that is never asked, as submitting sends no request.
                let llm: Arc<dyn ptc_agent::Llm> = match settings.agent.llm {
                    Some(_) => settings.agent.llm()?,
                    None => Arc::new(ptc_agent::ScriptedLlm::new(Vec::<String>::new())),
                };
                let builder = settings
                    .agent
                    .apply(Agent::builder(crate::run::mission(&args.spec)?), llm)?;
                let agent = build_agent(builder, &settings, mcp)?;
                let store = connect(&args.store).await?;
                agent
                    .submit(&store, &args.id, RunOptions::new())
                    .await
                    .map_err(|e| e.to_string())?;
                println!("submitted run `{}`", args.id);
                Ok(exit::OK)
            })
            .and_then(|result| result),
        )
    })
}

pub fn worker(args: WorkerArgs, config: &Config) -> ExitCode {
    let spec = AgentArgs {
        mission: None,
        mission_file: None,
        agent: args.agent.clone(),
        // Each run brings its data.
        input: InputOptions {
            data: None,
            ..args.input.clone()
        },
        limits: args.limits.clone(),
        history: args.history.clone(),
        mcp: args.mcp.clone(),
    };
    let settings = Arc::new(Resolved::new(&spec, config));
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("worker-{}", std::process::id()));
    let servers = settings.mcp.clone();
    with_servers(&servers, |mcp| {
        // Started once, the servers' tools serve every run.
        let tools: Vec<Arc<dyn AsyncTool>> = mcp.map(|m| m.servers.tools()).unwrap_or_default();
        done(
            block_on(mcp, async {
                // The model is checked before the first claim.
                settings.agent.llm()?;
                let key = settings_key(&settings, &tools)?;
                let store: Arc<dyn FleetStore> = Arc::new(connect(&args.store).await?);
                let agents = {
                    let settings = settings.clone();
                    let tools = tools.clone();
                    move |task: &Task| agent_for(task, &settings, &tools)
                };
                let worker = Worker::new(name.clone(), store, agents)
                    .settings(key)
                    .concurrency(args.concurrency)
                    .lease(Duration::from_secs(args.lease.max(1)))
                    .outage_limit(Duration::from_secs(args.outage_limit))
                    .poll(Duration::from_secs_f64(args.poll));
                eprintln!(
                    "{name}: working up to {} run{} at once",
                    args.concurrency.max(1),
                    if args.concurrency > 1 { "s" } else { "" }
                );
                let report = if args.until_idle {
                    worker.run_until_idle_or(shutdown()).await
                } else {
                    worker.run(shutdown()).await
                };
                match report {
                    Ok(report) => {
                        print!("{}", report_text(&report));
                        Ok(exit::OK)
                    }
                    Err(StoreError::Unavailable(reason)) => {
                        eprintln!("error: {name} gives up: {reason}");
                        Ok(exit::STORE_UNREACHABLE)
                    }
                    Err(error) => Err(format!("the store failed: {error}")),
                }
            })
            .and_then(|result| result),
        )
    })
}

/// A number of seconds above zero, as `--poll` takes it.
fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!(
            "`{text}` is not a number of seconds above 0 (at most a day)"
        )),
    }
}

/// The agent of a claimed run: the worker's model and settings, the run's mission and data.
fn agent_for(
    task: &Task,
    settings: &Resolved,
    tools: &[Arc<dyn AsyncTool>],
) -> Result<Agent, String> {
    // A transcript is a whole run's: a resumed run plays it from its next turn's reply.
    let replayed = settings
        .agent
        .llm
        .as_deref()
        .and_then(|spec| spec.trim().strip_prefix("replay:"));
    let llm: Arc<dyn ptc_agent::Llm> = match replayed {
        Some(path) => Arc::new(
            ReplayLlm::from_file(path.trim())
                .map_err(|e| e.to_string())?
                .by_turn(),
        ),
        None => settings.agent.llm()?,
    };
    let mut builder = settings
        .agent
        .apply(Agent::builder(task.mission.as_str()), llm)?;
    for (name, value) in &task.data {
        builder = builder.data_value(name.clone(), value.clone());
    }
    build_agent_with(builder, settings, tools)
}

/// A key naming what the worker's settings make of a run (the model, tools, signature, turn
/// budget, system prompt and history options): a run it refuses is not claimed again by a
/// worker with the same key. FNV-1a, so that it is the same in every build.
fn settings_key(settings: &Resolved, tools: &[Arc<dyn AsyncTool>]) -> Result<String, String> {
    let probe = agent_for(&Task::new(""), settings, tools)?;
    let tools = serde_json::to_string(probe.tool_specs()).map_err(|e| e.to_string())?;
    let text = format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{tools}",
        settings.agent, settings.input, settings.limits, settings.history
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Ok(format!("{hash:016x}"))
}

/// Completes at Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    eprintln!("shutting down: handing the leases held back");
}

/// One line a run: what became of it.
fn report_text(report: &WorkerReport) -> String {
    let mut text = String::new();
    for (id, worked) in &report.runs {
        let what = match worked {
            Worked::Ended(outcome) => format!("ended: {}", outcome_text(outcome)),
            Worked::HandedBack => "handed back".to_string(),
            Worked::LeaseLost => "lease lost".to_string(),
            Worked::Refused(reason) => format!("refused: {reason}"),
        };
        text.push_str(&format!("{id}: {what}\n"));
    }
    text
}

fn outcome_text(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Returned { value, .. } => format!("returned {}", ptc_lisp::pr_str(value)),
        StepOutcome::Failed { kind, reason, .. } => format!("{} ({reason})", kind.as_str()),
    }
}

pub fn status(args: &StatusArgs) -> ExitCode {
    done(runtime().and_then(|runtime| {
        runtime.block_on(async {
            let store = connect(&args.store).await?;
            let mut missing = false;
            for id in &args.ids {
                let status = store.status(id).await.map_err(|e| e.to_string())?;
                if args.json {
                    missing |= status.is_none();
                    println!("{}", status_json(id, status.as_ref()));
                    continue;
                }
                let Some(status) = status else {
                    println!("{id}: no such run");
                    missing = true;
                    continue;
                };
                let state = match &status.state {
                    RunState::Queued => "queued".to_string(),
                    RunState::Leased { worker, token } => {
                        format!("leased by {worker} (lease {token})")
                    }
                    RunState::Refused { worker, reason } => {
                        format!("refused by {worker}: {reason}")
                    }
                    RunState::Local => "run by one process".to_string(),
                    RunState::Ended(outcome) => format!("ended: {}", outcome_text(outcome)),
                };
                let plural = |n: u32| if n == 1 { "" } else { "s" };
                println!(
                    "{id}: {state}; {} turn{}, {} claim{}",
                    status.turns,
                    plural(status.turns),
                    status.claims,
                    plural(status.claims)
                );
            }
            Ok(if missing { exit::USAGE } else { exit::OK })
        })
    }))
}

/// Where run `id` stands, as JSON: `state` (`queued`, `leased`, `refused`, `local`, `ended`, or
/// `missing`), with the lease's worker and token, the refusal's worker and reason, or the
/// outcome; and the turns and claims.
fn status_json(id: &str, status: Option<&RunStatus>) -> serde_json::Value {
    let Some(status) = status else {
        return report::envelope(
            "status",
            serde_json::json!({ "id": id, "state": "missing" }),
        );
    };
    let mut json = match &status.state {
        RunState::Queued => serde_json::json!({ "id": id, "state": "queued" }),
        RunState::Leased { worker, token } => {
            serde_json::json!({ "id": id, "state": "leased", "worker": worker, "token": token })
        }
        RunState::Refused { worker, reason } => {
            serde_json::json!({ "id": id, "state": "refused", "worker": worker, "reason": reason })
        }
        RunState::Local => serde_json::json!({ "id": id, "state": "local" }),
        RunState::Ended(outcome) => {
            let mut json = serde_json::json!({ "id": id, "state": "ended" });
            if let Some(fields) = json.as_object_mut() {
                fields.extend(report::outcome_fields(outcome));
            }
            json
        }
    };
    json["turns"] = status.turns.into();
    json["claims"] = status.claims.into();
    report::envelope("status", json)
}

pub fn requeue(args: &RequeueArgs) -> ExitCode {
    done(runtime().and_then(|runtime| {
        runtime.block_on(async {
            let store = connect(&args.store).await?;
            for id in &args.ids {
                store.requeue(id).await.map_err(|e| e.to_string())?;
                println!("requeued run `{id}`");
            }
            Ok(exit::OK)
        })
    }))
}
