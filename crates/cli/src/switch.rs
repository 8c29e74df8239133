//! `on`/`off` command-line switches for pipeline stages (`--forward-stores on|off`).

use schedlab_backend::pipeline::DEFAULT_FORWARD_STORES;

/// A pipeline stage turned on or off.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Run the stage.
    On,
    /// Skip the stage.
    Off,
}

impl Switch {
    /// Whether the stage runs.
    pub fn enabled(self) -> bool {
        self == Switch::On
    }

    /// The pipeline's default for store-to-load forwarding.
    pub fn default_forward_stores() -> Self {
        if DEFAULT_FORWARD_STORES {
            Switch::On
        } else {
            Switch::Off
        }
    }
}
