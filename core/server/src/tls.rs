//! TLS 1.3 only (§17.1), rustls with the `ring` provider: the server configuration from PEM
//! files, and the throwaway self-signed certificate of `--dev`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};

/// A TLS set-up problem (exit code 1: the files are named by flags but unusable).
#[derive(Debug)]
pub struct TlsError(pub String);

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsError {}

/// The crypto provider every TLS configuration of this crate uses.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration for `certs` and `key`: TLS 1.3 only, no client certificates,
/// ALPN `http/1.1` (the WebSocket upgrade and the two HTTP endpoints).
pub fn server_config(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<ServerConfig>, TlsError> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsError(format!("TLS 1.3 is not available: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError(format!("the certificate and key do not form a pair: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The configuration from a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or
/// SEC1). The key's bytes are never printed.
pub fn from_pem_files(certfile: &Path, keyfile: &Path) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = CertificateDer::pem_file_iter(certfile)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            TlsError(format!(
                "cannot read certificates from {}: {e}",
                certfile.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(TlsError(format!(
            "{} holds no certificate",
            certfile.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(keyfile).map_err(|e| {
        TlsError(format!(
            "cannot read a private key from {}: {e}",
            keyfile.display()
        ))
    })?;
    server_config(certs, key)
}

/// The SHA-256 fingerprint of a DER certificate, `AB:CD:…` (as `openssl x509 -fingerprint
/// -sha256` prints it).
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The `--dev` certificate: self-signed, for `localhost` and `127.0.0.1` (and `::1`), made at
/// start and never reused; its private key stays in memory.
#[derive(Debug)]
pub struct DevCertificate {
    /// Where its PEM was written.
    pub path: PathBuf,
    /// Its SHA-256 fingerprint.
    pub fingerprint: String,
    /// The server configuration using it.
    pub config: Arc<ServerConfig>,
}

/// Makes the `--dev` certificate and writes its PEM (the certificate only) to `path`.
pub fn dev_certificate(path: &Path) -> Result<DevCertificate, TlsError> {
    let names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let certified = rcgen::generate_simple_self_signed(names)
        .map_err(|e| TlsError(format!("cannot generate the development certificate: {e}")))?;
    let pem = certified.cert.pem();
    std::fs::write(path, pem.as_bytes())
        .map_err(|e| TlsError(format!("cannot write {}: {e}", path.display())))?;
    let der = certified.cert.der().clone();
    let key = PrivateKeyDer::try_from(certified.signing_key.serialize_der())
        .map_err(|e| TlsError(format!("the generated key is unusable: {e}")))?;
    let fingerprint = fingerprint(&der);
    let config = server_config(vec![der], key)?;
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    Ok(DevCertificate {
        path,
        fingerprint,
        config,
    })
}
