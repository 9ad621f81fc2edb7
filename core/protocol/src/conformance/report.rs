//! Conformance results.

use crate::json::{Object, Value};

/// The three bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleKind {
    Structural,
    Cryptography,
    Admission,
}

impl BundleKind {
    /// All bundles, in report order.
    pub const ALL: [BundleKind; 3] = [Self::Structural, Self::Cryptography, Self::Admission];

    /// The bundle name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Structural => "structural",
            Self::Cryptography => "cryptography",
            Self::Admission => "admission",
        }
    }

    /// What one evaluation is called in summaries.
    pub const fn noun(self) -> &'static str {
        match self {
            Self::Structural => "structural vectors",
            Self::Cryptography => "cryptography evaluations",
            Self::Admission => "admission evaluations",
        }
    }

    /// The bundle's manifest, relative to the bundle root: the file whose absence means the
    /// bundle is missing (§22).
    pub const fn manifest_path(self) -> &'static str {
        match self {
            Self::Structural => super::structural::STRUCTURAL_MANIFEST,
            Self::Cryptography => super::cryptography::MANIFEST,
            Self::Admission => super::admission::MANIFEST,
        }
    }

    /// Parses a bundle name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// One failed evaluation (or a bundle integrity problem, with id `integrity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvaluationFailure {
    pub id: String,
    pub message: String,
}

/// The result of one bundle.
#[derive(Debug, Clone)]
pub struct BundleReport {
    pub kind: BundleKind,
    pub total: usize,
    pub passed: usize,
    /// Failed evaluations and integrity problems.
    pub failures: Vec<EvaluationFailure>,
    /// Per-evaluation outcomes `(id, actual stage or "valid"/"invalid", passed)`.
    pub outcomes: Vec<(String, String, bool)>,
    /// Bundle facts: artifact digest, profile, counts.
    pub facts: Vec<(String, String)>,
}

impl BundleReport {
    pub(crate) fn new(kind: BundleKind) -> Self {
        Self {
            kind,
            total: 0,
            passed: 0,
            failures: Vec::new(),
            outcomes: Vec::new(),
            facts: Vec::new(),
        }
    }

    pub(crate) fn integrity(&mut self, message: impl Into<String>) {
        self.failures.push(EvaluationFailure {
            id: "integrity".into(),
            message: message.into(),
        });
    }

    pub(crate) fn record(&mut self, id: &str, actual: &str, result: Result<(), String>) {
        self.total += 1;
        let passed = result.is_ok();
        if let Err(message) = result {
            self.failures.push(EvaluationFailure {
                id: id.to_owned(),
                message,
            });
        } else {
            self.passed += 1;
        }
        self.outcomes
            .push((id.to_owned(), actual.to_owned(), passed));
    }

    /// Whether every evaluation passed and the bundle's integrity held.
    pub fn ok(&self) -> bool {
        self.failures.is_empty() && self.passed == self.total && self.total > 0
    }

    /// `58/58 structural vectors passed`.
    pub fn summary(&self) -> String {
        format!("{}/{} {} passed", self.passed, self.total, self.kind.noun())
    }

    /// The report as a JSON object (`passed`, `total`, `ok`, `failures`, `facts`).
    pub fn to_value(&self) -> Value {
        let mut object = Object::new();
        object.insert(
            "passed",
            Value::Number(crate::json::Number::from_u64(self.passed as u64)),
        );
        object.insert(
            "total",
            Value::Number(crate::json::Number::from_u64(self.total as u64)),
        );
        object.insert("ok", Value::Bool(self.ok()));
        let failures = self
            .failures
            .iter()
            .map(|failure| {
                let mut item = Object::new();
                item.insert("id", Value::string(failure.id.clone()));
                item.insert("message", Value::string(failure.message.clone()));
                Value::Object(item)
            })
            .collect();
        object.insert("failures", Value::Array(failures));
        let mut facts = Object::new();
        for (name, value) in &self.facts {
            facts.insert(name, Value::string(value.clone()));
        }
        object.insert("facts", Value::Object(facts));
        Value::Object(object)
    }
}

/// The results of every bundle run.
#[derive(Debug, Clone)]
pub struct ConformanceReport {
    pub reports: Vec<BundleReport>,
}

impl ConformanceReport {
    /// Whether all bundles passed.
    pub fn ok(&self) -> bool {
        !self.reports.is_empty() && self.reports.iter().all(BundleReport::ok)
    }

    /// `{"ok": …, "bundles": {"structural": {...}, …}}`.
    pub fn to_value(&self) -> Value {
        let mut bundles = Object::new();
        for report in &self.reports {
            bundles.insert(report.kind.as_str(), report.to_value());
        }
        let mut object = Object::new();
        object.insert("ok", Value::Bool(self.ok()));
        object.insert("bundles", Value::Object(bundles));
        Value::Object(object)
    }
}
