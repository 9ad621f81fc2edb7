//! `Engine::message`: a Message in its latest effective form (§9).

use missionweaveprotocol::crypto::Signer;

use super::core::Engine;
use crate::error::EngineError;
use crate::events::EventIdSource;
use crate::message::aggregate::StoredMessage;
use crate::store::Store;

impl<S: Store, G: Signer, I: EventIdSource> Engine<S, G, I> {
    /// Message `message_id` of Group `group_id` in its latest effective form, if stored.
    pub fn message(
        &self,
        group_id: &str,
        message_id: &str,
    ) -> Result<Option<StoredMessage>, EngineError> {
        StoredMessage::read(self.store(), group_id, message_id)
    }
}
