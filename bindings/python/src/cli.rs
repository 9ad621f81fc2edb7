//! The `missionweaveprotocol-conformance` console script: the Rust command
//! (`missionweaveprotocol_cli::main_with_args`) writing to Python text streams, so the script
//! and the binary share options, output and exit statuses, and `sys.stdout` redirection and
//! capture keep working.

use std::ffi::OsString;
use std::io;

use pyo3::exceptions::PyBrokenPipeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::{convert, errors};

/// A Python text stream (`write(str)`, `flush()`) as `io::Write`. Whole lines are handed over,
/// so a multi-byte character is never split across two `write` calls.
pub(crate) struct PyStream {
    stream: Py<PyAny>,
    pending: Vec<u8>,
}

/// A closed pipe (`BrokenPipeError`) stays `BrokenPipe`, which the command treats as the quiet
/// end of output; anything else is an I/O error with Python's message.
fn io_error(py: Python<'_>, error: &PyErr) -> io::Error {
    if error.is_instance_of::<PyBrokenPipeError>(py) {
        io::ErrorKind::BrokenPipe.into()
    } else {
        io::Error::other(error.to_string())
    }
}

impl PyStream {
    pub(crate) fn new(stream: Py<PyAny>) -> Self {
        Self {
            stream,
            pending: Vec::new(),
        }
    }

    fn call(&self, method: &str, text: Option<&str>) -> io::Result<()> {
        Python::attach(|py| {
            let result = match text {
                Some(text) => self.stream.call_method1(py, method, (text,)),
                None => self.stream.call_method0(py, method),
            };
            result.map(drop).map_err(|error| io_error(py, &error))
        })
    }

    fn send(&mut self, upto: usize) -> io::Result<()> {
        if upto == 0 {
            return Ok(());
        }
        let bytes: Vec<u8> = self.pending.drain(..upto).collect();
        self.call("write", Some(&String::from_utf8_lossy(&bytes)))
    }
}

impl io::Write for PyStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(last) = self.pending.iter().rposition(|byte| *byte == b'\n') {
            self.send(last + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send(self.pending.len())?;
        self.call("flush", None)
    }
}

/// Command-line arguments from a Python sequence of `str` (not one `str`). OsString: a
/// non-UTF-8 path arrives surrogate-escaped and reaches the filesystem unchanged, as it does
/// through the binary.
pub(crate) fn os_args(py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<Vec<OsString>> {
    let invalid = |value: &Bound<'_, PyAny>| {
        errors::invalid_input(
            py,
            format!(
                "args must be a sequence of str, not {}",
                convert::type_name(value)
            ),
        )
    };
    if args.is_instance_of::<PyString>() {
        return Err(invalid(args));
    }
    args.try_iter()
        .map_err(|_| invalid(args))?
        .map(|item| {
            let item = item?;
            if item.is_instance_of::<PyString>() {
                item.extract::<OsString>().map_err(|_| invalid(&item))
            } else {
                Err(invalid(&item))
            }
        })
        .collect()
}

/// Runs `missionweaveprotocol-conformance` with `args` (without the program name), writing the
/// report to the text stream `stdout` and errors to `stderr`; returns the exit status. The GIL
/// is released while the bundles run.
#[pyfunction]
pub fn run_cli(
    py: Python<'_>,
    args: &Bound<'_, PyAny>,
    stdout: Py<PyAny>,
    stderr: Py<PyAny>,
) -> PyResult<u8> {
    let args = os_args(py, args)?;
    let (mut out, mut err) = (PyStream::new(stdout), PyStream::new(stderr));
    Ok(py.detach(|| missionweaveprotocol_cli::main_with_args(args, &mut out, &mut err)))
}
