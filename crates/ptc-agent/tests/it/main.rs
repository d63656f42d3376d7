//! The integration tests of `ptc-agent`, one module per topic, built as one test binary
//! (one link instead of one per file).

#[path = "../support/mod.rs"]
mod support;

mod agent_chain;
mod agent_concurrency;
mod agent_custom_compression;
mod agent_faults;
mod agent_firewall;
mod agent_input_safety;
mod agent_intents;
mod agent_kept_memory;
mod agent_llm_tool;
mod agent_loop;
mod agent_models;
mod agent_output_shaping;
mod agent_preview;
mod agent_resume;
mod agent_run;
mod agent_seed_rows;
mod agent_system_prompt;
mod agent_tools;
mod agent_tree_limits;
mod agent_turn_history;
mod compiled_agent;
mod compiled_like_the_run;
mod extract_corpus;
mod llm_anthropic;
mod llm_by_hand;
mod llm_headers;
mod llm_openai;
mod llm_sampling;
mod llm_scripted_replay;
mod provider_caching;
mod signature;
mod wire_anthropic;
mod wire_openai;
mod wire_roundtrip_props;
