//! Agent authentication (§6.3): the core's `auth` module for `missionweaveprotocol.auth`.
//! Conversions only; a refusal is the core's `AuthError`, raised by the package's one error
//! mapping (`errors::describe`: class `AuthenticationError`, the core's wire code and reason).
//! The registry is shared (one `Arc<Mutex<…>>`) between the Python `AgentKeyRegistry` and
//! every `SessionAuthority` built on it, as in the reference, where later registrations and
//! revocations are seen by the authority.

use std::sync::{Arc, Mutex, MutexGuard};

use missionweaveprotocol_agent::auth::{
    AgentKeyRegistry as CoreRegistry, Challenge, KeyValidity, SessionAuthority as CoreAuthority,
    SessionConfig, SessionGrant, default_agent_key_id,
};
use missionweaveprotocol_kernel::resources::MAX_SAFE_INTEGER;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::convert::{self, bytes_arg, opt_str_arg, str_arg};
use crate::errors;
use crate::instant::{millis_arg, opt_millis_arg, to_datetime};

fn locked<'a, T>(py: Python<'_>, mutex: &'a Mutex<T>) -> PyResult<MutexGuard<'a, T>> {
    // A poisoned lock means a panic (a bug) interrupted an update: refuse rather than guess.
    mutex.lock().map_err(|_| {
        errors::invalid_input(py, "the authentication state is unusable after a panic")
    })
}

/// `default_agent_key_id(agent_id)`.
#[pyfunction]
pub fn auth_default_agent_key_id(py: Python<'_>, agent_id: &Bound<'_, PyAny>) -> PyResult<String> {
    default_agent_key_id(&str_arg(py, agent_id, "agent_id")?)
        .map_err(|e| errors::auth_error(py, &e))
}

/// The canonical challenge transcript (RFC 8785 bytes of the seven members).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn auth_challenge_signing_bytes<'py>(
    py: Python<'py>,
    protocol_version: &Bound<'py, PyAny>,
    challenge_id: &Bound<'py, PyAny>,
    agent_id: &Bound<'py, PyAny>,
    key_id: &Bound<'py, PyAny>,
    client_nonce: &Bound<'py, PyAny>,
    server_nonce: &Bound<'py, PyAny>,
    expires_at: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let challenge = Challenge {
        protocol_version: str_arg(py, protocol_version, "protocol_version")?.into_owned(),
        challenge_id: str_arg(py, challenge_id, "challenge_id")?.into_owned(),
        agent_id: str_arg(py, agent_id, "agent_id")?.into_owned(),
        key_id: str_arg(py, key_id, "key_id")?.into_owned(),
        client_nonce: str_arg(py, client_nonce, "client_nonce")?.into_owned(),
        server_nonce: str_arg(py, server_nonce, "server_nonce")?.into_owned(),
        expires_at: millis_arg(py, expires_at, "expires_at")?,
    };
    let bytes = challenge
        .signing_bytes()
        .map_err(|e| errors::auth_error(py, &e))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The Organization's Agent keys (`missionweaveprotocol.auth.AgentKeyRegistry` wraps it).
#[pyclass(module = "missionweaveprotocol._native", frozen)]
#[derive(Debug, Default)]
pub struct NativeAgentKeyRegistry {
    inner: Arc<Mutex<CoreRegistry>>,
}

#[pymethods]
impl NativeAgentKeyRegistry {
    #[new]
    fn py_new() -> Self {
        Self::default()
    }

    /// Registers 32 public-key bytes for the Agent (default key ID when `key_id` is `None`).
    #[pyo3(signature = (agent_id, public_key, key_id=None, valid_from=None, valid_until=None, revoked_at=None))]
    #[allow(clippy::too_many_arguments)]
    fn register(
        &self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        public_key: &Bound<'_, PyAny>,
        key_id: Option<&Bound<'_, PyAny>>,
        valid_from: Option<&Bound<'_, PyAny>>,
        valid_until: Option<&Bound<'_, PyAny>>,
        revoked_at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        let public_key = bytes_arg(py, public_key, "public_key", false)?;
        let key_id = opt_str_arg(py, key_id, "key_id")?;
        let validity = KeyValidity {
            valid_from: opt_millis_arg(py, valid_from, "valid_from")?,
            valid_until: opt_millis_arg(py, valid_until, "valid_until")?,
            revoked_at: opt_millis_arg(py, revoked_at, "revoked_at")?,
        };
        locked(py, &self.inner)?
            .register(&agent_id, &public_key, key_id.as_deref(), validity)
            .map_err(|e| errors::auth_error(py, &e))
    }

