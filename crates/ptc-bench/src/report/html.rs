//! The report as one HTML page (`REPORT.html`): charts of the pass rate per configuration, of
//! requests and the bill per mission and per size group, and of each PTC configuration against
//! plain tool calling, each with the table of its figures; then every run, linked to its page
//! when the runs' steps were written. The page fetches nothing: the charts are inline SVG.

use std::fmt::Write;

use ptc_compression::PricingKind;
use ptc_view::escape::{html, push_html};

use super::charts::{BarChart, Series};
use super::*;

/// The style of the report page.
const STYLE: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;margin:0 auto;max-width:1000px;padding:1rem 1.5rem 4rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.4rem 0}
th,td{border:1px solid #d0d4d9;padding:.2rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}
figure{margin:1rem 0}figure svg{max-width:100%;height:auto}
figcaption{color:#5f6368}
.failed{font-weight:600}
"#;

impl Report {
    /// The report as HTML (`REPORT.html`); `pages` when each PTC run's page was written under
    /// `steps/<config>/<mission>/<run>.html`, beside its step, to link to them.
    pub fn html(&self, pages: bool) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Benchmark report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>Benchmark report</h1>\n<p>Model <code>{}</code>; {} configurations; {} missions; {} runs.</p>\n",
            html(&self.llm),
            self.configs.len(),
            self.missions,
            self.runs.len()
        );
        if !self.comparisons.is_empty() {
            out.push_str("<ul class=\"comparisons\">\n");
            for c in &self.comparisons {
                out.push_str("<li>");
                push_html(&mut out, &c.summary);
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        self.pass_rates(&mut out);
        self.per_mission(&mut out);
        self.per_size(&mut out);
        self.against_tool_calling(&mut out);
        self.run_list(&mut out, pages);
        out.push_str("</body>\n</html>\n");
        out
    }

    fn pass_rates(&self, out: &mut String) {
        out.push_str("<section id=\"pass-rate\">\n<h2>Pass rate per configuration</h2>\n");
        let chart = BarChart {
            title: "Pass rate per configuration".to_string(),
            unit: "% of runs passed".to_string(),
            categories: self.configs.iter().map(|c| c.label.clone()).collect(),
            series: vec![Series {
                label: "pass rate".to_string(),
                values: self
                    .configs
                    .iter()
                    .map(|c| c.total.pass_rate * 100.0)
                    .collect(),
            }],
        };
        figure(out, &chart);
        out.push_str("<table class=\"figures\">\n<tr><th scope=\"col\">configuration</th><th scope=\"col\">runs</th><th scope=\"col\">passed</th><th scope=\"col\">pass rate</th></tr>\n");
        for c in &self.configs {
            let _ = writeln!(
                out,
                "<tr data-config=\"{}\"><th scope=\"row\">{}</th><td data-figure=\"runs\" data-value=\"{}\">{}</td><td data-figure=\"passed\" data-value=\"{}\">{}</td><td data-figure=\"pass-rate\" data-value=\"{}\">{:.1} %</td></tr>",
                html(&c.label),
                html(&c.label),
                c.total.runs,
                c.total.runs,
                c.total.passed,
                c.total.passed,
                c.total.pass_rate,
                c.total.pass_rate * 100.0
            );
        }
        out.push_str("</table>\n</section>\n");
    }

    /// Requests per run and the bill per run under each profile, mission by mission.
    fn per_mission(&self, out: &mut String) {
        let mut missions: Vec<&str> = Vec::new();
        for c in &self.configs {
            for m in &c.missions {
                if !missions.contains(&m.mission.as_str()) {
                    missions.push(&m.mission);
                }
            }
        }
        let categories: Vec<String> = missions.iter().map(|m| m.to_string()).collect();
        out.push_str("<section id=\"per-mission\">\n<h2>Requests and bill per mission</h2>\n");
        let figures = |measure: &dyn Fn(&Summary) -> f64| -> Vec<Series> {
            self.configs
                .iter()
                .map(|c| Series {
                    label: c.label.clone(),
                    values: missions
                        .iter()
                        .map(|m| mission_summary(c, m).map_or(f64::NAN, measure))
                        .collect(),
                })
                .collect()
        };
        let requests = BarChart {
            title: "Model requests per run, by mission".to_string(),
            unit: "requests per run".to_string(),
            categories: categories.clone(),
            series: figures(&|s: &Summary| s.per_run(s.llm_requests)),
        };
        figure(out, &requests);
        table(out, "requests", &requests);
        for profile in PricingKind::ALL {
            let bill = BarChart {
                title: format!("Bill per run by mission, {} prices", profile.as_str()),
                unit: "billed-equivalent input tokens per run (modelled)".to_string(),
                categories: categories.clone(),
                series: figures(&|s: &Summary| s.per_run_f64(s.bill(profile, false))),
            };
            figure(out, &bill);
            table(out, &format!("bill-{}", profile.as_str()), &bill);
        }
        out.push_str("</section>\n");
    }

    /// Requests per run and the bill per run under each profile, by size group.
    fn per_size(&self, out: &mut String) {
        let sizes: Vec<Size> = Size::ALL
            .into_iter()
            .filter(|size| {
                self.configs
                    .iter()
                    .any(|c| c.sizes.iter().any(|s| s.size == *size))
            })
            .collect();
        let categories: Vec<String> = sizes.iter().map(|s| s.as_str().to_string()).collect();
        let figures = |measure: &dyn Fn(&Summary) -> f64| -> Vec<Series> {
            self.configs
                .iter()
                .map(|c| Series {
                    label: c.label.clone(),
                    values: sizes
                        .iter()
                        .map(|size| size_summary(c, *size).map_or(f64::NAN, measure))
                        .collect(),
                })
                .collect()
        };
        out.push_str("<section id=\"per-size\">\n<h2>Requests and bill per size group</h2>\n");
        let requests = BarChart {
            title: "Model requests per run, by size group".to_string(),
            unit: "requests per run".to_string(),
            categories: categories.clone(),
            series: figures(&|s: &Summary| s.per_run(s.llm_requests)),
        };
        figure(out, &requests);
        table(out, "size-requests", &requests);
        for profile in PricingKind::ALL {
            let bill = BarChart {
                title: format!("Bill per run by size group, {} prices", profile.as_str()),
                unit: "billed-equivalent input tokens per run (modelled)".to_string(),
                categories: categories.clone(),
                series: figures(&|s: &Summary| s.per_run_f64(s.bill(profile, false))),
            };
            figure(out, &bill);
            table(out, &format!("size-bill-{}", profile.as_str()), &bill);
        }
        out.push_str("</section>\n");
    }

    /// Each PTC configuration's bill per run beside plain tool calling's on the missions both
    /// ran, under each profile.
    fn against_tool_calling(&self, out: &mut String) {
        let all: Vec<&Versus> = self
            .versus_tool_calls
            .iter()
            .filter(|v| v.size.is_none())
            .collect();
        if all.is_empty() {
            return;
        }
        out.push_str("<section id=\"versus\">\n<h2>PTC against plain tool calling</h2>\n");
        for versus in all {
            let bills: Vec<&VersusBill> = versus.bills.iter().filter(|b| !b.steady).collect();
            let chart = BarChart {
                title: format!(
                    "{} against {} on {} paired missions: bill per run",
                    versus.config, versus.baseline, versus.missions
                ),
                unit: "billed-equivalent input tokens per run (modelled)".to_string(),
                categories: bills
                    .iter()
                    .map(|b| b.profile.as_str().to_string())
                    .collect(),
                series: vec![
                    Series {
                        label: versus.config.clone(),
                        values: bills.iter().map(|b| b.ptc).collect(),
                    },
                    Series {
                        label: versus.baseline.clone(),
                        values: bills.iter().map(|b| b.tool_calls).collect(),
                    },
                ],
            };
            figure(out, &chart);
            table(out, &format!("versus-{}", versus.config), &chart);
            let _ = writeln!(
                out,
                "<p>Pass rate {:.1} % against {:.1} %; {:.1} requests per run against {:.1}.</p>",
                versus.pass_rate * 100.0,
                versus.baseline_pass_rate * 100.0,
                versus.requests,
                versus.baseline_requests
            );
        }
        out.push_str("</section>\n");
    }

    /// Every run, with a link to its page (a PTC run) or its messages (a tool-calling run).
    fn run_list(&self, out: &mut String, pages: bool) {
        out.push_str("<section id=\"runs\">\n<h2>Runs</h2>\n<table class=\"runs\">\n<tr><th scope=\"col\">configuration</th><th scope=\"col\">mission</th><th scope=\"col\">run</th><th scope=\"col\">check</th><th scope=\"col\">outcome</th><th scope=\"col\">turns</th><th scope=\"col\">requests</th><th scope=\"col\">page</th></tr>\n");
        for r in &self.runs {
            let link = if !pages {
                "<td>not written</td>".to_string()
            } else {
                let file = match r.agent {
                    AgentKind::Ptc => format!("{}.html", r.run),
                    AgentKind::ToolCalls => format!("{}.json", r.run),
                };
                let href = format!("steps/{}/{}/{file}", r.config, r.mission);
                format!(
                    "<td><a href=\"{}\">{}</a></td>",
                    html(&href),
                    if r.agent == AgentKind::Ptc {
                        "run page"
                    } else {
                        "messages"
                    }
                )
            };
            let _ = writeln!(
                out,
                "<tr class=\"run\"><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td><td>{}</td>{link}</tr>",
                html(&r.config),
                html(&r.mission),
                r.run,
                if r.passed { "" } else { " class=\"failed\"" },
                if r.passed { "passed" } else { "failed" },
                html(&r.outcome),
                r.turns,
                r.llm_requests,
            );
        }
        out.push_str("</table>\n</section>\n");
    }
}

fn mission_summary<'c>(c: &'c ConfigReport, mission: &str) -> Option<&'c Summary> {
    c.missions
        .iter()
        .find(|m| m.mission == mission)
        .map(|m| &m.summary)
}

