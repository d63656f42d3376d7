//! Bar charts of the report as SVG text, drawn by `plotters` (its SVG backend alone: no fonts
//! are read, text is left to the browser). Bars are horizontal, so long mission names read
//! whole; a chart of several series groups one bar of each series per category.

use plotters::prelude::*;

/// One series of a chart: a value per category.
pub struct Series {
    /// Its name in the legend.
    pub label: String,
    /// One value per category of the chart, in the chart's order.
    pub values: Vec<f64>,
}

/// A grouped horizontal bar chart.
pub struct BarChart {
    /// The caption drawn above the bars.
    pub title: String,
    /// What the values measure, written under the axis.
    pub unit: String,
    /// The categories, top to bottom.
    pub categories: Vec<String>,
    /// The series, each a bar in every category.
    pub series: Vec<Series>,
}

/// Colours of the series, in order (repeated past the last); told apart in print by the
/// legend's order, which is the bars' order in each group, and by the table under each chart.
const COLOURS: [RGBColor; 6] = [
    RGBColor(11, 87, 208),
    RGBColor(176, 96, 0),
    RGBColor(30, 142, 62),
    RGBColor(164, 14, 38),
    RGBColor(95, 99, 104),
    RGBColor(130, 80, 223),
];

const WIDTH: u32 = 900;
const ROW: u32 = 14;

impl BarChart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, String> {
        let groups = self.series.len().max(1);
        // Each category takes a slot per series and one empty slot between groups.
        let slots = self.categories.len() * (groups + 1);
        let height = 110 + ROW * u32::try_from(slots).unwrap_or(u32::MAX / ROW / 2);
        let max = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max);
        let top = if max > 0.0 { max * 1.1 } else { 1.0 };
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| e.to_string())?;
            let label_width = self
                .categories
                .iter()
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(4, 30) as u32
                * 7
                + 10;
            let last = i32::try_from(slots).unwrap_or(i32::MAX);
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(label_width)
                .build_cartesian_2d(0.0..top, (0..last).into_segmented())
                .map_err(|e| e.to_string())?;
            let categories = &self.categories;
            let middle = groups.div_ceil(2) - 1;
            let name = |slot: &SegmentValue<i32>| -> String {
                let SegmentValue::CenterOf(slot) = slot else {
                    return String::new();
                };
                let slot = usize::try_from(*slot).unwrap_or(usize::MAX);
                if slot % (groups + 1) != middle {
                    return String::new();
                }
                // The axis counts from the bottom; the first category is drawn at the top.
                let from_top = (slots / (groups + 1)).checked_sub(slot / (groups + 1) + 1);
                from_top
                    .and_then(|c| categories.get(c))
                    .map(|c| shorten(c, 30))
                    .unwrap_or_default()
            };
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(slots)
                .y_label_formatter(&name)
                .x_desc(self.unit.as_str())
                .x_label_formatter(&|v| axis_number(*v))
                .draw()
                .map_err(|e| e.to_string())?;
            for (s, series) in self.series.iter().enumerate() {
                let colour = COLOURS[s % COLOURS.len()];
                let count = self.categories.len();
                let bars = series.values.iter().enumerate().map(move |(c, value)| {
                    // First category at the top, and in each group the first series on top.
                    let slot = (count - 1 - c.min(count - 1)) * (groups + 1) + (groups - 1 - s);
                    let slot = i32::try_from(slot).unwrap_or(i32::MAX - 1);
                    let value = if value.is_finite() { *value } else { 0.0 };
                    Rectangle::new(
                        [
                            (0.0, SegmentValue::Exact(slot)),
                            (value, SegmentValue::Exact(slot + 1)),
                        ],
                        colour.filled(),
                    )
                });
                chart
                    .draw_series(bars)
                    .map_err(|e| e.to_string())?
                    .label(series.label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                    });
            }
            if self.series.len() > 1 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::LowerRight)
                    .background_style(WHITE.mix(0.9))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| e.to_string())?;
            }
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(svg)
    }
}

/// At most `limit` characters of `text`, with an ellipsis when cut.
fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// An axis number as a person reads it: `12k` for thousands, two decimals under 10.
fn axis_number(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.0}k", value / 1000.0)
    } else if value >= 10.0 || value == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn chart() -> BarChart {
        BarChart {
            title: "Requests per run".to_string(),
            unit: "requests".to_string(),
            categories: vec!["order-revenue".to_string(), "restock".to_string()],
            series: vec![
                Series {
                    label: "off".to_string(),
                    values: vec![3.0, 5.0],
                },
                Series {
                    label: "tool-calls".to_string(),
                    values: vec![9.0, f64::NAN],
                },
            ],
        }
    }

    #[test]
    fn draws_a_bar_per_series_and_category_and_names_them() {
        let svg = chart().svg().expect("draws");
        assert!(svg.starts_with("<svg "), "{svg}");
        // The background, the plotting area and four bars (a NaN value draws an empty bar),
        // plus the legend's box and two keys.
        let bars = svg.matches("<rect").count();
        assert_eq!(bars, 9, "{svg}");
        for text in [
            "order-revenue",
            "restock",
            "off",
            "tool-calls",
            "Requests per run",
        ] {
            assert!(
                svg.contains(&format!(">\n{text}\n<")),
                "{text} missing: {svg}"
            );
        }
        assert!(!svg.contains("href"), "links to nothing: {svg}");
    }

    #[test]
    fn numbers_on_the_axis_read_short() {
        assert_eq!(
            [0.0, 0.5, 12.0, 25_000.0].map(axis_number),
            ["0", "0.50", "12", "25k"]
        );
    }
}