    /// The 32 public-key bytes of the Agent's key valid at `at`.
    #[pyo3(signature = (agent_id, key_id, at))]
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        agent_id: &Bound<'py, PyAny>,
        key_id: Option<&Bound<'py, PyAny>>,
        at: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        let key_id = opt_str_arg(py, key_id, "key_id")?;
        let at = millis_arg(py, at, "at")?;
        let registry = locked(py, &self.inner)?;
        let key = registry
            .resolve(&agent_id, key_id.as_deref(), at)
            .map_err(|e| errors::auth_error(py, &e))?;
        Ok(PyBytes::new(py, key.public_key.as_bytes()))
    }

    /// Whether the bytes are the registered material of the key (constant-time comparison).
    fn matches_registered_public_key(
        &self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        key_id: &Bound<'_, PyAny>,
        public_key_bytes: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        let key_id = str_arg(py, key_id, "key_id")?;
        let bytes = bytes_arg(py, public_key_bytes, "public_key_bytes", false)?;
        Ok(locked(py, &self.inner)?.matches_registered_public_key(&agent_id, &key_id, &bytes))
    }

    /// Revokes the key from `revoked_at` on (the earliest revocation is kept).
    fn revoke(
        &self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        key_id: &Bound<'_, PyAny>,
        revoked_at: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        let key_id = str_arg(py, key_id, "key_id")?;
        let revoked_at = millis_arg(py, revoked_at, "revoked_at")?;
        locked(py, &self.inner)?
            .revoke(&agent_id, &key_id, revoked_at)
            .map_err(|e| errors::auth_error(py, &e))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(locked(py, &self.inner)?.len())
    }
}

fn challenge_tuple<'py>(py: Python<'py>, c: &Challenge) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            c.protocol_version.as_str().into_pyobject(py)?.into_any(),
            c.challenge_id.as_str().into_pyobject(py)?.into_any(),
            c.agent_id.as_str().into_pyobject(py)?.into_any(),
            c.key_id.as_str().into_pyobject(py)?.into_any(),
            c.client_nonce.as_str().into_pyobject(py)?.into_any(),
            c.server_nonce.as_str().into_pyobject(py)?.into_any(),
            to_datetime(py, c.expires_at)?,
        ],
    )
}

fn grant_tuple<'py>(py: Python<'py>, g: &SessionGrant) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            g.agent_id.as_str().into_pyobject(py)?.into_any(),
            g.key_id.as_str().into_pyobject(py)?.into_any(),
            g.protocol_version.as_str().into_pyobject(py)?.into_any(),
            g.session_epoch.into_pyobject(py)?.into_any(),
            to_datetime(py, g.issued_at)?,
            to_datetime(py, g.expires_at)?,
            g.token.as_str().into_pyobject(py)?.into_any(),
        ],
    )
}

/// The core's session lifetimes (`SessionConfig::default()`: the reference's 30 s challenges
/// and 15 min sessions), the defaults of `missionweaveprotocol.auth.SessionAuthority`.
pub fn session_defaults() -> SessionConfig {
    SessionConfig::default()
}

/// Challenges, session tokens and Session Epochs (`missionweaveprotocol.auth.SessionAuthority`
/// wraps it). The secret is never readable from Python; the binding keeps it only to key the
/// twin authority of a `GroupGateway` (`twin`), so tokens of either verify at both.
#[pyclass(module = "missionweaveprotocol._native", frozen)]
pub struct NativeSessionAuthority {
    registry: Arc<Mutex<CoreRegistry>>,
    inner: Mutex<CoreAuthority>,
    secret: Vec<u8>,
    config: SessionConfig,
}

impl core::fmt::Debug for NativeSessionAuthority {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NativeSessionAuthority")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl NativeSessionAuthority {
    /// An authority with the same secret and lifetimes (its own challenges and epochs): the
    /// sans-IO gateway owns its authority, and the Core is the truth of every Session Epoch.
    pub fn twin(&self) -> Result<CoreAuthority, missionweaveprotocol_agent::auth::AuthError> {
        CoreAuthority::new(
            self.secret.clone(),
            self.config,
            Box::new(missionweaveprotocol_host::OsRandom),
        )
    }
}

#[pymethods]
impl NativeSessionAuthority {
    #[new]
    #[pyo3(signature = (registry, secret, *, challenge_ttl_ms, session_ttl_ms, max_pending_challenges=None))]
    fn py_new(
        py: Python<'_>,
        registry: &Bound<'_, PyAny>,
        secret: &Bound<'_, PyAny>,
        challenge_ttl_ms: &Bound<'_, PyAny>,
        session_ttl_ms: &Bound<'_, PyAny>,
        max_pending_challenges: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let registry =
            convert::typed::<NativeAgentKeyRegistry>(py, registry, "registry", "AgentKeyRegistry")?
                .get()
                .inner
                .clone();
        let secret = bytes_arg(py, secret, "secret", false)?.into_owned();
        let config = SessionConfig {
            challenge_ttl_ms: convert::uint_arg(
                py,
                challenge_ttl_ms,
                "challenge_ttl",
                MAX_SAFE_INTEGER,
            )?,
            session_ttl_ms: convert::uint_arg(py, session_ttl_ms, "session_ttl", MAX_SAFE_INTEGER)?,
            max_pending_challenges: match convert::present(max_pending_challenges) {
                Some(v) => convert::count_arg(py, v, "max_pending_challenges")?,
                None => SessionConfig::default().max_pending_challenges,
            },
        };
        let inner = CoreAuthority::new(
            secret.clone(),
            config,
            Box::new(missionweaveprotocol_host::OsRandom),
        )
        .map_err(|e| errors::auth_error(py, &e))?;
        Ok(Self {
            registry,
            inner: Mutex::new(inner),
            secret,
            config,
        })
    }

