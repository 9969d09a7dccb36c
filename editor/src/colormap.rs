//! Colour maps of the field layers (stand-in until `crowdfield::export::Colormap` lands on
//! main; the editor then uses the command line's maps directly).

/// A continuous colour map from `[0, 1]` to sRGB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colormap {
    /// Dark blue to yellow (potential).
    #[default]
    Viridis,
    /// Blue to yellow, colour-vision-deficiency friendly (speed).
    Cividis,
    /// Yellow, orange, red (density).
    YellowOrangeRed,
}

/// Control points of each map at t = 0, 0.25, 0.5, 0.75, 1 (from the published tables).
const VIRIDIS: [[u8; 3]; 5] = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
];
const CIVIDIS: [[u8; 3]; 5] = [
    [0, 34, 78],
    [65, 77, 107],
    [124, 123, 120],
    [188, 175, 111],
    [255, 234, 70],
];
const YL_OR_RD: [[u8; 3]; 5] = [
    [255, 255, 204],
    [254, 217, 118],
    [253, 141, 60],
    [227, 26, 28],
    [128, 0, 38],
];

impl Colormap {
    /// The colour at `t` (clamped to `[0, 1]`; NaN reads as 0).
    pub fn rgb(self, t: f64) -> [u8; 3] {
        let table = match self {
            Colormap::Viridis => &VIRIDIS,
            Colormap::Cividis => &CIVIDIS,
            Colormap::YellowOrangeRed => &YL_OR_RD,
        };
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) } * 4.0;
        let i = (t.floor() as usize).min(3);
        let f = t - i as f64;
        [0, 1, 2]
            .map(|k| (table[i][k] as f64 + f * (table[i + 1][k] as f64 - table[i][k] as f64)).round() as u8)
    }
}
