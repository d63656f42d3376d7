//! Every committed benchmark transcript whose run returned a value, compiled: the compiled
//! agent, read back from its file and run on the mission's data with fresh tools, returns
//! exactly the value the replayed run returned.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use ptc_agent::{CompiledAgent, ReplayLlm};
use ptc_bench::harness::{AgentKind, Config, replay_configs, transcript_runs};
use ptc_bench::mission::{Mission, load_missions};
use ptc_bench::tools::CallLog;
use ptc_turn::StepOutcome;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed transcript directories: `benchmarks/transcripts*`, by name.
fn transcript_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("benchmarks"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.is_dir()
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("transcripts"))
        })
        .collect();
    dirs.sort();
    dirs
}

/// What became of one recorded run that returned a value: whether it compiled, and whether
/// the compiled agent returned that value too; `None` for a run that failed.
async fn compiled_outcome(
    mission: &Mission,
    config: &Config,
    run: u32,
    transcript: &Path,
) -> Option<String> {
    // The MCP servers work where they worked when the run was recorded: a model may have
    // written the paths it saw into its programs.
    let scratch = format!("{}/{run}", config.label);
    let llm = ReplayLlm::from_file(transcript).unwrap();
    let log = CallLog::new();
    let mcp = mission.start_mcp(&log, &scratch).await.unwrap();
    let mut builder = mission
        .builder(Arc::new(llm), &log)
        .compression_config(config.compression)
        .reply_form(config.reply);
    for tool in mcp.iter().flat_map(|mcp| &mcp.tools) {
        builder = builder.tool_arc(tool.clone());
    }
    let agent = builder.build().unwrap();
    let step = agent.run().await.unwrap();
    if let Some(mcp) = mcp {
        mcp.servers.close().await;
    }
    let recorded = match &step.outcome {
        StepOutcome::Returned { value } => value.clone(),
        StepOutcome::Failed { .. } => return None,
    };
    let compiled = match agent.compiled_from(&step) {
        Ok(compiled) => compiled,
        Err(error) => return Some(format!("refused: {error}")),
    };
    // As `ptc exec` runs it: from its file, with tools of its own.
    let mut loaded = CompiledAgent::from_json(&compiled.to_json())
        .unwrap()
        .with_limits(ptc_bench::mission::program_limits());
    let log = CallLog::new();
    for tool in mission.tools.instantiate(&log) {
        loaded = loaded.with_tool_arc(tool);
    }
    let mcp = mission.start_mcp(&log, &scratch).await.unwrap();
    for tool in mcp.iter().flat_map(|mcp| &mcp.tools) {
        loaded = loaded.with_tool_arc(tool.clone());
    }
    let executed = loaded.run_data(mission.data.clone()).await;
    if let Some(mcp) = mcp {
        mcp.servers.close().await;
    }
    let stages = loaded.programs().len();
    Some(match executed.map(|step| step.outcome) {
        Ok(StepOutcome::Returned { value }) if value == recorded => {
            format!("returned, compiled to {stages} stage(s) returning the same value")
        }
        Ok(StepOutcome::Returned { value }) => format!(
            "returned {}, but the compiled agent returned {}",
            ptc_lisp::pr_str(&recorded),
            ptc_lisp::pr_str(&value)
        ),
        Ok(StepOutcome::Failed { kind, reason, .. }) => format!(
            "returned {}, but the compiled agent failed ({}): {reason}",
            ptc_lisp::pr_str(&recorded),
            kind.as_str()
        ),
        Err(error) => format!("returned, but the compiled agent could not run: {error}"),
    })
}

/// The refusal of a run whose turn `turn` failed after calling `tools`.
fn refused(turn: u32, tools: &str) -> String {
    format!(
        "refused: cannot compile: turn {turn} failed after calling {tools}, and a compiled agent \
         runs only the programs of the successful turns: it would not make those calls, which \
         the turns after it may rely on (a side effect already done, a failure retried); run \
         the agent instead, or compile a run whose failed turns call no tools"
    )
}

