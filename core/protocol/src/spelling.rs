//! One spelling list per wire vocabulary: `ALL`, `as_str` and `parse` generated from a single
//! table, so that no binding re-spells an enum (bindings convert with `as_str`/`parse` and test
//! their own host enums against `ALL`).

/// Implements `ALL`, `as_str` and `parse` for a fieldless enum from one table of spellings.
///
/// ```
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// enum Colour { Red, Green }
/// missionweaveprotocol::spelling!(Colour { Red => "red", Green => "green" });
/// assert_eq!(Colour::ALL, [Colour::Red, Colour::Green]);
/// assert_eq!(Colour::parse(Colour::Green.as_str()), Some(Colour::Green));
/// assert_eq!(Colour::parse("blue"), None);
/// ```
#[macro_export]
macro_rules! spelling {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: [$ty; [$(stringify!($variant)),+].len()] = [$($ty::$variant),+];

            /// The one spelling of this value (wire, JSON and every binding).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }

            /// Parses [`as_str`](Self::as_str); `None` for anything else.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }
    };
}
