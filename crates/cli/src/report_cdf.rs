//! `report --plot-cdf FILE.svg`: per strategy, the distribution over functions of the deciding
//! metric against stock Cranelift, as cumulative curves — the x axis is
//! `log2((x + 1) / (stock + 1))` (left of 0: better than stock), one panel per target. A
//! strategy whose curve lies left of another's is better on more functions; the height of the
//! step at 0 is the share of ties.

use crate::report::Row;
use crate::report_corpus::Metric;
use plotters::prelude::*;
use schedlab_bench::command::plot::draw_legend;
use std::collections::BTreeMap;
use std::path::Path;

/// The sorted log2 ratios against stock per target and strategy (stock itself left out).
fn deltas(rows: &[Row], metric: Metric) -> BTreeMap<String, Vec<(String, Vec<f64>)>> {
    let stock: BTreeMap<(&str, &str), f64> = rows
        .iter()
        .filter(|r| r.strategy == crate::report_baseline::NAME && r.error.is_none())
        .filter_map(|r| Some(((r.kernel.as_str(), r.target.as_str()), metric.of(r)?)))
        .collect();
    let mut out: BTreeMap<String, Vec<(String, Vec<f64>)>> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.strategy != crate::report_baseline::NAME && r.error.is_none())
    {
        let (Some(x), Some(&y)) = (
            metric.of(r),
            stock.get(&(r.kernel.as_str(), r.target.as_str())),
        ) else {
            continue;
        };
        let per_target = out.entry(r.target.clone()).or_default();
        let i = match per_target.iter().position(|(s, _)| *s == r.strategy) {
            Some(i) => i,
            None => {
                per_target.push((r.strategy.clone(), Vec::new()));
                per_target.len() - 1
            }
        };
        per_target[i].1.push(((x + 1.0) / (y + 1.0)).log2());
    }
    for per_target in out.values_mut() {
        for (_, v) in per_target.iter_mut() {
            v.sort_by(f64::total_cmp);
        }
    }
    out
}

/// Draws the curves of `rows` (which must include `cranelift-speed` rows) into `path`.
pub fn draw(path: &Path, rows: &[Row], metric: Metric) -> Result<(), String> {
    let data = deltas(rows, metric);
    if data.is_empty() {
        return Err("no function has both a stock row and a strategy row (add --baseline)".into());
    }
    let limit = data
        .values()
        .flatten()
        .flat_map(|(_, v)| v.iter().map(|d| d.abs()))
        .fold(0.5f64, f64::max)
        .min(4.0);
    let root = SVGBackend::new(path, (900, 420 * data.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (panel, (target, curves)) in root.split_evenly((data.len(), 1)).iter().zip(&data) {
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!(
                    "{target}: {} against stock Cranelift, per function (CDF)",
                    metric.name()
                ),
                ("sans-serif", 20),
            )
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(-limit..limit, 0f64..1f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("log2((strategy + 1) / (stock + 1)); left of 0 is better than stock")
            .y_desc("share of functions")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (strategy, values)) in curves.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let n = values.len() as f64;
            let points = values
                .iter()
                .enumerate()
                .map(|(k, v)| (v.clamp(-limit, limit), (k + 1) as f64 / n));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(format!("{strategy} ({} functions)", values.len()))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2))
                });
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
