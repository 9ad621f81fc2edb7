//! The `context` module (Context Packages, knowledge publications, Group Snapshots, §13.3 and
//! §7.4) for the JavaScript backends: the arguments are the JSON object of
//! `missionweaveprotocol_agent::context::call`, which reads and checks them; a signing
//! method takes the caller's key as `keyId` and seed, as `sign` does.

use missionweaveprotocol::crypto::{Signer, SigningKey};
use missionweaveprotocol::json::parse;
use missionweaveprotocol_agent::context;

use crate::envelope::{Failure, finish};

/// `contextCall(method, args, keyId?, seed?)`: the envelope of `context::call`.
pub fn call(method: &str, args: &str, key: Option<(&str, &[u8])>) -> String {
    let outcome = (|| {
        let args = parse(args.as_bytes())
            .map_err(|e| Failure::argument(format!("context arguments: {e}")))?;
        let key = match key {
            Some((key_id, seed)) => {
                let seed: &[u8; 32] = seed
                    .try_into()
                    .map_err(|_| Failure::argument("the signing seed must be exactly 32 bytes"))?;
                Some(SigningKey::from_seed(key_id, seed))
            }
            None => None,
        };
        context::call(method, &args, key.as_ref().map(|k| k as &dyn Signer))
            .map_err(|e| Failure::error(&e))
    })();
    finish(outcome)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::call;

    #[test]
    fn failures_are_envelopes_with_the_context_class() {
        let out = call("publish", "{}", None);
        assert!(out.contains(r#""class":"ContextPackageError""#), "{out}");
        assert!(out.contains(r#""code":"PROTOCOL_VIOLATION""#), "{out}");
        let out = call("verify", "not json", None);
        assert!(out.contains(r#""error""#), "{out}");
        let out = call("publish", "{}", Some(("k", &[1u8; 3])));
        assert!(out.contains("32 bytes"), "{out}");
    }
}
