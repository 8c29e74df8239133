//! `schedlab list`: what the other subcommands accept by name — kernels, scheduling
//! strategies (built-in and registered), targets and the CPU models `report --mca` costs on —
//! one line each.

use crate::CliError;
use schedlab_backend::Target;
use schedlab_backend::pipeline::{DEFAULT_STRATEGY, machine_model};
use schedlab_cost::mca::{mca_cpus, mca_llvm_major};
use schedlab_cost::models::core_model;
use serde::Serialize;

/// Arguments of `schedlab list`.
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    format: ListFormat,
}

/// How `schedlab list` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// One section per kind, one aligned line per name.
    Table,
    /// One object with `kernels`, `strategies`, `targets` and `cpus` arrays of
    /// `{name, summary}` (the default strategy has `"default": true`).
    Json,
}

/// One name and what it is.
#[derive(Clone, Debug, Serialize)]
struct Item {
    name: String,
    summary: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    default: bool,
}

impl Item {
    fn new(name: impl Into<String>, summary: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            summary: summary.into(),
            default: false,
        }
    }
}

/// Everything `list` prints, in order.
#[derive(Debug, Serialize)]
struct Listing {
    kernels: Vec<Item>,
    strategies: Vec<Item>,
    targets: Vec<Item>,
    cpus: Vec<Item>,
}

/// Runs `schedlab list`.
pub fn run(args: ListArgs) -> Result<(), CliError> {
    let listing = listing();
    match args.format {
        ListFormat::Json => {
            let text = serde_json::to_string_pretty(&listing)
                .map_err(|e| CliError::failure(format!("cannot write JSON: {e}")))?;
            println!("{text}");
        }
        ListFormat::Table => print!("{}", table(&listing)),
    }
    Ok(())
}

fn listing() -> Listing {
    let kernels = crate::kernel::list()
        .into_iter()
        .map(|(name, summary)| Item::new(name, summary))
        .collect();
    let strategies = schedlab_passes::sched::entries()
        .into_iter()
        .map(|e| Item {
            default: e.name == DEFAULT_STRATEGY,
            ..Item::new(e.name, e.summary)
        })
        .collect();
    let targets = Target::ALL
        .into_iter()
        .map(|t| Item::new(t.name(), target_summary(t)))
        .collect();
    let cpus = Target::ALL
        .into_iter()
        .flat_map(|t| mca_cpus(t).iter().map(move |cpu| (t, *cpu)))
        .map(|(t, cpu)| Item::new(cpu, cpu_summary(t, cpu)))
        .collect();
    Listing {
        kernels,
        strategies,
        targets,
        cpus,
    }
}

fn target_summary(target: Target) -> String {
    let model = machine_model(target);
    let runs = if target.is_host() {
        "runs natively through the JIT".to_string()
    } else {
        format!("runs under qemu-{}", target.name())
    };
    format!(
        "{}; scheduler model {} (issue {}, {} registers); {runs}",
        target.triple(),
        model.cpu,
        model.issue_width,
        model.allocatable_gprs
    )
}

fn cpu_summary(target: Target, cpu: &str) -> String {
    let table = if core_model(target, cpu).is_some() {
        ", beside schedlab's latency table"
    } else {
        ""
    };
    format!(
        "{target} core for `report --mca`: llvm-mca {}{table}",
        mca_llvm_major(cpu)
    )
}

fn table(listing: &Listing) -> String {
    let mut out = String::new();
    for (title, items) in [
        ("kernels", &listing.kernels),
        ("strategies", &listing.strategies),
        ("targets", &listing.targets),
        ("cpus", &listing.cpus),
    ] {
        let width = items.iter().map(|i| i.name.len()).max().unwrap_or(0);
        out.push_str(title);
        out.push_str(":\n");
        for item in items {
            let mark = if item.default { " (default)" } else { "" };
            out.push_str(&format!(
                "  {:<width$}  {}{mark}\n",
                item.name, item.summary
            ));
        }
    }
    out
}
