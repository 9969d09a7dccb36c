//! The names of the library's choices (where a solve runs, the local layer, the model, the
//! speed law, ...): every choice a front end offers lists its values through [`Named::ALL`],
//! shows them with [`Named::name`] and reads them back with [`Named::parse`], so the command
//! line, the Python package and the editor spell them alike.
//!
//! ```
//! use crowdfield::local::LocalMode;
//! use crowdfield::names::Named;
//!
//! assert_eq!(LocalMode::parse("boids+orca").unwrap(), LocalMode::BoidsOrca);
//! assert_eq!(LocalMode::Orca.name(), "orca");
//! let e = LocalMode::parse("rvo").unwrap_err().to_string();
//! assert_eq!(e, r#"LocalMode: "rvo": expected one of "none", "boids", "orca", "boids+orca""#);
//! ```

use crate::error::{Error, OPTIONS, Result};

/// A choice with a fixed list of values, each with one name: the spelling of the command
/// line's flags, the Python package's arguments and the map format.
pub trait Named: Copy + PartialEq + Sized + 'static {
    /// The type's name, as an error about a value names it (`"LocalMode"`); a front end puts
    /// the name of its own flag or argument in its place.
    const WHAT: &'static str;

    /// Every value, in the order a front end lists them.
    const ALL: &'static [Self];

    /// The value's name.
    fn name(self) -> &'static str;

    /// The value named `text` (exactly one of the [`Named::name`]s of [`Named::ALL`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] on [`OPTIONS`] at [`Named::WHAT`], naming `text` and listing the
    /// names ([`expected`]).
    fn parse(text: &str) -> Result<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    OPTIONS,
                    Self::WHAT,
                    format!("{}: {}", crate::text::quoted(text), expected::<Self>()),
                )
            })
    }
}

/// "expected one of \"a\", \"b\"": the names of `N`'s values, for messages.
pub fn expected<N: Named>() -> String {
    let names: Vec<String> = N::ALL.iter().map(|v| format!("{:?}", v.name())).collect();
    format!("expected one of {}", names.join(", "))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every name of `N` reads back as its value, names are distinct, and an unknown name is
    /// refused with a message naming it and listing every name.
    pub(crate) fn names_round_trip<N: Named + std::fmt::Debug>() {
        assert!(!N::ALL.is_empty());
        for &v in N::ALL {
            assert_eq!(N::parse(v.name()).unwrap(), v, "{}", v.name());
        }
        let mut names: Vec<&str> = N::ALL.iter().map(|v| v.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), N::ALL.len(), "distinct names");
        let e = N::parse("no such name").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: \"no such name\": expected one of ", N::WHAT)),
            "{e}"
        );
        for &v in N::ALL {
            assert!(e.contains(&format!("{:?}", v.name())), "{e}");
        }
    }

    /// Every name of `N` is its serde name too (a map's and a report's spelling).
    fn names_are_the_serde_names<
        N: Named + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
    >() {
        for &v in N::ALL {
            let json = format!("{:?}", v.name());
            assert_eq!(serde_json::to_string(&v).unwrap(), json);
            assert_eq!(serde_json::from_str::<N>(&json).unwrap(), v);
        }
    }

    #[test]
    fn backends_read_their_names() {
        names_round_trip::<crate::gpu::Backend>();
        names_are_the_serde_names::<crate::gpu::Backend>();
    }

    #[test]
    fn local_modes_read_their_names() {
        names_round_trip::<crate::local::LocalMode>();
    }

    #[test]
    fn local_backends_read_their_names() {
        names_round_trip::<crate::local::LocalBackend>();
    }

    #[test]
    fn models_read_their_names() {
        names_round_trip::<crate::params::Model>();
        names_are_the_serde_names::<crate::params::Model>();
    }

    #[test]
    fn speed_laws_read_their_names() {
        names_round_trip::<crate::params::SpeedLaw>();
        names_are_the_serde_names::<crate::params::SpeedLaw>();
    }

    #[test]
    fn orders_read_their_numbers() {
        names_round_trip::<crate::eikonal::Order>();
        assert_eq!(
            crate::eikonal::Order::parse("2").unwrap(),
            crate::eikonal::Order::Second
        );
    }

    #[test]
    fn frame_fields_read_their_names() {
        names_round_trip::<crate::run::draw::FrameField>();
    }

    #[test]
    fn trajectory_formats_read_their_names() {
        names_round_trip::<crate::run::output::TrajectoryFormat>();
    }

    #[test]
    fn colormaps_read_their_names() {
        names_round_trip::<crate::export::Colormap>();
        assert_eq!(
            crate::export::Colormap::parse("ylorrd").unwrap(),
            crate::export::Colormap::YellowOrangeRed
        );
    }
}
