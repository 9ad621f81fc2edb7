//! The scenario DSL: a world to start from, steps that must apply, one act, and what the act
//! must do — emit given Event kinds (each verified), or be refused with a §19 wire code while
//! nothing is appended — plus the watched aggregate's state before and after.
//!
//! ```
//! use missionweaveprotocol::WireCode;
//! use missionweaveprotocol_behavior::scenario::{Scenario, Watch};
//! use missionweaveprotocol_behavior::{payloads, runner, steps};
//!
//! let positive = Scenario::new("work.offer: open → offered")
//!     .given(steps::authorized(payloads::W1))
//!     .when(steps::coordinator("work.offer", payloads::offer(payloads::W1, "r1")))
//!     .watch(Watch::WorkItem(payloads::W1))
//!     .emits(&["work.offer.created"])
//!     .moves("open", "offered");
//! assert!(runner::run_scenario(&positive).passed);
//! ```

use missionweaveprotocol::WireCode;
use missionweaveprotocol_engine::ingress::VerifiedCommand;

use crate::world::{Start, World};

/// Builds one signed, ingress-verified Command against the world as it is at that moment
/// (so it can cite the current Ownership Epoch, lease IDs, revisions).
pub type Build = Box<dyn Fn(&World) -> Result<VerifiedCommand, String>>;

/// An extra assertion on the world after the act.
pub type Check = Box<dyn Fn(&World) -> Result<(), String>>;

/// A setup step: it must apply (its Events are verified like the act's).
pub enum Step {
    Perform(Build),
    /// The clock moves on by this many milliseconds.
    Elapse(u64),
}

/// The act under test.
pub enum Act {
    Perform(Build),
    /// Only time passes (a row whose trigger is not a Command: offer expiry, §10.2 row 5).
    Elapse(u64),
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Perform(_) => f.write_str("Perform(..)"),
            Self::Elapse(ms) => write!(f, "Elapse({ms})"),
        }
    }
}

impl std::fmt::Debug for Act {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Perform(_) => f.write_str("Perform(..)"),
            Self::Elapse(ms) => write!(f, "Elapse({ms})"),
        }
    }
}

/// The aggregate whose state a scenario observes before and after its act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// A Mission's `state` (`none` when absent).
    Mission(&'static str),
    /// A WorkItem's `state` (`none` when absent).
    WorkItem(&'static str),
    /// A Work Proposal's `status` (`none` when absent).
    Proposal(&'static str),
    /// An Agent's Session Epoch (`epoch n`, `none` before its first Session, §6.3).
    Session(&'static str),
    /// An Agent's registered Agent Card (`version n`, `none` when absent).
    AgentCard(&'static str),
    /// A WorkItem's budget account usage (`n tool calls used`, `none` when absent, §12).
    Usage(&'static str),
}

/// What the act must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Applied, emitting exactly these Event kinds in this order, each verified.
    Events(Vec<&'static str>),
    /// Refused with this code, by the engine or at ingress (§6.4 stages, the Organization's
    /// authorizer); every Group head unchanged and no
    /// Organization-scoped Event stored.
    Refused(WireCode),
    /// Nothing is appended (time passing).
    Nothing,
}

/// One scenario. Build with [`Scenario::new`] and the chained methods.
pub struct Scenario {
    pub name: &'static str,
    pub(crate) start: Start,
    pub(crate) given: Vec<Step>,
    pub(crate) act: Option<Act>,
    pub(crate) watch: Option<Watch>,
    pub(crate) expect: Option<Expect>,
    pub(crate) states: Option<(&'static str, &'static str)>,
    pub(crate) checks: Vec<(&'static str, Check)>,
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name)
            .field("start", &self.start)
            .field("steps", &self.given.len())
            .field("watch", &self.watch)
            .field("expect", &self.expect)
            .field("states", &self.states)
            .finish_non_exhaustive()
    }
}

impl Scenario {
    /// A scenario starting from an active Mission ([`Start::ActiveMission`]).
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            start: Start::ActiveMission,
            given: Vec::new(),
            act: None,
            watch: None,
            expect: None,
            states: None,
            checks: Vec::new(),
        }
    }

    /// Starts from `start` instead.
    pub fn from(mut self, start: Start) -> Self {
        self.start = start;
        self
    }

    /// Appends setup steps.
    pub fn given(mut self, steps: Vec<Step>) -> Self {
        self.given.extend(steps);
        self
    }

    /// The act: one Command.
    pub fn when(mut self, build: Build) -> Self {
        self.act = Some(Act::Perform(build));
        self
    }

    /// The act: `ms` milliseconds pass and nothing else happens.
    pub fn when_elapsed(mut self, ms: u64) -> Self {
        self.act = Some(Act::Elapse(ms));
        self.expect = Some(Expect::Nothing);
        self
    }

    pub fn watch(mut self, watch: Watch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// The act applies and emits exactly `kinds`.
    pub fn emits(mut self, kinds: &[&'static str]) -> Self {
        self.expect = Some(Expect::Events(kinds.to_vec()));
        self
    }

    /// The act is refused with `code`; nothing is appended and the watched state is unchanged.
    pub fn refused(mut self, code: WireCode) -> Self {
        self.expect = Some(Expect::Refused(code));
        self
    }

    /// The watched aggregate is in `from` before the act and in `to` after it.
    pub fn moves(mut self, from: &'static str, to: &'static str) -> Self {
        self.states = Some((from, to));
        self
    }

    /// A further assertion after the act.
    pub fn check(
        mut self,
        label: &'static str,
        check: impl Fn(&World) -> Result<(), String> + 'static,
    ) -> Self {
        self.checks.push((label, Box::new(check)));
        self
    }

    /// The expectation, if one was given.
    pub fn expectation(&self) -> Option<&Expect> {
        self.expect.as_ref()
    }
}
