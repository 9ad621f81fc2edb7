//! A native object as a binding class holds it: the core object, or the envelope that says why
//! there is none (its construction was refused, or it was freed). Constructors never throw
//! across the boundary: the wrapper reads `status()` once, and every later call on a refused or
//! freed object answers that envelope. One type, so napi and WebAssembly classes are one line
//! per operation.

use missionweaveprotocol::json::Value;

use crate::envelope::{Failure, finish};

#[derive(Debug, Clone)]
pub struct Held<T>(Result<T, String>);

impl<T> Held<T> {
    /// A construction's outcome: the object, or the refusal as its envelope.
    pub fn made(made: Result<T, Failure>) -> Self {
        Self(made.map_err(|failure| finish(Err(failure))))
    }

    /// A held object.
    pub fn of(value: T) -> Self {
        Self(Ok(value))
    }

    /// No object: `envelope` answers every call.
    pub fn refused(envelope: String) -> Self {
        Self(Err(envelope))
    }

    /// `{"ok":null}`, or the envelope of the refusal.
    pub fn status(&self) -> String {
        match &self.0 {
            Ok(_) => finish(Ok(Value::Null)),
            Err(envelope) => envelope.clone(),
        }
    }

    /// Drops the object now (idempotent); later calls answer the freed envelope of `class`.
    pub fn free(&mut self, class: &str) {
        self.0 = Err(crate::freed(class));
    }

    /// The object, or the envelope every call answers instead.
    pub fn get(&self) -> Result<&T, String> {
        self.0.as_ref().map_err(Clone::clone)
    }

    /// [`Held::get`], mutable.
    pub fn get_mut(&mut self) -> Result<&mut T, String> {
        self.0.as_mut().map_err(|e| e.clone())
    }

    /// `call`'s envelope on the object, or the held envelope.
    pub fn with(&self, call: impl FnOnce(&T) -> String) -> String {
        self.get().map_or_else(|envelope| envelope, call)
    }

    /// [`Held::with`] on the object mutably.
    pub fn with_mut(&mut self, call: impl FnOnce(&mut T) -> String) -> String {
        self.get_mut().map_or_else(|envelope| envelope, call)
    }
}
