//! `schedlab report --plot-pressure FILE.svg`: live IR values along the hot loop's
//! instructions, one line per strategy, one panel per kernel × target, with the target's
//! register budget (its allocatable integer registers) as a dashed line. Graal's hump
//! (`hoist-loads`: every message word live from the top) and the flat profile of load
//! rematerialisation are visible at a glance.

use plotters::prelude::*;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{Artifact, machine_model};
use schedlab_bench::command::plot::draw_legend;
use schedlab_passes::sched::pressure::{Liveness, PressureTracker};
use std::path::Path;

/// The live-value profile of one kernel × strategy × target.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Kernel name.
    pub kernel: String,
    /// Strategy name.
    pub strategy: String,
    /// Target.
    pub target: Target,
    /// Live values after each instruction of the hot block, in order.
    pub live: Vec<usize>,
}

/// The profile of the block with the most instructions (the hot loop's body after BCE and
/// fusion) in the function as it went into code generation.
pub fn profile(kernel: &str, strategy: &str, target: Target, a: &Artifact) -> Profile {
    let func = &a.func;
    let liveness = Liveness::compute(func);
    let hot = func
        .layout
        .blocks()
        .max_by_key(|&b| func.layout.block_insts(b).count());
    let mut live = Vec::new();
    if let Some(block) = hot {
        let insts: Vec<_> = func.layout.block_insts(block).collect();
        let mut tracker = PressureTracker::new(func, &liveness, block, &insts);
        for i in 0..insts.len() {
            tracker.place(i);
            live.push(tracker.live());
        }
    }
    Profile {
        kernel: kernel.to_string(),
        strategy: strategy.to_string(),
        target,
        live,
    }
}

/// Draws the profiles into an SVG file at `path`.
pub fn draw(path: &Path, profiles: &[Profile]) -> Result<(), String> {
    let mut panels: Vec<(&str, Target)> = Vec::new();
    let mut strategies: Vec<&str> = Vec::new();
    for p in profiles {
        if !panels.contains(&(p.kernel.as_str(), p.target)) {
            panels.push((&p.kernel, p.target));
        }
        if !strategies.contains(&p.strategy.as_str()) {
            strategies.push(&p.strategy);
        }
    }
    if panels.is_empty() {
        return Err("no profiles to plot".into());
    }
    let root = SVGBackend::new(path, (1100, 420 * panels.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    for (area, &(kernel, target)) in root.split_evenly((panels.len(), 1)).iter().zip(&panels) {
        let mine: Vec<&Profile> = profiles
            .iter()
            .filter(|p| p.kernel == kernel && p.target == target)
            .collect();
        let budget = machine_model(target).allocatable_gprs;
        let width = mine.iter().map(|p| p.live.len()).max().unwrap_or(1).max(1);
        let height = mine
            .iter()
            .flat_map(|p| p.live.iter().copied())
            .max()
            .unwrap_or(0)
            .max(budget)
            + 4;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{kernel} on {target}: live IR values along the hot loop"),
                ("sans-serif", 20),
            )
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0usize..width, 0usize..height)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("instruction of the loop body (scheduled order)")
            .y_desc("live values")
            .draw()
            .map_err(|e| e.to_string())?;
        for p in mine {
            let si = strategies
                .iter()
                .position(|s| *s == p.strategy)
                .unwrap_or(0);
            let color = Palette99::pick(si).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    p.live.iter().copied().enumerate(),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(p.strategy.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                });
        }
        chart
            .draw_series(DashedLineSeries::new(
                [(0, budget), (width, budget)],
                8,
                6,
                BLACK.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(format!("register budget ({budget})"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
