//! `schedlab report --plot`: spills + reloads as grouped bars, one group per strategy and one
//! bar per target.

use crate::report::Row;
use plotters::prelude::*;
use schedlab_bench::command::plot::{category_labels, draw_legend};
use std::path::Path;

/// Draws `rows` into an SVG file at `path`.
pub fn draw(path: &Path, rows: &[Row]) -> Result<(), String> {
    let mut strategies: Vec<&str> = Vec::new();
    let mut targets: Vec<&str> = Vec::new();
    for r in rows {
        if !strategies.contains(&r.strategy.as_str()) {
            strategies.push(&r.strategy);
        }
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    if rows.is_empty() {
        return Err("no rows to plot".into());
    }
    let value = |s: &str, t: &str| -> usize {
        rows.iter()
            .filter(|r| r.strategy == s && r.target == t)
            .map(|r| r.spills + r.reloads)
            .sum()
    };
    let max = strategies
        .iter()
        .flat_map(|s| targets.iter().map(move |t| (s, t)))
        .map(|(s, t)| value(s, t))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let kernels: Vec<&str> = {
        let mut k: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
        k.dedup();
        k
    };
    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let n = strategies.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Spills + reloads per strategy and target ({})",
                kernels.join(", ")
            ),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..max * 1.25)
        .map_err(|e| e.to_string())?;
    let x_label = category_labels(strategies.iter().map(|s| s.to_string()).collect());
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&x_label)
        .x_desc("strategy")
        .y_desc("spill stores + reloads")
        .draw()
        .map_err(|e| e.to_string())?;
    let group = 0.8;
    let bar = group / targets.len() as f64;
    for (ti, t) in targets.iter().enumerate() {
        let color = Palette99::pick(ti).to_rgba();
        let bars: Vec<Rectangle<(f64, f64)>> = strategies
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let x0 = si as f64 - group / 2.0 + ti as f64 * bar;
                Rectangle::new(
                    [(x0, 0.0), (x0 + bar * 0.92, value(s, t) as f64)],
                    color.filled(),
                )
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(t.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
