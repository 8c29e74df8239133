//! `--plot`: grouped bars of median MB/s, one group per message size, one bar per
//! implementation.

use super::output::{BenchReport, size_label};
use plotters::prelude::*;
use std::path::Path;

/// Draws `report` into an SVG file at `path`.
pub fn draw(path: &Path, report: &BenchReport) -> Result<(), String> {
    let rows: Vec<_> = report
        .rows
        .iter()
        .filter(|r| r.absent.is_none() && r.cells.iter().any(|c| c.mb_per_s.is_some()))
        .collect();
    if rows.is_empty() || report.sizes.is_empty() {
        return Err("no figures to plot".into());
    }
    let max = rows
        .iter()
        .flat_map(|r| r.cells.iter().filter_map(|c| c.mb_per_s))
        .fold(0.0f64, f64::max);
    let n_sizes = report.sizes.len();
    let root = SVGBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    // The legend gets its own column so it never covers a bar.
    let (plot_area, legend_area) = root.split_horizontally(860);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(
            "MD5 throughput, one thread, one-shot hash (median MB/s)",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n_sizes as f64 - 0.5), 0f64..max * 1.1)
        .map_err(|e| e.to_string())?;
    let sizes = report.sizes.clone();
    let x_label = move |x: &f64| {
        let k = x.round();
        if (x - k).abs() < 1e-6 && k >= 0.0 {
            sizes
                .get(k as usize)
                .map(|&s| size_label(s))
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n_sizes)
        .x_label_formatter(&x_label)
        .x_desc("message size")
        .y_desc("MB/s (decimal)")
        .draw()
        .map_err(|e| e.to_string())?;
    let group = 0.84;
    let bar = group / rows.len() as f64;
    for (i, row) in rows.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let bars = row.cells.iter().enumerate().filter_map(move |(k, c)| {
            let left = k as f64 - group / 2.0 + i as f64 * bar;
            c.mb_per_s
                .map(|m| Rectangle::new([(left, 0.0), (left + bar * 0.9, m)], color.filled()))
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
