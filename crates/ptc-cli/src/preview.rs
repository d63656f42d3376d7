//! `ptc preview`: the system prompt and the first request an agent run would send, without
//! sending it.

use std::process::ExitCode;

use clap::Args;
use ptc_agent::{Agent, RunOptions, ScriptedLlm};

use crate::config_file::Config;
use crate::exit;
use crate::mcp::with_servers;
use crate::report;
use crate::run::{AgentArgs, Resolved, build_agent, mission};

#[derive(Debug, Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    pub spec: AgentArgs,
    /// Print the request as JSON (system, messages, cache breakpoint, max_tokens, temperature)
    /// instead of as text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &PreviewArgs, config: &Config) -> ExitCode {
    let settings = Resolved::new(&args.spec, config);
    with_servers(&settings.mcp, |mcp| {
        let preview = mission(&args.spec)
            .and_then(|mission| {
                let builder = Agent::builder(mission);
                // The model is not asked; without --llm a stand-in takes its place.
                let builder = match &settings.agent.llm {
                    Some(_) => settings.agent.apply(builder, settings.agent.llm()?)?,
                    None => settings
                        .agent
                        .apply_settings(builder.llm(ScriptedLlm::new(Vec::<String>::new())))?,
                };
                build_agent(builder, &settings, mcp)
            })
            .and_then(|agent| {
                agent
                    .preview_prompt(&RunOptions::new())
                    .map_err(|e| e.to_string())
            });
        match preview {
            Ok(preview) if args.json => {
                match serde_json::to_string_pretty(&report::Preview::new(&preview.request)) {
                    Ok(json) => println!("{json}"),
                    Err(e) => {
                        eprintln!("error: the request could not be written as JSON: {e}");
                        return exit::code(exit::FAILED);
                    }
                }
                exit::code(exit::OK)
            }
            Ok(preview) => {
                print!("{preview}");
                exit::code(exit::OK)
            }
            Err(message) => {
                eprintln!("error: {message}");
                exit::code(exit::USAGE)
            }
        }
    })
}
