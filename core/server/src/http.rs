//! The HTTP side of the listener: read one request head (bounded), route it — `GET /healthz`,
//! `GET /metrics`, the WebSocket upgrade on `/ws`, the page's files under `/app/`
//! ([`crate::app_files`]) — and answer the plain requests. The head's
//! bytes are given back to the WebSocket handshake through [`Rewind`].

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Largest request head read (request line and headers).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The WebSocket path (the reference's route).
pub const WS_PATH: &str = "/ws";

/// The control-plane path: `POST` one signed human Command (`control.rs`).
pub const CONTROL_PATH: &str = "/control";

/// Where a request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /healthz`.
    Health,
    /// `GET /metrics`.
    Metrics,
    /// A WebSocket upgrade on [`WS_PATH`].
    WebSocket,
    /// `GET /app` or `GET /app/…`: the page's static files ([`crate::app_files`]).
    App,
    /// `POST /control`: one signed human Command relayed to the Core (`control.rs`).
    Control,
    /// Anything else on a known path with another method.
    MethodNotAllowed,
    /// An unknown path, or `/ws` without an upgrade.
    NotFound,
    /// Not an HTTP/1.1 request head.
    BadRequest,
}

/// A stream that first yields `prefix` (bytes already read), then the inner stream.
#[derive(Debug)]
pub struct Rewind<S> {
    prefix: Vec<u8>,
    offset: usize,
    inner: S,
}

impl<S> Rewind<S> {
    /// `inner`, with `prefix` read again first.
    pub fn new(prefix: Vec<u8>, inner: S) -> Self {
        Self {
            prefix,
            offset: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.offset < self.prefix.len() {
            let rest = &self.prefix[self.offset..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            self.offset += n;
            if self.offset == self.prefix.len() {
                self.prefix = Vec::new();
                self.offset = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Reads until the end of the request head (`\r\n\r\n`), at most [`MAX_HEAD_BYTES`]. Returns
/// every byte read (the head and anything after it). `None`: the peer closed or sent too much.
pub async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        let searched_from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if buf[searched_from..].windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(Some(buf));
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
    }
}

/// Routes a request head.
pub fn route(head: &[u8]) -> Route {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Route::BadRequest,
    }
    let path = request.path.unwrap_or("").split('?').next().unwrap_or("");
    let is_get = request.method == Some("GET");
    let is_post = request.method == Some("POST");
    let upgrade = request.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("upgrade")
            && std::str::from_utf8(h.value)
                .is_ok_and(|v| v.trim().eq_ignore_ascii_case("websocket"))
    });
    match path {
        "/healthz" if is_get => Route::Health,
        "/metrics" if is_get => Route::Metrics,
        WS_PATH if is_get && upgrade => Route::WebSocket,
        p if is_get && (p == "/app" || p.starts_with("/app/")) => Route::App,
        CONTROL_PATH if is_post => Route::Control,
        "/healthz" | "/metrics" | CONTROL_PATH => Route::MethodNotAllowed,
        p if p == "/app" || p.starts_with("/app/") => Route::MethodNotAllowed,
        _ => Route::NotFound,
    }
}

/// The request target (path and query) of a complete request head.
pub fn target(head: &[u8]) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => request.path.map(str::to_owned),
        _ => None,
    }
}

/// Writes a complete response with `body` bytes and the extra `headers`, then closes the
/// stream.
pub async fn respond_bytes<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await?;
    stream.shutdown().await
}

/// The `content-length` of a request head and where its body starts in `head` (the bytes
/// [`read_head`] returned). `None`: no or an unreadable `content-length` (chunked bodies are
/// not read).
pub fn body_start(head: &[u8]) -> Option<(usize, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(start)) = request.parse(head) else {
        return None;
    };
    let length = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .and_then(|v| v.trim().parse().ok())?;
    Some((length, start))
}

/// Writes a complete response and closes the stream.
pub async fn respond<S: AsyncWrite + Unpin>(
    stream: &mut S,
    status: &str,
    content_type: &str,
    body: &str,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.flush().await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let ws =
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert_eq!(route(ws), Route::WebSocket);
        assert_eq!(
            route(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
            Route::Health
        );
        assert_eq!(route(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n"), Route::Metrics);
        assert_eq!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Route::MethodNotAllowed
        );
        assert_eq!(route(b"GET /ws HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(
            route(b"POST /control HTTP/1.1\r\ncontent-length: 2\r\n\r\n"),
            Route::Control
        );
        assert_eq!(
            route(b"GET /control HTTP/1.1\r\n\r\n"),
            Route::MethodNotAllowed
        );
        assert_eq!(route(b"GET / HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(route(b"GET /app HTTP/1.1\r\n\r\n"), Route::App);
        assert_eq!(
            route(b"GET /app/page/approve.html?g=1 HTTP/1.1\r\n\r\n"),
            Route::App
        );
        assert_eq!(route(b"GET /application HTTP/1.1\r\n\r\n"), Route::NotFound);
        assert_eq!(
            route(b"POST /app/x.html HTTP/1.1\r\n\r\n"),
            Route::MethodNotAllowed
        );
        assert_eq!(
            target(b"GET /app/a.html?x=1 HTTP/1.1\r\n\r\n").as_deref(),
            Some("/app/a.html?x=1")
        );
        assert_eq!(route(b"\x16\x03\x01garbage\r\n\r\n"), Route::BadRequest);
    }
}
