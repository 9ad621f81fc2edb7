//! The bounded outbound queue of one connection (§17.3: "Servers MUST apply bounded buffering
//! and per-Group backpressure").
//!
//! Two budgets share one FIFO, so frames leave in the order they were decided:
//!
//! - **data**: the `EVENT` frames of subscriptions, each tagged with its Group so the Group's
//!   share is given back when the host takes the frame (`delivery.rs` decides what enters);
//! - **replies**: everything answering an input (HELLO, ERROR, PING, the Events of the
//!   connection's own Commands outside its subscriptions) and the notices of delivery
//!   (`BACKPRESSURE`, `CURSOR_TOO_OLD`). Their budget decides `Connection::wants_input`.

use std::collections::VecDeque;
use std::sync::Arc;

/// Which budget a queued frame counts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Class {
    /// A subscription's Event, in its Group's share.
    Data(Arc<str>),
    /// A reply or notice.
    Reply,
}

/// One queued frame.
#[derive(Debug)]
pub(crate) struct Queued {
    pub bytes: Vec<u8>,
    pub class: Class,
}

/// The queue and its counters.
#[derive(Debug, Default)]
pub(crate) struct Outbound {
    frames: VecDeque<Queued>,
    pub data_frames: usize,
    pub data_bytes: usize,
    pub reply_frames: usize,
    pub reply_bytes: usize,
}

impl Outbound {
    pub fn push_data(&mut self, group: Arc<str>, mut bytes: Vec<u8>) {
        // A queued frame holds exactly its bytes (the memory bound counts lengths).
        bytes.shrink_to_fit();
        self.data_frames += 1;
        self.data_bytes += bytes.len();
        self.frames.push_back(Queued {
            bytes,
            class: Class::Data(group),
        });
    }

    pub fn push_reply(&mut self, mut bytes: Vec<u8>) {
        bytes.shrink_to_fit();
        self.reply_frames += 1;
        self.reply_bytes += bytes.len();
        self.frames.push_back(Queued {
            bytes,
            class: Class::Reply,
        });
    }

    pub fn pop(&mut self) -> Option<Queued> {
        let queued = self.frames.pop_front()?;
        match queued.class {
            Class::Data(_) => {
                self.data_frames -= 1;
                self.data_bytes -= queued.bytes.len();
            }
            Class::Reply => {
                self.reply_frames -= 1;
                self.reply_bytes -= queued.bytes.len();
            }
        }
        Some(queued)
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }
}
