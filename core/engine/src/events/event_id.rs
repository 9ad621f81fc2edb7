//! Where Event IDs come from: injected, so the engine stays deterministic (two engines fed the
//! same Commands emit byte-identical Events, issue 10).

/// A source of Event IDs (absolute URIs, `common.schema.json#/$defs/id`). Every ID it returns
/// must be unique within the Organization: recipients deduplicate by Event ID (§16).
pub trait EventIdSource {
    /// The next Event ID.
    fn next_event_id(&mut self) -> String;
}

impl<S: EventIdSource + ?Sized> EventIdSource for &mut S {
    fn next_event_id(&mut self) -> String {
        (**self).next_event_id()
    }
}

impl<S: EventIdSource + ?Sized> EventIdSource for Box<S> {
    fn next_event_id(&mut self) -> String {
        (**self).next_event_id()
    }
}

/// Deterministic IDs `<prefix><n>` for n = 1, 2, …: for tests and replayable simulations. The
/// prefix must make the IDs unique across runs (a deployment would use a random or time-ordered
/// UUID source instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequentialEventIds {
    prefix: String,
    next: u64,
}

impl SequentialEventIds {
    /// IDs `<prefix>1`, `<prefix>2`, …; e.g. prefix `urn:missionweaveprotocol:event:test-`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
            next: 1,
        }
    }

    /// How many IDs were handed out.
    pub fn issued(&self) -> u64 {
        self.next - 1
    }
}

impl EventIdSource for SequentialEventIds {
    fn next_event_id(&mut self) -> String {
        let id = format!("{}{}", self.prefix, self.next);
        self.next += 1;
        id
    }
}
