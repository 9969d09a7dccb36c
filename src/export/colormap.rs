//! Colour maps for field images (perceptually uniform or ColorBrewer sequential, via `colorous`).

use serde::{Deserialize, Serialize};

/// A continuous colour map from a value in `[0, 1]` to sRGB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colormap {
    /// Perceptually uniform, dark blue to yellow; the default for potentials.
    #[default]
    Viridis,
    /// Perceptually uniform, black to light yellow through red.
    Magma,
    /// Perceptually uniform, black to yellow through red; used for cost.
    Inferno,
    /// Perceptually uniform and colour-vision-deficiency friendly, blue to yellow; used for speed.
    Cividis,
    /// ColorBrewer sequential yellow–orange–red; used for density.
    YellowOrangeRed,
}

/// The command's `--colormap` names; `ylorrd` is ColorBrewer's own name for
/// [`Colormap::YellowOrangeRed`], whose serde name stays `yellow_orange_red`.
impl crate::names::Named for Colormap {
    const WHAT: &'static str = "Colormap";
    const ALL: &'static [Self] = &[
        Self::Viridis,
        Self::Magma,
        Self::Inferno,
        Self::Cividis,
        Self::YellowOrangeRed,
    ];

    fn name(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::Cividis => "cividis",
            Colormap::YellowOrangeRed => "ylorrd",
        }
    }
}

impl Colormap {
    fn gradient(self) -> colorous::Gradient {
        match self {
            Colormap::Viridis => colorous::VIRIDIS,
            Colormap::Magma => colorous::MAGMA,
            Colormap::Inferno => colorous::INFERNO,
            Colormap::Cividis => colorous::CIVIDIS,
            Colormap::YellowOrangeRed => colorous::YELLOW_ORANGE_RED,
        }
    }

    /// The colour at `t` (clamped to `[0, 1]`; NaN reads as 0).
    pub fn rgb(self, t: f64) -> [u8; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let c = self.gradient().eval_continuous(t);
        [c.r, c.g, c.b]
    }
}
