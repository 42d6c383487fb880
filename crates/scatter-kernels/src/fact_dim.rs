//! Dimensions that may be unknown: what the shape rules need of a dim, so
//! that one rule serves the plans (exact `usize` shapes, at run time) and a
//! host's load-time typing (symbolic dims, some unknown until run time),
//! with one message for one mistake.
//!
//! A rule refuses only what is *known* to be wrong: with `usize` every dim
//! is known and the rule is exact; with a host's symbolic dim, what is not
//! known waits for the run, where the same rule sees `usize` again.

use std::fmt;

/// A dimension as the shape rules see it. `usize` is one (exact); a host
/// implements it for its symbolic dims (tract's `TDim` in the plugin).
///
/// `Display` is how a message shows the dim: `3`, or a symbol such as `N`.
pub trait FactDim: fmt::Display {
    /// The value, when known.
    fn known(&self) -> Option<usize>;
    /// True when `self != other` is known.
    fn known_ne(&self, other: &Self) -> bool;
    /// True when `self > other` is known.
    fn known_gt(&self, other: &Self) -> bool;
}

impl FactDim for usize {
    fn known(&self) -> Option<usize> {
        Some(*self)
    }
    fn known_ne(&self, other: &usize) -> bool {
        self != other
    }
    fn known_gt(&self, other: &usize) -> bool {
        self > other
    }
}

/// True when shapes `a` and `b` are known to differ: in rank, or in a dim.
pub(crate) fn known_ne_shape<'d, D: FactDim + 'd>(
    a: impl Iterator<Item = &'d D> + Clone,
    b: impl Iterator<Item = &'d D> + Clone,
) -> bool {
    a.clone().count() != b.clone().count() || a.zip(b).any(|(a, b)| a.known_ne(b))
}

/// A shape as an error shows it, `[2, 3]` or `[N, 3]`: each dim's
/// `Display`, comma-separated in brackets (for `usize` dims, exactly the
/// `Debug` form of a `Vec<usize>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dims(Vec<String>);

impl Dims {
    /// The shape `dims`, as messages show it.
    pub fn of<D: fmt::Display>(dims: impl IntoIterator<Item = D>) -> Dims {
        Dims(dims.into_iter().map(|d| d.to_string()).collect())
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.0.len()
    }
}

impl From<&[usize]> for Dims {
    fn from(shape: &[usize]) -> Dims {
        Dims::of(shape)
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.0.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_concrete_shape_shows_as_a_vec_of_usize_debugs() {
        let shape: &[usize] = &[2, 3];
        assert_eq!(Dims::from(shape).to_string(), format!("{shape:?}"));
        assert_eq!(Dims::of(Vec::<usize>::new()).to_string(), "[]");
    }

    /// A host's dim: a number or a symbol.
    enum Sym {
        Val(usize),
        Name(&'static str),
    }

    impl fmt::Display for Sym {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Sym::Val(v) => write!(f, "{v}"),
                Sym::Name(n) => f.write_str(n),
            }
        }
    }

    impl FactDim for Sym {
        fn known(&self) -> Option<usize> {
            match self {
                Sym::Val(v) => Some(*v),
                Sym::Name(_) => None,
            }
        }
        fn known_ne(&self, other: &Sym) -> bool {
            matches!((self.known(), other.known()), (Some(a), Some(b)) if a != b)
        }
        fn known_gt(&self, other: &Sym) -> bool {
            matches!((self.known(), other.known()), (Some(a), Some(b)) if a > b)
        }
    }

    #[test]
    fn a_rule_on_symbolic_dims_reads_as_on_numbers_with_the_symbol_shown() {
        use crate::{ElementsPlan, NdPlan};
        use Sym::{Name, Val};
        let sym = ElementsPlan::check_shapes(&[Name("N"), Val(3)], &[Val(3)], &[Val(3)], Some(0))
            .unwrap_err()
            .to_string();
        let num = ElementsPlan::new(&[4, 3], &[3], &[3], 0)
            .unwrap_err()
            .to_string();
        assert_eq!(sym.replace("[N, 3]", "[4, 3]"), num);
        assert!(sym.contains("[N, 3]"), "{sym}");
        // What is not known waits: an unknown dim is never "greater".
        assert_eq!(
            ElementsPlan::check_shapes(
                &[Val(3), Name("N")],
                &[Val(2), Val(9)],
                &[Val(2), Val(9)],
                Some(0)
            ),
            Ok(Some(0))
        );
        // ScatterND's rules on updates wait for a known tuple length.
        assert_eq!(
            NdPlan::check_shapes(&[Val(3)], &[Val(2), Name("K")], &[Val(7)]),
            Ok(None)
        );
    }

    #[test]
    fn usize_dims_are_always_known() {
        assert_eq!(3usize.known(), Some(3));
        assert!(3usize.known_ne(&4));
        assert!(!3usize.known_ne(&3));
        assert!(4usize.known_gt(&3));
        assert!(!3usize.known_gt(&3));
    }
}
