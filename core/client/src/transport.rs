//! The byte pipe: TCP, TLS 1.3 (rustls, the `ring` provider, the caller's roots), the
//! WebSocket handshake (tokio-tungstenite). Nothing here knows a frame.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::ProtocolVersion;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::error::ClientError;
use crate::options::{ClientLimits, TlsOptions};

/// A connected WebSocket.
pub(crate) type Ws = WebSocketStream<Stream>;

/// Where to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub url: String,
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

impl Endpoint {
    /// `wss://host[:port][/path]` or `ws://…`.
    pub fn parse(url: &str) -> Result<Self, ClientError> {
        let invalid = || ClientError::InvalidUrl(url.to_owned());
        let (tls, rest) = if let Some(rest) = url.strip_prefix("wss://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("ws://") {
            (false, rest)
        } else {
            return Err(invalid());
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return Err(invalid());
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']').ok_or_else(invalid)?;
            let port = match after.strip_prefix(':') {
                Some(port) => port.parse().map_err(|_| invalid())?,
                None if after.is_empty() => default_port,
                None => return Err(invalid()),
            };
            (host.to_owned(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host.to_owned(), port.parse().map_err(|_| invalid())?),
                None => (authority.to_owned(), default_port),
            }
        };
        if host.is_empty() {
            return Err(invalid());
        }
        Ok(Self {
            url: url.to_owned(),
            host,
            port,
            tls,
        })
    }
}

/// The TLS 1.3-only rustls client configuration over `roots`, on the `ring` provider.
pub(crate) fn tls_config(
    tls: &TlsOptions,
) -> Result<Option<Arc<rustls::ClientConfig>>, ClientError> {
    let Some(roots) = &tls.roots else {
        return Ok(None);
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| ClientError::Tls(e.to_string()))?
        .with_root_certificates(Arc::clone(roots))
        .with_no_client_auth();
    Ok(Some(Arc::new(config)))
}

/// A plain or TLS socket.
#[derive(Debug)]
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// TCP, TLS 1.3 when `wss://`, and the WebSocket handshake, within `connect_timeout`.
pub(crate) async fn open(
    endpoint: &Endpoint,
    tls: &TlsOptions,
    tls_config: Option<&Arc<rustls::ClientConfig>>,
    limits: &ClientLimits,
) -> Result<Ws, ClientError> {
    if !endpoint.tls && !tls.allow_plaintext {
        return Err(ClientError::PlaintextNotAllowed);
    }
    let config = match (endpoint.tls, tls_config) {
        (true, None) => return Err(ClientError::NoTrustRoots),
        (true, Some(config)) => Some(Arc::clone(config)),
        (false, _) => None,
    };
    tokio::time::timeout(limits.connect_timeout, open_inner(endpoint, config, limits))
        .await
        .map_err(|_| ClientError::Timeout("connect"))?
}

async fn open_inner(
    endpoint: &Endpoint,
    tls: Option<Arc<rustls::ClientConfig>>,
    limits: &ClientLimits,
) -> Result<Ws, ClientError> {
    let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
        .await
        .map_err(|e| ClientError::Io(e.to_string()))?;
    tcp.set_nodelay(true)
        .map_err(|e| ClientError::Io(e.to_string()))?;
    let stream = match tls {
        None => Stream::Plain(tcp),
        Some(config) => {
            let name = ServerName::try_from(endpoint.host.clone())
                .map_err(|e| ClientError::InvalidUrl(format!("{}: {e}", endpoint.url)))?;
            let tls = TlsConnector::from(config)
                .connect(name, tcp)
                .await
                .map_err(|e| ClientError::Tls(e.to_string()))?;
            // The configuration offers nothing else; checked anyway (§17.1).
            if tls.get_ref().1.protocol_version() != Some(ProtocolVersion::TLSv1_3) {
                return Err(ClientError::Tls(
                    "the server did not negotiate TLS 1.3".into(),
                ));
            }
            Stream::Tls(Box::new(tls))
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(limits.max_frame_bytes))
        .max_frame_size(Some(limits.max_frame_bytes));
    let (ws, _response) =
        tokio_tungstenite::client_async_with_config(endpoint.url.as_str(), stream, Some(config))
            .await
            .map_err(|e| ClientError::WebSocket(e.to_string()))?;
    Ok(ws)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Endpoint;

    #[test]
    fn urls() {
        let e = Endpoint::parse("wss://example.test:9443/mwp").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.tls),
            ("example.test", 9443, true)
        );
        let e = Endpoint::parse("ws://[::1]:8080").unwrap();
        assert_eq!((e.host.as_str(), e.port, e.tls), ("::1", 8080, false));
        let e = Endpoint::parse("wss://localhost").unwrap();
        assert_eq!(e.port, 443);
        for bad in [
            "http://x",
            "wss://",
            "wss://:1",
            "wss://a:b",
            "wss://u@h",
            "wss://[::1",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
