//! Standard output with a reader that may go away: once the pipe is closed (EPIPE, e.g.
//! `| head -1`), further output is dropped quietly instead of failing the run.

use std::io::{self, Write};

use crate::cli_error::CliError;

/// A line writer that treats a closed pipe as the end of output.
pub(crate) struct Output<'w> {
    writer: &'w mut dyn Write,
    closed: bool,
}

impl<'w> Output<'w> {
    pub(crate) fn new(writer: &'w mut dyn Write) -> Self {
        Self {
            writer,
            closed: false,
        }
    }

    fn attempt(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        match write(self.writer) {
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            result => result.map_err(CliError::Output),
        }
    }

    /// Writes `text` and a newline.
    pub(crate) fn line(&mut self, text: &str) -> Result<(), CliError> {
        self.attempt(|writer| writeln!(writer, "{text}"))
    }

    /// Writes `text` as it is.
    pub(crate) fn text(&mut self, text: &str) -> Result<(), CliError> {
        self.attempt(|writer| writer.write_all(text.as_bytes()))
    }

    /// Flushes what was written so far.
    pub(crate) fn flush(&mut self) -> Result<(), CliError> {
        self.attempt(|writer| writer.flush())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Accepts `budget` writes, then fails every write with `kind`.
    struct Failing {
        budget: usize,
        kind: io::ErrorKind,
        written: Vec<u8>,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.budget == 0 {
                return Err(self.kind.into());
            }
            self.budget -= 1;
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_output_quietly() {
        let mut sink = Failing {
            budget: 2,
            kind: io::ErrorKind::BrokenPipe,
            written: Vec::new(),
        };
        let mut output = Output::new(&mut sink);
        output.line("one").unwrap();
        output.line("two").unwrap();
        output.line("three").unwrap();
        output.line("four").unwrap();
        assert!(output.closed);
        output.flush().unwrap();
        assert_eq!(sink.written, b"one\n");
    }

    #[test]
    fn other_write_errors_are_reported() {
        let mut sink = Failing {
            budget: 0,
            kind: io::ErrorKind::StorageFull,
            written: Vec::new(),
        };
        let mut output = Output::new(&mut sink);
        let error = output.line("one").unwrap_err();
        assert!(matches!(&error, CliError::Output(e) if e.kind() == io::ErrorKind::StorageFull));
    }
}