fn size_summary(c: &ConfigReport, size: Size) -> Option<&Summary> {
    c.sizes.iter().find(|s| s.size == size).map(|s| &s.summary)
}

/// The chart inline, or why it could not be drawn.
fn figure(out: &mut String, chart: &BarChart) {
    out.push_str("<figure>\n");
    match chart.svg() {
        Ok(svg) => out.push_str(&svg),
        Err(e) => {
            out.push_str("<p>The chart could not be drawn: ");
            push_html(out, &e);
            out.push_str("</p>");
        }
    }
    out.push_str("\n<figcaption>");
    push_html(out, &chart.title);
    out.push_str(" (the figures are in the table below it)</figcaption>\n</figure>\n");
}

/// The chart's figures as a table: a row per category, a column per series.
fn table(out: &mut String, name: &str, chart: &BarChart) {
    let _ = write!(
        out,
        "<details><summary>Figures</summary>\n<table class=\"figures\" data-chart=\"{}\">\n<tr><th scope=\"col\"></th>",
        html(name)
    );
    for series in &chart.series {
        out.push_str("<th scope=\"col\">");
        push_html(out, &series.label);
        out.push_str("</th>");
    }
    out.push_str("</tr>\n");
    for (i, category) in chart.categories.iter().enumerate() {
        out.push_str("<tr><th scope=\"row\">");
        push_html(out, category);
        out.push_str("</th>");
        for series in &chart.series {
            match series.values.get(i) {
                Some(v) if v.is_finite() => {
                    let _ = write!(out, "<td data-value=\"{v}\">{}</td>", count(*v));
                }
                _ => out.push_str("<td>no runs</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n</details>\n");
}
