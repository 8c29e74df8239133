//! `--plot`: grouped bars, one group per size, one bar per implementation (MD5: median MB/s;
//! the BigInteger kernels: speed-up over the reference row).

use super::output::{BenchReport, Row, size_label};
use plotters::prelude::*;
use std::path::Path;

/// Draws `report` into an SVG file at `path`.
pub fn draw(path: &Path, report: &BenchReport) -> Result<(), String> {
    let series = series_of(&report.rows, |c| c.mb_per_s);
    let groups: Vec<String> = report.sizes.iter().map(|&s| size_label(s)).collect();
    bars(
        path,
        &Bars {
            caption: "MD5 throughput, one thread, one-shot hash (median MB/s)",
            x_desc: "message size",
            y_desc: "MB/s (decimal)",
            groups: &groups,
            series: &series,
        },
    )
}

/// The x-axis labels of categories drawn at 0, 1, 2, …: the name at a whole position, nothing
/// between.
pub fn category_labels(names: Vec<String>) -> impl Fn(&f64) -> String {
    move |x: &f64| {
        let k = x.round();
        if (x - k).abs() < 1e-6 && k >= 0.0 {
            names.get(k as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    }
}

/// Draws `chart`'s series legend at `position`, on a translucent white box with a black border.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// One series per row with figures: its name, and `value` of each of its cells.
pub fn series_of<C>(rows: &[Row<C>], value: impl Fn(&C) -> Option<f64>) -> Vec<Series> {
    rows.iter()
        .filter(|r| r.absent.is_none())
        .map(|r| Series {
            name: r.name.clone(),
            values: r.cells.iter().map(&value).collect(),
        })
        .collect()
}

/// One implementation's bars, one value per group.
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// One value per group (`None`: no bar).
    pub values: Vec<Option<f64>>,
}

/// A grouped bar chart.
pub struct Bars<'a> {
    /// Title.
    pub caption: &'a str,
    /// X axis description.
    pub x_desc: &'a str,
    /// Y axis description.
    pub y_desc: &'a str,
    /// Group labels along the x axis.
    pub groups: &'a [String],
    /// One series per implementation.
    pub series: &'a [Series],
}

/// Draws grouped bars (one group per x label, one bar per series) into an SVG file.
pub fn bars(path: &Path, chart_spec: &Bars<'_>) -> Result<(), String> {
    let rows: Vec<&Series> = chart_spec
        .series
        .iter()
        .filter(|s| s.values.iter().any(Option::is_some))
        .collect();
    if rows.is_empty() || chart_spec.groups.is_empty() {
        return Err("no figures to plot".into());
    }
    let max = rows
        .iter()
        .flat_map(|r| r.values.iter().flatten().copied())
        .fold(0.0f64, f64::max);
    let n_sizes = chart_spec.groups.len();
    let root = SVGBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    // The legend gets its own column so it never covers a bar.
    let (plot_area, legend_area) = root.split_horizontally(860);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(chart_spec.caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n_sizes as f64 - 0.5), 0f64..max * 1.1)
        .map_err(|e| e.to_string())?;
    let x_label = category_labels(chart_spec.groups.to_vec());
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n_sizes)
        .x_label_formatter(&x_label)
        .x_desc(chart_spec.x_desc)
        .y_desc(chart_spec.y_desc)
        .draw()
        .map_err(|e| e.to_string())?;
    let group = 0.84;
    let bar = group / rows.len() as f64;
    for (i, row) in rows.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let bars = row.values.iter().enumerate().filter_map(move |(k, v)| {
            let left = k as f64 - group / 2.0 + i as f64 * bar;
            v.map(|m| Rectangle::new([(left, 0.0), (left + bar * 0.9, m)], color.filled()))
        });
        chart.draw_series(bars).map_err(|e| e.to_string())?;
        let y = 60 + 18 * i as i32;
        legend_area
            .draw(&Rectangle::new([(8, y), (22, y + 12)], color.filled()))
            .map_err(|e| e.to_string())?;
        legend_area
            .draw(&Text::new(
                row.name.clone(),
                (30, y),
                ("sans-serif", 14).into_font(),
            ))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}