#[test]
fn every_returned_benchmark_run_compiles_to_an_agent_returning_the_same_value() {
    // A mission uses an MCP server from npm.
    ptc_mcp_testkit::ensure_installed().unwrap_or_else(|e| panic!("{e}"));
    let missions = load_missions(&repo().join("benchmarks/missions"), &[]).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut returned = Vec::new();
    let mut failed: Vec<(String, usize)> = Vec::new();
    for dir in transcript_dirs() {
        let set = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut failures = 0;
        // Plain tool calling has no programs to compile.
        let configs = replay_configs(&dir).unwrap();
        for config in configs.iter().filter(|c| c.agent == AgentKind::Ptc) {
            for mission in &missions {
                let runs = transcript_runs(&dir.join(&config.label).join(&mission.name)).unwrap();
                for (run, transcript) in runs {
                    match runtime.block_on(compiled_outcome(mission, config, run, &transcript)) {
                        Some(outcome) => returned.push(format!(
                            "{set} {} {} {run}: {outcome}",
                            config.label, mission.name
                        )),
                        None => failures += 1,
                    }
                }
            }
        }
        failed.push((set, failures));
    }

    // The runs that failed have no program to compile.
    assert_eq!(
        failed,
        [
            ("transcripts".to_string(), 1),
            // refund-unknown-order, whose right answer is to fail, under `off` and `on`.
            ("transcripts-capable".to_string(), 2),
            ("transcripts-qwen2.5-coder-1.5b-q4_k_m".to_string(), 22),
            ("transcripts-smollm2-135m".to_string(), 45),
        ]
    );
    let same =
        |stages: usize| format!("returned, compiled to {stages} stage(s) returning the same value");
    let expected: Vec<String> = [
        ("transcripts off category-ratings 1", same(1)),
        ("transcripts off currency-totals 1", same(2)),
        ("transcripts off escalate-tickets 1", same(1)),
        // The rates service failed the first call, and the next turn called it again.
        (
            "transcripts off flaky-rates 1",
            refused(1, "tool/get-usd-rate"),
        ),
        ("transcripts off forecast-hottest 1", same(3)),
        ("transcripts off invoice-reminders 1", same(1)),
        ("transcripts off knowledge-hops 1", same(9)),
        ("transcripts off late-delivery-credits 1", same(4)),
        ("transcripts off low-stock 1", same(1)),
        ("transcripts off mcp-service-logs 1", same(2)),
        ("transcripts off missing-customers 1", same(2)),
        ("transcripts off order-revenue 1", same(1)),
        ("transcripts off order-revenue 2", same(2)),
        ("transcripts off paged-admins 1", same(3)),
        // Refunds issued by a failed turn would not be issued by the compiled agent.
        (
            "transcripts off refund-queue 1",
            refused(12, "tool/get-order, tool/refund"),
        ),
        ("transcripts off renamed-fields 1", same(2)),
        ("transcripts off restock 1", same(1)),
        ("transcripts off shipment-delays 1", same(3)),
        // The first message went out in a failed turn, which the next turn relied on.
        (
            "transcripts off sms-rate-limit 1",
            refused(1, "tool/send-sms"),
        ),
        ("transcripts off team-hours 1", same(3)),
        ("transcripts off ticket-routing 1", same(10)),
        ("transcripts off ticket-status-counts 1", same(1)),
        ("transcripts off top-spenders 1", same(1)),
        ("transcripts off warehouse-audit 1", same(9)),
        ("transcripts on late-delivery-credits 1", same(4)),
        (
            "transcripts on refund-queue 1",
            refused(12, "tool/get-order, tool/refund"),
        ),
        (
            "transcripts on sms-rate-limit 1",
            refused(1, "tool/send-sms"),
        ),
        ("transcripts on warehouse-audit 1", same(9)),
        (
            "transcripts on-openai refund-queue 1",
            refused(12, "tool/get-order, tool/refund"),
        ),
        (
            "transcripts single-user-coalesced late-delivery-credits 1",
            same(4),
        ),
        ("transcripts single-user-coalesced order-revenue 1", same(1)),
        ("transcripts single-user-coalesced order-revenue 2", same(2)),
        ("transcripts single-user-coalesced paged-admins 1", same(3)),
        (
            "transcripts single-user-coalesced sms-rate-limit 1",
            refused(1, "tool/send-sms"),
        ),
        ("transcripts single-user-coalesced top-spenders 1", same(1)),
        (
            "transcripts single-user-coalesced warehouse-audit 1",
            same(9),
        ),
        ("transcripts-capable off catalogue-repricing 1", same(4)),
        ("transcripts-capable off category-ratings 1", same(1)),
        ("transcripts-capable off currency-totals 1", same(2)),
        ("transcripts-capable off escalate-tickets 1", same(1)),
        ("transcripts-capable off flaky-rates 1", same(2)),
        ("transcripts-capable off forecast-hottest 1", same(3)),
        ("transcripts-capable off fx-settlement 1", same(2)),
        ("transcripts-capable off incident-correlation 1", same(3)),
        ("transcripts-capable off invoice-reminders 1", same(1)),
        ("transcripts-capable off knowledge-hops 1", same(9)),
        ("transcripts-capable off late-delivery-credits 1", same(2)),
        ("transcripts-capable off low-stock 1", same(1)),
        ("transcripts-capable off mcp-service-logs 1", same(3)),
        ("transcripts-capable off missing-customers 1", same(2)),
        ("transcripts-capable off order-revenue 1", same(1)),
        ("transcripts-capable off paged-admins 1", same(3)),
        ("transcripts-capable off refund-queue 1", same(23)),
        ("transcripts-capable off regional-revenue 1", same(2)),
        ("transcripts-capable off renamed-fields 1", same(1)),
        ("transcripts-capable off restock 1", same(1)),
        ("transcripts-capable off shipment-delays 1", same(2)),
        ("transcripts-capable off sla-escalations 1", same(5)),
        ("transcripts-capable off sms-rate-limit 1", same(2)),
        ("transcripts-capable off stock-reconciliation 1", same(4)),
        ("transcripts-capable off team-hours 1", same(3)),
        ("transcripts-capable off ticket-routing 1", same(10)),
        ("transcripts-capable off ticket-status-counts 1", same(1)),
        ("transcripts-capable off top-spenders 1", same(1)),
        ("transcripts-capable off warehouse-audit 1", same(8)),
        ("transcripts-capable on catalogue-repricing 1", same(5)),
        ("transcripts-capable on category-ratings 1", same(1)),
        ("transcripts-capable on currency-totals 1", same(2)),
        ("transcripts-capable on escalate-tickets 1", same(1)),
        ("transcripts-capable on flaky-rates 1", same(3)),
        ("transcripts-capable on forecast-hottest 1", same(3)),
        ("transcripts-capable on fx-settlement 1", same(3)),
        ("transcripts-capable on incident-correlation 1", same(3)),
        ("transcripts-capable on invoice-reminders 1", same(1)),
        ("transcripts-capable on knowledge-hops 1", same(9)),
        ("transcripts-capable on late-delivery-credits 1", same(2)),
        ("transcripts-capable on low-stock 1", same(1)),
        ("transcripts-capable on mcp-service-logs 1", same(3)),
        ("transcripts-capable on missing-customers 1", same(2)),
        ("transcripts-capable on order-revenue 1", same(1)),
        ("transcripts-capable on paged-admins 1", same(2)),
        ("transcripts-capable on refund-queue 1", same(23)),
        ("transcripts-capable on regional-revenue 1", same(2)),
        ("transcripts-capable on renamed-fields 1", same(1)),
        ("transcripts-capable on restock 1", same(1)),
        ("transcripts-capable on shipment-delays 1", same(2)),
        ("transcripts-capable on sla-escalations 1", same(5)),
        ("transcripts-capable on sms-rate-limit 1", same(2)),
        ("transcripts-capable on stock-reconciliation 1", same(4)),
        ("transcripts-capable on team-hours 1", same(3)),
        ("transcripts-capable on ticket-routing 1", same(9)),
        ("transcripts-capable on ticket-status-counts 1", same(1)),
        ("transcripts-capable on top-spenders 1", same(1)),
        ("transcripts-capable on warehouse-audit 1", same(9)),
        (
            "transcripts-capable on.tool-call catalogue-repricing 1",
            same(5),
        ),
        (
            "transcripts-capable on.tool-call category-ratings 1",
            same(1),
        ),
        (
            "transcripts-capable on.tool-call currency-totals 1",
            same(2),
        ),
        (
            "transcripts-capable on.tool-call escalate-tickets 1",
            same(1),
        ),
        (
            "transcripts-capable on.tool-call incident-correlation 1",
            same(3),
        ),
        ("transcripts-capable on.tool-call knowledge-hops 1", same(9)),
        (
            "transcripts-capable on.tool-call late-delivery-credits 1",
            same(2),
        ),
        (
            "transcripts-capable on.tool-call mcp-service-logs 1",
            same(3),
        ),
        (
            "transcripts-capable on.tool-call missing-customers 1",
            same(2),
        ),
        ("transcripts-capable on.tool-call order-revenue 1", same(1)),
        (
            "transcripts-capable on.tool-call regional-revenue 1",
            same(2),
        ),
        ("transcripts-capable on.tool-call renamed-fields 1", same(1)),
        (
            "transcripts-capable on.tool-call shipment-delays 1",
            same(2),
        ),
        (
            "transcripts-capable on.tool-call ticket-routing 1",
            same(10),
        ),
        ("transcripts-capable on.tool-call top-spenders 1", same(1)),
        (
            "transcripts-qwen2.5-coder-1.5b-q4_k_m off invoice-reminders 1",
            same(1),
        ),
        (
            "transcripts-qwen2.5-coder-1.5b-q4_k_m off refund-unknown-order 1",
            same(4),
        ),
        ("transcripts-smollm2-135m on ticket-routing 1", same(1)),
    ]
    .into_iter()
    .map(|(run, outcome)| format!("{run}: {outcome}"))
    .collect();
    assert_eq!(returned, expected);
}