    /// `(protocol_version, challenge_id, agent_id, key_id, client_nonce, server_nonce,
    /// expires_at)` of a new one-use challenge.
    #[pyo3(signature = (agent_id, key_id, client_nonce, protocol_version, now))]
    fn issue_challenge<'py>(
        &self,
        py: Python<'py>,
        agent_id: &Bound<'py, PyAny>,
        key_id: Option<&Bound<'py, PyAny>>,
        client_nonce: Option<&Bound<'py, PyAny>>,
        protocol_version: &Bound<'py, PyAny>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        let key_id = opt_str_arg(py, key_id, "key_id")?;
        let client_nonce = opt_str_arg(py, client_nonce, "client_nonce")?;
        let protocol_version = str_arg(py, protocol_version, "protocol_version")?;
        let now = millis_arg(py, now, "now")?;
        let registry = locked(py, &self.registry)?;
        let challenge = locked(py, &self.inner)?
            .issue_challenge(
                &registry,
                &agent_id,
                key_id.as_deref(),
                client_nonce.as_deref(),
                &protocol_version,
                now,
            )
            .map_err(|e| errors::auth_error(py, &e))?;
        challenge_tuple(py, &challenge)
    }

    /// `(agent_id, key_id, protocol_version, session_epoch, issued_at, expires_at, token)` of
    /// the session the signed challenge opens (the challenge is spent either way).
    fn open_session<'py>(
        &self,
        py: Python<'py>,
        challenge_id: &Bound<'py, PyAny>,
        signature: &Bound<'py, PyAny>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let challenge_id = str_arg(py, challenge_id, "challenge_id")?;
        let signature = str_arg(py, signature, "signature")?;
        let now = millis_arg(py, now, "now")?;
        let registry = locked(py, &self.registry)?;
        let grant = locked(py, &self.inner)?
            .open_session(&registry, &challenge_id, &signature, now)
            .map_err(|e| errors::auth_error(py, &e))?;
        grant_tuple(py, &grant)
    }

    /// The session a token proves, or `AuthenticationError`.
    fn verify_session<'py>(
        &self,
        py: Python<'py>,
        token: &Bound<'py, PyAny>,
        now: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let token = str_arg(py, token, "token")?;
        let now = millis_arg(py, now, "now")?;
        let registry = locked(py, &self.registry)?;
        let grant = locked(py, &self.inner)?
            .verify_session(&registry, &token, now)
            .map_err(|e| errors::auth_error(py, &e))?;
        grant_tuple(py, &grant)
    }

    /// Adopts the authoritative epoch (never lowers it). With `key_id`, that key must be
    /// registered for the Agent (whatever its validity).
    #[pyo3(signature = (agent_id, authoritative_epoch, key_id=None))]
    fn synchronize_epoch(
        &self,
        py: Python<'_>,
        agent_id: &Bound<'_, PyAny>,
        authoritative_epoch: &Bound<'_, PyAny>,
        key_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        if let Some(key_id) = opt_str_arg(py, key_id, "key_id")? {
            locked(py, &self.registry)?
                .get(&agent_id, Some(&key_id))
                .map_err(|e| errors::auth_error(py, &e))?;
        }
        let epoch = convert::int_arg(
            py,
            authoritative_epoch,
            "authoritative_epoch",
            i64::MIN,
            i64::MAX,
        )?;
        let epoch = u64::try_from(epoch).unwrap_or(0);
        locked(py, &self.inner)?
            .synchronize_epoch(&agent_id, epoch)
            .map_err(|e| errors::auth_error(py, &e))
    }

    /// The Agent's current Session Epoch (0 before its first session).
    fn current_epoch(&self, py: Python<'_>, agent_id: &Bound<'_, PyAny>) -> PyResult<u64> {
        let agent_id = str_arg(py, agent_id, "agent_id")?;
        Ok(locked(py, &self.inner)?.current_epoch(&agent_id))
    }

    /// How many challenges are pending.
    fn pending_challenges(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(locked(py, &self.inner)?.pending_challenges())
    }
}
