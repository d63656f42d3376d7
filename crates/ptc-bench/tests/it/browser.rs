//! The pages as a person sees them: headless Chromium (Debian's package, which `cargo xtask
//! browser` installs) opens the page of a replayed 24-turn run and the benchmark's report page.
//! The DOM after the page's script ran holds every turn, every program's text and the step's
//! figures; the pages ask nothing of the network (the browser's net log holds no request a page
//! started); a screenshot of each is kept under the target directory; the run page's render
//! time is measured.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_turn::Step;

use super::pages::{figure_after, replay_refund_queue};

/// The browser: `PTC_CHROMIUM` or `chromium` on the PATH.
fn chromium() -> PathBuf {
    let program = std::env::var_os("PTC_CHROMIUM").map_or(PathBuf::from("chromium"), PathBuf::from);
    match Command::new(&program).arg("--version").output() {
        Ok(out) if out.status.success() => program,
        _ => panic!(
            "Chromium is needed to test the HTML pages: `cargo xtask browser` installs Debian's \
             `chromium` package (or set PTC_CHROMIUM to a Chromium program)"
        ),
    }
}

/// Flags for a browser that starts clean, keeps its profile in `profile` and resolves no host
/// name (a page's request would still be logged before failing).
fn headless(profile: &Path) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-sync",
        "--disable-background-networking",
        "--disable-component-update",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]
    .iter()
    .map(ToString::to_string)
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// What the browser made of a page: the DOM after its scripts ran, the requests the page (not
/// the browser itself) started, and how long the browser took.
struct Loaded {
    dom: String,
    page_requests: Vec<String>,
    wall: Duration,
}

fn load(browser: &Path, page: &Path, work: &Path) -> Loaded {
    let netlog = work.join("netlog.json");
    let started = Instant::now();
    let out = Command::new(browser)
        .args(headless(&work.join("profile")))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("Chromium starts");
    let wall = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Loaded {
        dom: String::from_utf8(out.stdout).expect("UTF-8"),
        page_requests: page_requests(&netlog),
        wall,
    }
}

/// The URLs of the network requests a page started, from Chromium's net log: requests the
/// browser makes on its own behalf have no initiating origin and are left out.
fn page_requests(netlog: &Path) -> Vec<String> {
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(netlog).expect("the net log"))
            .expect("a complete net log");
    let start_job = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        // The start of each job (its end has no parameters).
        .filter(|e| &e["type"] == start_job && e["params"]["url"].is_string())
        .filter(|e| e["params"]["initiator"] != "not an origin")
        .map(|e| e["params"]["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn screenshot(browser: &Path, page: &Path, png: &Path, work: &Path) {
    let out = Command::new(browser)
        .args(headless(&work.join("profile")))
        .arg("--window-size=1200,1600")
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("Chromium starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(png).expect("the screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "{} is a PNG", png.display());
}

/// The text of every program block of a DOM, tags dropped and characters unescaped.
fn programs(dom: &str) -> Vec<String> {
    let block = regex::Regex::new(r#"(?s)<pre class="program"><code>(.*?)</code></pre>"#).unwrap();
    let tag = regex::Regex::new(r"<[^>]*>").unwrap();
    block
        .captures_iter(dom)
        .map(|c| {
            tag.replace_all(&c[1], "")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&nbsp;", "\u{a0}")
                .replace("&amp;", "&")
        })
        .collect()
}

/// Where the screenshots are kept.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).expect("the artifacts' directory");
    dir
}

#[test]
fn a_request_a_page_makes_is_seen() {
    let browser = chromium();
    let work = std::env::temp_dir().join(format!("ptc-browser-probe-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a directory");
    let page = work.join("probe.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><p>probe</p><img src=\"http://fetched.invalid/pixel.png\">",
    )
    .expect("writes");
    let loaded = load(&browser, &page, &work);
    assert_eq!(loaded.page_requests, ["http://fetched.invalid/pixel.png"]);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn chromium_shows_the_run_page_and_the_report_page_as_written() {
    let browser = chromium();
    let (report, out) = replay_refund_queue("browser");
    let work = out.join("browser");
    std::fs::create_dir_all(&work).expect("a directory");
    let run_dir = out.join("steps/off/refund-queue");
    let step: Step =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("1.json")).expect("the step"))
            .expect("a step");

    // The run page, with a probe that notes when the page is laid out after loading.
    let page = std::fs::read_to_string(run_dir.join("1.html")).expect("the run page");
    let probe = "<script>addEventListener('load',function(){document.body.offsetHeight;\
                 document.body.setAttribute('data-rendered-ms',String(performance.now()));});\
                 </script>\n</body>";
    let probed = run_dir.join("1.probed.html");
    std::fs::write(&probed, page.replace("</body>", probe)).expect("writes");
    let loaded = load(&browser, &probed, &work);
    assert_eq!(
        loaded.page_requests,
        Vec::<String>::new(),
        "the run page fetched"
    );
    let dom = &loaded.dom;
    assert_eq!(dom.matches("<section class=\"turn\"").count(), 24);
    let expected: Vec<String> = step
        .turns
        .as_slice()
        .iter()
        .map(|t| t.program().to_string())
        .collect();
    assert_eq!(programs(dom), expected);
    let t = &step.usage.tokens;
    for (name, value) in [
        ("turns", step.turns.len() as u64),
        ("requests", u64::from(step.usage.llm_requests)),
        ("input-tokens", t.input_tokens),
        ("output-tokens", t.output_tokens),
    ] {
        assert_eq!(
            figure_after(dom, "<section id=\"summary\">", name),
            value.to_string(),
            "{name}"
        );
    }
    // The script ran: it shows the controls the page hides from a browser without it.
    assert!(
        dom.contains("<div id=\"controls\">"),
        "the script did not run"
    );
    let rendered: f64 = regex::Regex::new(r#"data-rendered-ms="([0-9.]+)""#)
        .unwrap()
        .captures(dom)
        .expect("the probe ran")[1]
        .parse()
        .expect("a number");
    eprintln!(
        "24-turn run page: {} bytes, laid out {rendered:.0} ms after navigation began; \
         Chromium ran {:.2} s in all",
        page.len(),
        loaded.wall.as_secs_f64()
    );
    assert!(rendered < 1000.0, "the run page took {rendered} ms");
    screenshot(
        &browser,
        &run_dir.join("1.html"),
        &artifacts().join("run-page.png"),
        &work,
    );

    // The report page: its charts, its figures and a link to every run's page.
    let report_page = out.join("REPORT.html");
    let loaded = load(&browser, &report_page, &work);
    assert_eq!(
        loaded.page_requests,
        Vec::<String>::new(),
        "the report page fetched"
    );
    assert_eq!(loaded.dom.matches("<svg").count(), 9);
    for config in &report.configs {
        let row = format!("<tr data-config=\"{}\">", config.label);
        assert_eq!(
            figure_after(&loaded.dom, &row, "pass-rate"),
            config.total.pass_rate.to_string()
        );
    }
    assert_eq!(
        loaded.dom.matches(">run page</a>").count(),
        report.runs.len()
    );
    screenshot(
        &browser,
        &report_page,
        &artifacts().join("report-page.png"),
        &work,
    );
    let _ = std::fs::remove_dir_all(&out);
}
